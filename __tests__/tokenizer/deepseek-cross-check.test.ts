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
import { loadTitoModel, type LoadedModel } from "../../src/tokenizer";
import type { ChatMessage, ToolSpec } from "../../src/tokenizer/types";
import { canonicalizeTools } from "../../src/tokenizer/sglang-tools";
import { pythonMissing, runPythonScript } from "../python/python3";
import { deepseekCheckpoint, DEEPSEEK_V3_DIR } from "./deepseek/checkpoint";
import { deepseekConversations, type DeepSeekCase } from "./deepseek/conversations";

const CONVERSATIONS = 200;
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

function pythonRenders(cases: readonly RenderCase[]): Array<string | { error: string }> {
  return JSON.parse(runPythonScript("render_deepseek.py", JSON.stringify({ encoders: ENCODERS, cases }))) as Array<string | { error: string }>;
}

describe.each(["deepseekv32", "deepseekv4"] as const)("%s", (family) => {
  let dir: string;
  let model: LoadedModel;
  let rust: RustTokenizer;
  beforeAll(async () => {
    dir = deepseekCheckpoint(family === "deepseekv32" ? "deepseek_v32" : "deepseek_v4");
    model = await loadTitoModel({ titoModel: family, hfCheckpoint: dir });
    rust = RustTokenizer.fromFile(path.join(DEEPSEEK_V3_DIR, "tokenizer.json"));
  }, 60_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

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
            throw new Error(`case ${index}: Python ${JSON.stringify(want).slice(0, 300)} vs ours ${JSON.stringify(ours).slice(0, 300)}\n${JSON.stringify(cases[index])}`);
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
