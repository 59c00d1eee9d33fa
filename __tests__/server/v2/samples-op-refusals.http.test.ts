// The v2 samples op's refusals for bodies the wire cannot carry, and path redaction in every error body it can write.
// Python (miles 31f1ca96) answers these bodies 500 or 422 (listed as deviations in docs/PROTOCOL.md); nothing is lost.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { startSessionServer, type RunningSessionServer } from "../../../src/server/session-server";
import type { ChatMessage } from "../../../src/tokenizer/types";
import { call, collect, createSession, getSession, startV2Harness, turn, type V2Harness } from "./support/harness";

const ROOT = path.resolve(__dirname, "../../..");
const FIXTURES = path.join(ROOT, "__tests__/server/v2/support/hook-fixtures.ts");
const U1: ChatMessage = { role: "user", content: "What is 1+2?" };

let h: V2Harness;
let withPath: RunningSessionServer;

beforeAll(async () => {
  h = await startV2Harness();
  // The hook is named by its absolute path, and it throws an error naming its own absolute path.
  withPath = await startSessionServer({
    version: "v2",
    backendUrl: h.backend.url,
    samplePicker: `${FIXTURES}#explodingWithPath`,
    logger: { warn: () => undefined },
  });
});

afterAll(async () => {
  await withPath.close();
  await h.close();
});

describe.each([
  ["an empty session", false],
  ["a session with a turn", true],
])("samples-op bodies the wire cannot carry, on %s", (_name, withTurn) => {
  // The raw bodies as a client sends them (escapes inside the JSON text).
  test.each([
    // Python: the agent metadata becomes an int (200 on an empty session, 422 from the default post-processor otherwise)
    ['{"metadata": 9007199254740993}', "metadata must be an object, got a number"],
    // Python: json.loads keeps the lone surrogate, encode_samples' UTF-8 encoding raises: 500
    ['{"metadata": {"\\ud800": 1}}', 'a key of metadata ("\\ud800") holds a lone UTF-16 surrogate, which has no UTF-8 form'],
    ['{"metadata": {"k": "\\ud800"}}', "metadata.k holds a lone UTF-16 surrogate, which has no UTF-8 form"],
    ['{"metadata": {"a b": [1, {"c": "x\\udfff"}]}}', 'metadata["a b"][1].c holds a lone UTF-16 surrogate'],
  ])("%s is 400 naming the field, and the session is unchanged", async (body, message) => {
    const id = await createSession(h.server.url);
    if (withTurn) await turn(h.server.url, id, [U1]);
    const before = await getSession(h.server.url, id);
    const reply = await call("POST", `${h.server.url}/sessions/${id}/samples`, body);
    expect(reply.status).toBe(400);
    expect(reply.contentType).toMatch(/^application\/json/);
    expect((reply.json as { error: string }).error).toContain(message);
    expect(await getSession(h.server.url, id)).toEqual(before);
    // A well-formed body still collects, with big integers and paired surrogates carried exactly.
    const ok = await collect(h.server.url, id, { max_seq_len: null, metadata: { k: "\ud83d\ude00" } });
    expect(ok.session_metadata.agent).toEqual({ k: "\ud83d\ude00" });
  });
});

test("a big integer inside the agent metadata travels exactly", async () => {
  const id = await createSession(h.server.url);
  await turn(h.server.url, id, [U1]);
  const reply = await call("POST", `${h.server.url}/sessions/${id}/samples`, '{"max_seq_len": null, "metadata": {"k": 9007199254740993}}');
  expect(reply.status).toBe(200);
  expect(reply.bytes.toString("latin1")).toContain('"agent":{"k":9007199254740993}');
});

test("a throwing hook's 422 names hook and cause without absolute paths", async () => {
  const id = await createSession(withPath.url);
  await turn(withPath.url, id, [U1]);
  const reply = await call("POST", `${withPath.url}/sessions/${id}/samples`, { max_seq_len: null });
  expect(reply.status).toBe(422);
  expect(reply.contentType).toMatch(/^text\/plain/);
  expect(reply.text).toBe(
    "session sample hook failed (picker=hook-fixtures.ts#explodingWithPath, postprocessor=defaultPostprocess): " +
      "cannot read hook-fixtures.ts: the picker's table is missing",
  );
  expect(reply.text).not.toContain(ROOT);
});
