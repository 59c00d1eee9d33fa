// The README's example: one scripted weather trajectory through v1 and v2, every sample and the session metadata
// pinned bit for bit in this file's snapshot (servers from the Jest global setup).
import { buildWeatherInputSamples, runAgenticRetryTrajectories } from "../../src/fixture";
import { trajectoryPayload } from "../../src/snapshot";

test("the weather run's training payload is pinned bit for bit", async () => {
  const v1 = await runAgenticRetryTrajectories({ version: "v1", inputSamples: buildWeatherInputSamples(1) });
  const v2 = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(1) });
  expect(trajectoryPayload(v1)).toMatchBitwiseSnapshot("v1");
  expect(trajectoryPayload(v2)).toMatchBitwiseSnapshot("v2");
});
