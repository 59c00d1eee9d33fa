// Random agent schedules (retries, rewinds, malformed tool calls, cut-offs, ...) through v1 and v2, each server
// checked against a model of the protocol and the two payloads compared wherever the model says they must agree.
import { fuzzAgenticParity } from "jest-session-parity";

test("no agent schedule breaks parity between the reference servers", async () => {
  const report = await fuzzAgenticParity({ runs: 12, seed: 7, maxSteps: 8, concurrency: 4 });
  expect(report).toHaveAgenticParity();
});
