// The Kimi / MiniMax / Inkling families through real servers: a v1 session server and the mock, both started for the
// family on a synthetic checkpoint, play random multi-turn conversations (tools, parallel calls, reasoning, every
// append role the family allows). The mock's completions are what the family's model writes (the mock's formats);
// the agent sends back the server's reply messages. Every prompt the server sends upstream, the first turn's and
// every TITO-merged later one, equals HF's Rust tokenizers on Python Jinja2's render of the conversation so far, and
// the session's mismatch report stays empty.
// mirrors miles/rollout/session (the v1 chat call), tito_tokenizer.py's merge_tokens of each family and
// template.py::apply_chat_template (miles 31f1ca96).
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import { Tokenizer as RustTokenizer } from "tokenizers";
import { startMockBackend, type MockBackend } from "../../src/backend";
import { reasoningFormat, toolCallFormat } from "../../src/backend/formats/registry";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import { getTitoFamily, loadTitoModel, specialTokenVariables, type ChatMessage, type LoadedModel } from "../../src/tokenizer";
import { parsePyJson, dumpsPy, PY_RESPONSE_JSON } from "../../src/wire/py-json";
import { pythonMissing, runPythonScript } from "../python/python3";
import { randomConversation, seededRandom, type ConversationShape } from "../tokenizer/family-conversations";
import { inklingSpec, kimi25Spec, kimi26Spec, minimaxSpec, writeSyntheticCheckpoint, type SyntheticCheckpointSpec } from "../tokenizer/synthetic-checkpoint";
import { chat, createSession, getSession } from "./helpers";

const CONVERSATIONS = 60;
const missing = pythonMissing(["jinja2"]);
if (missing !== null) console.warn(`kimi/minimax/inkling server cross-check skipped: ${missing} (apt-get install -y python3-jinja2)`);
const testWithPython = missing === null ? test : test.skip;

const FAMILIES: ReadonlyArray<readonly [string, () => SyntheticCheckpointSpec]> = [
  ["kimi25", () => kimi25Spec()],
  ["kimi26", kimi26Spec],
  ["minimax_m25", minimaxSpec],
  ["minimax_m27", minimaxSpec],
  ["inkling", inklingSpec],
];

/** A reply message as an agent sends it back: the fields the server set, nulls left out. */
function resend(message: Record<string, unknown>): ChatMessage {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(message)) if (value !== null && value !== undefined) out[key] = value;
  return out as unknown as ChatMessage;
}

describe.each(FAMILIES)("%s: a real v1 server's prompts equal Jinja2 + HF Rust tokenizers", (family, spec) => {
  let directory: string;
  let backend: MockBackend;
  let server: RunningSessionServer;
  let model: LoadedModel;
  const replies: string[] = [];

  beforeAll(async () => {
    directory = writeSyntheticCheckpoint(spec(), family);
    // the mock answers each request with the completion the test queued for it
    backend = await startMockBackend({ process: () => ({ text: replies.shift() ?? "" }), titoModel: family, hfCheckpoint: directory });
    server = await startSessionServer({ version: "v1", backendUrl: backend.url, titoModel: family, hfCheckpoint: directory, logger: { warn() {} } });
    model = await loadTitoModel({ titoModel: family, hfCheckpoint: directory });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await backend?.close();
    fs.rmSync(directory, { recursive: true, force: true });
  });

  testWithPython(
    `${CONVERSATIONS} random conversations, every turn`,
    async () => {
      const wire = getTitoFamily(family).wire;
      const unbound = wire.unboundDefaults;
      const toolCalls = toolCallFormat(wire.toolCallParser ?? unbound!.toolCallParser);
      const reasoning = reasoningFormat((wire.reasoningParser ?? unbound!.reasoningParser)!);
      const shape: ConversationShape = { appendRoles: model.family.allowedAppendRoles, reasoning: true, alwaysReasons: true, contentParts: false };
      const random = seededRandom(0x5e77 + family.length);
      const rust = RustTokenizer.fromFile(path.join(directory, "tokenizer.json"));
      const variables = specialTokenVariables(JSON.parse(fs.readFileSync(path.join(directory, "tokenizer_config.json"), "utf8")) as Record<string, unknown>);
      const template = (model.tokenizer.chatTemplate as unknown as { source: string }).source;
      const prompts: Array<{ messages: ChatMessage[]; tools: unknown; sent: number[]; label: string }> = [];
      for (let n = 0; n < CONVERSATIONS; n += 1) {
        const conversation = randomConversation(random, shape);
        const session = await createSession(server.url);
        const history: ChatMessage[] = [];
        let from = 0;
        for (const index of conversation.generated) {
          // the messages up to the generated turn, tool results pointed at the ids of the server's reply
          const previous = history.filter((message) => message.role === "assistant" && message.tool_calls !== undefined).pop();
          for (const message of conversation.messages.slice(from, index)) {
            if (message.role === "tool" && previous?.tool_calls !== undefined) {
              const position = conversation.messages
                .slice(from, index)
                .filter((m) => m.role === "tool")
                .indexOf(message);
              history.push({ ...message, tool_call_id: previous.tool_calls?.[position]?.id ?? message.tool_call_id });
            } else history.push(message);
          }
          const turn = conversation.messages[index];
          const calls = (turn.tool_calls ?? []).map((call) => ({
            name: call.function.name,
            arguments: parsePyJson(call.function.arguments as string) as Record<string, unknown>,
          }));
          replies.push(reasoning.write(turn.reasoning_content ?? "", toolCalls.write(turn.content as string, calls), wire.reasoningOpenedByPrompt));
          const reply = await chat(server.url, session, { messages: history, tools: conversation.tools ?? undefined });
          if (reply.status !== 200) throw new Error(`${family} conversation ${n} turn ${index}: ${reply.status} ${reply.text}`);
          prompts.push({
            messages: [...history],
            tools: conversation.tools,
            sent: backend.requestLog[backend.requestLog.length - 1].input_ids as number[],
            label: `conversation ${n} turn ${index}`,
          });
          history.push(resend(reply.json<{ choices: Array<{ message: Record<string, unknown> }> }>().choices[0].message));
          from = index + 1;
        }
        const stored = (await getSession(server.url, session)).metadata as { tito_session_mismatch?: unknown[] };
        expect({ conversation: n, mismatch: stored.tito_session_mismatch ?? [] }).toEqual({ conversation: n, mismatch: [] });
      }
      const kwargs = model.tito.defaultKwargs;
      const bodies = prompts.map((p) => dumpsPy({ messages: p.messages, tools: p.tools, add_generation_prompt: true, kwargs }, PY_RESPONSE_JSON));
      const rendered = JSON.parse(runPythonScript("render_native_qwen3.py", JSON.stringify({ template, cases: bodies, variables }))) as Array<
        string | { error: string }
      >;
      let later = 0;
      for (const [index, prompt] of prompts.entries()) {
        const python = rendered[index];
        if (typeof python !== "string") throw new Error(`${prompt.label}: Python failed: ${python.error}`);
        const expected = (await rust.encode(python, null, { addSpecialTokens: false })).getIds();
        if (JSON.stringify(prompt.sent) !== JSON.stringify(expected)) {
          expect({ label: prompt.label, text: model.tokenizer.decode(prompt.sent, { skipSpecialTokens: false }) }).toEqual({
            label: prompt.label,
            text: python,
          });
        }
        if (prompt.messages.some((message) => message.role === "assistant")) later += 1;
      }
      expect(later).toBeGreaterThan(CONVERSATIONS / 2);
    },
    240_000,
  );
});
