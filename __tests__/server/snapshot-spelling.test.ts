// GET /sessions/{id} writes each stored upstream reply in the very bytes the chat reply carried (the server copies
// that text instead of spelling the reply again): Python's -0.0, 1.0, key order, big ints and raw non-ASCII survive.
// mirrors miles/rollout/session/core.py::_render_json (compact, ensure_ascii=False) on the records it returns.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { startSessionServer, type RunningSessionServer, type SessionServerVersion } from "../../src/server";
import { pythonMissing } from "../python/python3";
import { call, chat, createSession, recordingLogger, startRawBackend, type RawBackend } from "./helpers";

const missing = pythonMissing();
if (missing !== null) console.warn(`the Python re-spelling check skipped: ${missing}`);
const testWithPython = missing === null ? test : test.skip;

/** An upstream reply already in Python's compact spelling: a float -0.0, integral floats, integer-like keys first
 * in their original order, an int past 2^53, a small float, non-ASCII text. */
const REPLY =
  '{"id":"chatcmpl-spell0001","object":"chat.completion","created":1,"model":"raw","choices":[{"index":0,' +
  '"message":{"role":"assistant","content":"d\u00e9j\u00e0 vu \ud83d\ude00"},' +
  '"logprobs":{"content":[{"token":"ok","logprob":-0.0,"bytes":[111,107],"top_logprobs":[]}]},"finish_reason":"stop",' +
  '"meta_info":{"output_token_logprobs":[[-0.0,9707],[-1.0,151645]],"completion_tokens":2,"prompt_tokens":3,' +
  '"2":"two","1":1.0,"big":123456789012345678901234567890,"small":1e-05}}]}';

let raw: RawBackend;
beforeAll(async () => {
  raw = await startRawBackend(() => ({ status: 200, body: REPLY }));
});
afterAll(async () => {
  await raw.close();
});

testWithPython("the reply text is what Python's json.dumps writes for it (so the bytes checked below are Python's)", () => {
  const script = 'import json,sys; t=sys.stdin.read(); sys.stdout.write(json.dumps(json.loads(t), ensure_ascii=False, separators=(",", ":")))';
  const result = spawnSync("python3", ["-c", script], { input: REPLY, encoding: "utf8", env: { ...process.env, PYTHONIOENCODING: "utf-8" } });
  expect(result.stderr).toBe("");
  expect(result.stdout).toBe(REPLY);
});

describe.each(["v1", "v2"] as const)("%s", (version: SessionServerVersion) => {
  let server: RunningSessionServer;
  beforeAll(async () => {
    server = await startSessionServer({ version, backendUrl: raw.url, logger: recordingLogger() });
  });
  afterAll(async () => {
    await server.close();
  });

  test("a non-stream turn: the snapshot's response is the reply's text, byte for byte, on every GET", async () => {
    const id = await createSession(server.url);
    const reply = await chat(server.url, id, { messages: [{ role: "user", content: "hi" }] });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe(REPLY);
    const first = await call("GET", `${server.url}/sessions/${id}`);
    expect(first.status).toBe(200);
    expect(first.text).toContain(`,"response":${REPLY},"status_code":200}`);
    expect(first.json<{ records: Array<{ response: { id: string } }> }>().records[0].response.id).toBe("chatcmpl-spell0001");
    expect((await call("GET", `${server.url}/sessions/${id}`)).text).toBe(first.text);
  });

  test("a streamed turn (no reply text to copy) is spelled the same way", async () => {
    const id = await createSession(server.url);
    const reply = await chat(server.url, id, { messages: [{ role: "user", content: "hi" }], stream: true });
    expect(reply.status).toBe(200);
    expect(reply.text.startsWith("data: ")).toBe(true);
    const view = await call("GET", `${server.url}/sessions/${id}`);
    expect(view.text).toContain(`,"response":${REPLY},"status_code":200}`);
  });
});
