// DeepSeek V3.2 and V4 checked against the real thing: our ported encoders render exactly what miles' vendored
// encoding_dsv32.py and SGLang's encoding_dsv4.py render (driven as miles' deepseek.py bridge drives them) on 200+
// random conversations per family, first turn and every appended turn (the dummy-prefix suffix renders of V3.2, the
// real-history renders of V4, the canonical renders), and our ids equal HF's Rust tokenizers on the real DeepSeek V3
// vocabulary for every one of those texts.
// mirrors tests/fast/utils/chat_template_utils/test_deepseek_v32.py::test_render_matches_direct_encode_messages,
// test_deepseek_v4.py::test_render_matches_direct_encode_messages and tito_tokenizer.py's
// TITOTokenizer.tokenize_additional_messages / DeepSeekV4TITOTokenizer.tokenize_additional_messages.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { Tokenizer as RustTokenizer } from "tokenizers";
import { startMockBackend, type MockBackend, type ProcessFunction } from "../../src/backend";
import { DEEPSEEKV32_TOOL_CALLS, DEEPSEEKV4_TOOL_CALLS } from "../../src/backend/formats/deepseek";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import { loadTitoModel, type LoadedModel } from "../../src/tokenizer";
import { call, chat, createSession, getSession } from "../server/helpers";
import type { ChatMessage, ToolSpec } from "../../src/tokenizer/types";
import { canonicalizeTools } from "../../src/tokenizer/sglang-tools";
import { pythonMissing, runPythonScript } from "../python/python3";
import { deepseekCheckpoint, DEEPSEEK_V3_DIR } from "./deepseek/checkpoint";
import { deepseekConversations, type DeepSeekCase } from "./deepseek/conversations";

const CONVERSATIONS = 200;
/** Conversations driven through a real v1 server and the mock, every turn (each a session). */
const SERVED = 60;
/** A directory holding miles' vendored encoding_dsv32.py and SGLang's encoding_dsv4.py (not shipped with the package). */
const ENCODERS = process.env.DEEPSEEK_ENCODERS_DIR;

function whyMissing(): string | null {
  const python = pythonMissing();
  if (python !== null) return python;
  if (ENCODERS === undefined) return "DEEPSEEK_ENCODERS_DIR is not set (a directory with miles' encoding_dsv32.py and SGLang's encoding_dsv4.py)";
  for (const file of ["encoding_dsv32.py", "encoding_dsv4.py"]) {
    if (!fs.existsSync(path.join(ENCODERS, file))) return `DEEPSEEK_ENCODERS_DIR has no ${file}`;
  }
  return null;
}
const missing = whyMissing();
if (missing !== null) console.warn(`DeepSeek encoder cross-check skipped: ${missing}`);
const testWithPython = missing === null ? test : test.skip;

interface RenderCase {
  encoder: "deepseek_v32" | "deepseek_v4";
  messages: ChatMessage[];
  tools: ToolSpec[] | null;
  kwargs: Record<string, unknown>;
  add_generation_prompt: boolean;
}

const DUMMY_SYSTEM: ChatMessage = { role: "system", content: "dummy system" };

/** Every render a session makes of `c`: the first prompt, and per appended turn the suffix renders and the canonical one. */
function rendersOf(c: DeepSeekCase, family: "deepseekv32" | "deepseekv4", kwargs: Record<string, unknown>): RenderCase[] {
  const encoder = family === "deepseekv32" ? "deepseek_v32" : "deepseek_v4";
  const tools = canonicalizeTools(c.tools);
  const one = (messages: ChatMessage[], add: boolean): RenderCase => ({ encoder, messages, tools, kwargs, add_generation_prompt: add });
  const out = [one(c.first, true)];
  let history = [...c.first];
  for (const turn of c.turns) {
    const old = [...history, turn.reply];
    const next = [...old, ...turn.appended];
    if (family === "deepseekv4") out.push(one(old, false), one(next, true));
    else {
      const base = [DUMMY_SYSTEM, { role: "assistant", content: "", reasoning_content: " ", tool_calls: turn.reply.tool_calls ?? [] }];
      out.push(one(base, false), one([...base, ...turn.appended], true));
    }
    out.push(one(next, false)); // the canonical render the mismatch report compares against
    history = next;
  }
  return out;
}

function caseOf(family: "deepseekv32" | "deepseekv4", messages: ChatMessage[], c: DeepSeekCase, kwargs: Record<string, unknown>, add: boolean): RenderCase {
  return {
    encoder: family === "deepseekv32" ? "deepseek_v32" : "deepseek_v4",
    messages,
    tools: canonicalizeTools(c.tools),
    kwargs,
    add_generation_prompt: add,
  };
}

/** A tool result answering the reply's call at the same position (the mock names calls itself). */
function withCallIds(message: ChatMessage, reply: ChatMessage): ChatMessage {
  if (message.role !== "tool") return message;
  const index = Number(/_(\d+)$/.exec(message.tool_call_id ?? "")?.[1] ?? 0);
  return { ...message, tool_call_id: reply.tool_calls?.[index]?.id ?? message.tool_call_id };
}

async function rustIds(rust: RustTokenizer, text: string | { error: string }): Promise<number[]> {
  if (typeof text !== "string") throw new Error(`Python refused: ${text.error}`);
  return (await rust.encode(text, null, { addSpecialTokens: false })).getIds();
}

function pythonRenders(cases: readonly RenderCase[]): Array<string | { error: string }> {
  return JSON.parse(runPythonScript("render_deepseek.py", JSON.stringify({ encoders: ENCODERS, cases }))) as Array<string | { error: string }>;
}

describe.each(["deepseekv32", "deepseekv4"] as const)("%s", (family) => {
  let dir: string;
  let model: LoadedModel;
  let rust: RustTokenizer;
  beforeAll(async () => {
    dir = deepseekCheckpoint(family === "deepseekv32" ? "deepseek_v32" : "deepseek_v4");
    model = await loadTitoModel({ titoModel: family, hfCheckpoint: dir, chatTemplateKwargs: {} });
    rust = RustTokenizer.fromFile(path.join(DEEPSEEK_V3_DIR, "tokenizer.json"));
  }, 60_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  testWithPython(
    `${SERVED} conversations through a real v1 server: the first prompt and every appended prompt equal the Python reference`,
    async () => {
      const conversations = fc.sample(deepseekConversations(family), { numRuns: SERVED, seed: 4803 });
      const format = family === "deepseekv32" ? DEEPSEEKV32_TOOL_CALLS : DEEPSEEKV4_TOOL_CALLS;
      const sessions = new Map<string, { c: DeepSeekCase; turn: number; thinking: boolean }>();
      // the model answers each turn with the conversation's reply, in the family's wire format
      const process: ProcessFunction = (prompt, _request, context) => {
        const at = sessions.get(context!.headers.get("x-smg-routing-key") ?? "")!;
        // after the conversation's last appended block, a plain closing answer
        const reply = at.c.turns[at.turn]?.reply ?? { role: "assistant", content: "Done." };
        const calls = (reply.tool_calls ?? []).map((tc) => ({
          name: tc.function.name,
          arguments: JSON.parse(tc.function.arguments as string) as Record<string, unknown>,
        }));
        let text = format.write(reply.content as string, calls);
        // thinking mode: the request forces SGLang's parser into reasoning, so the model closes the block (empty when
        // the prompt's tail, a system or assistant turn, opened none)
        if (prompt.endsWith("<think>")) text = `${reply.reasoning_content ?? ""}</think>${text}`;
        else if (at.thinking) text = `</think>${text}`;
        return { text };
      };
      const backend: MockBackend = await startMockBackend({ process, titoModel: family, hfCheckpoint: dir, chatTemplateKwargs: {} });
      const server: RunningSessionServer = await startSessionServer({
        version: "v1",
        backendUrl: backend.url,
        titoModel: family,
        hfCheckpoint: dir,
        chatTemplateKwargs: {}, // miles' own default, the layer under the request kwargs, as for `model`
        logger: { warn() {} },
      });
      try {
        expect((await call("GET", `${server.url}/health`)).json<Record<string, string>>().tito_model).toBe(family);
        const state = await Promise.all(
          conversations.map(async (c) => {
            const id = await createSession(server.url);
            const kwargs = model.tito.mergeKwargs(c.kwargs);
            sessions.set(id, { c, turn: 0, thinking: kwargs.thinking === true });
            return { id, c, messages: [...c.first], kwargs };
          }),
        );
        let checked = 0;
        for (let turn = 0; ; turn += 1) {
          const live = state.filter((s) => s.c.turns.length >= turn);
          if (live.length === 0) break;
          // what Python renders for this turn: the first prompt, or the suffix after the stored ids
          const renders: RenderCase[] = [];
          const stored: number[][] = [];
          for (const s of live) {
            if (turn === 0) renders.push(caseOf(family, [...s.messages], s.c, s.kwargs, true));
            else {
              const reply = s.messages[s.messages.length - 1];
              const appended = s.c.turns[turn - 1].appended.map((m) => withCallIds(m, reply));
              if (family === "deepseekv4")
                renders.push(caseOf(family, [...s.messages], s.c, s.kwargs, false), caseOf(family, [...s.messages, ...appended], s.c, s.kwargs, true));
              else {
                const base = [DUMMY_SYSTEM, { role: "assistant", content: "", reasoning_content: " ", tool_calls: reply.tool_calls ?? [] }];
                renders.push(caseOf(family, base, s.c, s.kwargs, false), caseOf(family, [...base, ...appended], s.c, s.kwargs, true));
              }
              stored.push((await getSession(server.url, s.id)).metadata.accumulated_token_ids as number[]);
              s.messages.push(...appended);
            }
          }
          const texts = pythonRenders(renders);
          for (let i = 0; i < live.length; i += 1) {
            const s = live[i];
            let expected: number[];
            if (turn === 0) expected = await rustIds(rust, texts[i]);
            else {
              const [without, withNext] = [texts[2 * i], texts[2 * i + 1]];
              if (typeof without !== "string" || typeof withNext !== "string" || !withNext.startsWith(without)) {
                throw new Error(
                  `turn ${turn}: Python refused or is not append-only: ${JSON.stringify([without, withNext]).slice(-300)}\n${JSON.stringify(s.messages)}\n${JSON.stringify(s.c.turns.slice(0, turn))}`,
                );
              }
              expected = [...stored[i], ...(await rustIds(rust, withNext.slice(without.length)))];
            }
            sessions.set(s.id, { c: s.c, turn, thinking: s.kwargs.thinking === true });
            const reply = await chat(server.url, s.id, { messages: s.messages, tools: s.c.tools ?? undefined, chat_template_kwargs: s.c.kwargs });
            if (reply.status !== 200) throw new Error(`turn ${turn}: ${reply.status} ${reply.text}`);
            const sent = backend.requestLog[backend.requestLog.length - 1].input_ids as number[];
            if (JSON.stringify(sent) !== JSON.stringify(expected))
              throw new Error(
                `turn ${turn}: prompt ids differ from the Python reference\n${JSON.stringify(s.messages)}\nours:   ${JSON.stringify(model.tokenizer.decode(sent))}\npython: ${JSON.stringify(model.tokenizer.decode(expected))}`,
              );
            s.messages.push(reply.json<{ choices: { message: ChatMessage }[] }>().choices[0].message);
            checked += 1;
          }
        }
        expect(checked).toBeGreaterThan(SERVED * 2);
      } finally {
        await server.close();
        await backend.close();
      }
    },
    300_000,
  );

  testWithPython(
    `${CONVERSATIONS} random conversations: every render equals the Python encoder's, and our ids equal Rust tokenizers'`,
    async () => {
      const conversations = fc.sample(deepseekConversations(family), { numRuns: CONVERSATIONS, seed: 4802 });
      const cases: RenderCase[] = [];
      for (const c of conversations) cases.push(...rendersOf(c, family, model.tito.mergeKwargs(c.kwargs)));
      const expected = pythonRenders(cases);
      let compared = 0;
      for (let index = 0; index < cases.length; index += 1) {
        const want = expected[index];
        const { messages, tools, kwargs, add_generation_prompt } = cases[index];
        let ours: string | { error: string };
        try {
          ours = model.tokenizer.renderChatTemplate(messages, { tools, kwargs, addGenerationPrompt: add_generation_prompt });
        } catch (error) {
          ours = { error: (error as Error).message };
        }
        if (typeof want !== "string" || typeof ours !== "string") {
          // both sides refuse the same inputs (e.g. a V3.2 tool result after an assistant without calls)
          if (typeof want === "string" || typeof ours === "string") {
            throw new Error(
              `case ${index}: Python ${JSON.stringify(want).slice(0, 300)} vs ours ${JSON.stringify(ours).slice(0, 300)}\n${JSON.stringify(cases[index])}`,
            );
          }
          continue;
        }
        if (ours !== want) throw new Error(`case ${index}: render differs\nours:   ${JSON.stringify(ours)}\npython: ${JSON.stringify(want)}`);
        const rustIds = (await rust.encode(want, null, { addSpecialTokens: false })).getIds();
        const ourIds = model.tokenizer.encode(ours);
        if (JSON.stringify(ourIds) !== JSON.stringify(rustIds)) throw new Error(`case ${index}: ids differ from Rust tokenizers on ${JSON.stringify(want)}`);
        compared += 1;
      }
      // nearly every case renders (the generator only writes conversations the encoders accept)
      expect(compared).toBeGreaterThan(cases.length * 0.95);
      expect(conversations.length).toBe(CONVERSATIONS);
    },
    300_000,
  );
});
