// An assistant message whose content is a list of parts (the OpenAI Agents SDK sends this) must not render as an
// empty turn: where it needs rendering (a new prompt, or appended after a v1 rollback / v2 attach) it is a 400 naming
// the index and type, as user/system/tool list content already is. Python's Jinja2 raises on the same template.
import * as fs from "node:fs";
import * as path from "node:path";
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import { defaultTokenizerDirectory } from "../../src/tokenizer/load";
import { dumpsPy, PY_RESPONSE_JSON } from "../../src/wire/py-json";
import type { ChatMessage } from "../../src/tokenizer/types";
import { pythonMissing, runPythonScript } from "../python/python3";
import { assistantOf, chat, createSession, getSession, recordingLogger } from "./helpers";

const PARTS: ChatMessage = { role: "assistant", content: [{ type: "text", text: "It is sunny." }] as never };
const REFUSAL =
  'content must be a string or null for role "assistant", got a list (content parts); content parts and objects are not rendered by the chat template';

let backend: MockBackend;
const servers: Record<"v1" | "v2", RunningSessionServer | undefined> = { v1: undefined, v2: undefined };

beforeAll(async () => {
  backend = await startMockBackend({ process: weatherScript });
  servers.v1 = await startSessionServer({ version: "v1", backendUrl: backend.url, logger: recordingLogger() });
  servers.v2 = await startSessionServer({ version: "v2", backendUrl: backend.url, logger: recordingLogger() });
});

afterAll(async () => {
  await servers.v1?.close();
  await servers.v2?.close();
  await backend.close();
});

describe.each(["v1", "v2"] as const)("%s: assistant content parts", (version) => {
  const url = (): string => servers[version]!.url;

  test("in a prompt rendered from scratch: 400 naming the index, nothing stored", async () => {
    const id = await createSession(url());
    const before = await getSession(url(), id);
    const reply = await chat(url(), id, { messages: [...buildInitialMessages(), PARTS, { role: "user", content: "and now?" }], tools: WEATHER_TOOLS });
    expect([reply.status, reply.json<{ error: string }>().error]).toEqual([400, `messages[2].${REFUSAL}`]);
    expect(await getSession(url(), id)).toEqual(before);
  });

  test("appended after the stored turn (the rollback / new-branch case): 400, not an empty assistant turn", async () => {
    const id = await createSession(url());
    const history = buildInitialMessages();
    const first = await chat(url(), id, { messages: history, tools: WEATHER_TOOLS });
    expect(first.status).toBe(200);
    const assistant = assistantOf(first);
    const toolTurn: ChatMessage = { role: "tool", tool_call_id: assistant.tool_calls?.[0]?.id ?? "call00000", content: MOCK_TOOL_RESULTS[0] };
    const second = await chat(url(), id, { messages: [...history, assistant, toolTurn], tools: WEATHER_TOOLS });
    expect(second.status).toBe(200);
    // The client re-sends the second answer as content parts: it does not match the stored turn, so it would be
    // appended (v1 rolling one turn back, v2 attaching a branch at the first node) and would have to be rendered.
    const kept = await getSession(url(), id);
    const retry = await chat(url(), id, { messages: [...history, assistant, toolTurn, PARTS, { role: "user", content: "thanks" }], tools: WEATHER_TOOLS });
    // not a re-send of a stored turn in pieces, so the refusal names no matcher
    expect([retry.status, retry.json<{ error: string }>().error]).toEqual([400, `messages[4].${REFUSAL}`]);
    // refused before the rollback / the view move: the session holds what it held
    expect(await getSession(url(), id)).toEqual(kept);
    // A string or null content on an assistant turn is still fine.
    const plain = await chat(url(), id, {
      messages: [...history, assistant, toolTurn, { role: "assistant", content: "It is sunny." }, { role: "user", content: "thanks" }],
      tools: WEATHER_TOOLS,
    });
    expect(plain.status).toBe(200);
  });
});

const python = pythonMissing(["jinja2"]);
if (python !== null) console.warn(`Python Jinja2 check of assistant content parts skipped: ${python}`);
// The package's append-safe template renders non-string content as "", so the refusal happens before it; what
// miles renders with is Qwen3's native template (the one the cross-check test compares bytes against).
(python === null ? test : test.skip)("Python's Jinja2 raises on the native Qwen3 template for the same messages", () => {
  const config = JSON.parse(fs.readFileSync(path.join(defaultTokenizerDirectory(), "tokenizer_config.json"), "utf8")) as { chat_template: string };
  const template = config.chat_template;
  const messages = [...buildInitialMessages(), PARTS, { role: "user", content: "and now?" }];
  const cases = [dumpsPy({ messages, tools: WEATHER_TOOLS, add_generation_prompt: true, kwargs: { enable_thinking: false } }, PY_RESPONSE_JSON)];
  const [result] = JSON.parse(runPythonScript("render_native_qwen3.py", JSON.stringify({ template, cases }))) as Array<string | { error: string }>;
  expect(result).toEqual({ error: expect.stringContaining('can only concatenate str (not "list") to str') });
});
