// The servers' JSON as Python sees it, over real HTTP: request floats kept as floats in GET /sessions bytes, a
// samples payload whose _samples_meta a Python driver decodes to miles' types, non-string content refused.
// mirrors tests/fast/rollout/session/test_samples_codec.py (reward round trip) and core.py::_render_json.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { pythonMissing } from "../python/python3";
import { call, createSession, startV2Harness, type V2Harness } from "./v2/support/harness";

const missing = pythonMissing();
if (missing !== null) console.warn(`Python decoding of the samples payload skipped: ${missing}`);
const testWithPython = missing === null ? test : test.skip;

let h: V2Harness;
beforeAll(async () => {
  h = await startV2Harness();
});
afterAll(async () => {
  await h.close();
});

/** A chat body as raw JSON text (so 1.0 and 1 differ on the wire as they do for a Python client). */
function chatText(id: string, text: string): ReturnType<typeof call> {
  return call("POST", `${h.server.url}/sessions/${id}/v1/chat/completions`, text);
}

describe("request values keep their Python meaning through the server", () => {
  test("GET /sessions writes the request's 1.0, big int and integer-like keys exactly as Python's _render_json", async () => {
    const id = await createSession(h.server.url);
    const body =
      '{"messages": [{"role": "user", "content": "héllo"}], "temperature": 1.0, "seed": 12345678901234567890, "extra": {"b": 1, "2": 0.0, "a": -0.0}}';
    const reply = await chatText(id, body);
    expect(reply.status).toBe(200);
    const got = await call("GET", `${h.server.url}/sessions/${id}`);
    expect(got.text).toContain('"temperature":1.0,"seed":12345678901234567890,"extra":{"b":1,"2":0.0,"a":-0.0}');
    expect(got.text).toContain('"content":"héllo"');
  });

  // mirrors miles/utils/chat_template_utils/template.py::apply_chat_template (the template concatenates string content)
  test("user or tool content that is not a string is a 400 naming the index and type; nothing is stored", async () => {
    const id = await createSession(h.server.url);
    const first = await chatText(id, '{"messages": [{"role": "user", "content": "hi"}]}');
    expect(first.status).toBe(200);
    const before = (await call("GET", `${h.server.url}/sessions/${id}`)).text;
    const parts = await chatText(id, '{"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}');
    expect([parts.status, parts.json]).toEqual([
      400,
      {
        error:
          'messages[0].content must be a string for role "user", got a list (content parts); content parts and objects are not rendered by the chat template',
      },
    ]);
    const tool = await chatText(id, '{"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": {"temp": 21.0}}]}');
    expect([tool.status, tool.json]).toEqual([
      400,
      { error: 'messages[1].content must be a string for role "tool", got an object; content parts and objects are not rendered by the chat template' },
    ]);
    expect((await call("GET", `${h.server.url}/sessions/${id}`)).text).toBe(before);
  });
});

describe("a Python driver decoding our samples payload", () => {
  testWithPython("gets miles' types: reward 1.0 is a float, 1 an int, big ints exact", async () => {
    const id = await createSession(h.server.url);
    expect((await chatText(id, '{"messages": [{"role": "user", "content": "hi"}]}')).status).toBe(200);
    const samplesBody = '{"max_seq_len": null, "metadata": {"reward": 1.0, "steps": 3, "score": -0.0, "id": 98765432109876543210}}';
    const reply = await call("POST", `${h.server.url}/sessions/${id}/samples`, samplesBody);
    expect(reply.status).toBe(200);
    const result = spawnSync("python3", [path.join(__dirname, "..", "python", "decode_samples_meta.py")], { input: reply.bytes, encoding: "utf8" });
    expect(result.stderr).toBe("");
    const decoded = JSON.parse(result.stdout) as { reward: [string, string][]; agent: Record<string, [string, string]> };
    expect(decoded.reward).toEqual([["float", "1.0"]]);
    expect(decoded.agent).toEqual({
      reward: ["float", "1.0"],
      steps: ["int", "3"],
      score: ["float", "-0.0"],
      id: ["int", "98765432109876543210"],
    });
  });
});
