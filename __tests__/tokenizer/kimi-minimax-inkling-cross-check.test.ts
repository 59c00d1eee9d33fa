// kimi25, kimi26, minimax_m25, minimax_m27 and inkling against the real thing: on 200+ seeded random conversations
// per family (tools, parallel calls, reasoning, every append role the family allows), the first-turn prompt and every
// TITO-merged later prompt equal Python Jinja2's render (transformers' environment) tokenized by HF's Rust tokenizers,
// on synthetic checkpoints holding each family's special tokens (no package ships these vocabularies).
// mirrors miles/utils/chat_template_utils/template.py::apply_chat_template (normalize_tool_arguments "dict",
// extract_tool_dicts) and tito_tokenizer.py's merge_tokens of each family (miles 31f1ca96).
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import { Tokenizer as RustTokenizer } from "tokenizers";
import { loadTitoModel, type LoadedModel } from "../../src/tokenizer";
import { specialTokenVariables } from "../../src/tokenizer/native-template";
import { dumpsPy, PY_RESPONSE_JSON } from "../../src/wire/py-json";
import { pythonMissing, runPythonScript } from "../python/python3";
import { playConversation, randomConversation, seededRandom, type Conversation, type ConversationShape, type TurnEnding } from "./family-conversations";
import { inklingSpec, kimi25Spec, kimi26Spec, minimaxSpec, writeSyntheticCheckpoint, type SyntheticCheckpointSpec } from "./synthetic-checkpoint";

const CONVERSATIONS = 200;

interface FamilyCase {
  name: string;
  spec: () => SyntheticCheckpointSpec;
  shape: ConversationShape;
  ending: TurnEnding;
}

const kimiId = (name: string, index: number): string => `functions.${name}:${index}`;
const KIMI_ENDING: TurnEnding = { renderedEnd: "<|im_end|>", stopToken: "<|im_end|>" };
const MINIMAX_ENDING: TurnEnding = { renderedEnd: "[e~[\n", stopToken: "[e~[" };
const ALL_ROLES = ["tool", "user", "system", "assistant"];

const FAMILIES: FamilyCase[] = [
  { name: "kimi25", spec: () => kimi25Spec(), shape: { appendRoles: ALL_ROLES, reasoning: true, toolCallId: kimiId, contentParts: true }, ending: KIMI_ENDING },
  { name: "kimi26", spec: kimi26Spec, shape: { appendRoles: ALL_ROLES, reasoning: true, toolCallId: kimiId, contentParts: true }, ending: KIMI_ENDING },
  {
    name: "minimax_m25",
    spec: minimaxSpec,
    shape: { appendRoles: ["tool", "user", "assistant"], reasoning: true, alwaysReasons: true, contentParts: true },
    ending: MINIMAX_ENDING,
  },
  {
    name: "minimax_m27",
    spec: minimaxSpec,
    shape: { appendRoles: ["tool", "user", "assistant"], reasoning: true, alwaysReasons: true, contentParts: true },
    ending: MINIMAX_ENDING,
  },
  {
    name: "inkling",
    spec: inklingSpec,
    shape: { appendRoles: ALL_ROLES, reasoning: true, contentParts: true },
    ending: { renderedEnd: "<|content_model_end_sampling|>", stopToken: "<|content_model_end_sampling|>" },
  },
];

const directories: string[] = [];
const models = new Map<string, { model: LoadedModel; directory: string }>();

beforeAll(async () => {
  for (const family of FAMILIES) {
    const directory = writeSyntheticCheckpoint(family.spec(), family.name);
    directories.push(directory);
    models.set(family.name, { model: await loadTitoModel({ titoModel: family.name, hfCheckpoint: directory }), directory });
  }
});

afterAll(() => {
  for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
});

const missing = pythonMissing(["jinja2"]);
if (missing !== null) console.warn(`kimi/minimax/inkling Jinja2 + Rust cross-check skipped: ${missing} (apt-get install -y python3-jinja2)`);
const testWithPython = missing === null ? test : test.skip;

/** The family's template source as our loader resolved it (bundled file or the checkpoint's own). */
function templateSource(model: LoadedModel): string {
  const renderer = model.tokenizer.chatTemplate as { source?: string };
  if (typeof renderer.source !== "string") throw new Error("the renderer keeps no source");
  return renderer.source;
}

/** Random reasoning_effort values the Inkling template reads (strings of its map, numbers in range, absent). */
function inklingKwargs(index: number): Record<string, unknown> | undefined {
  const choices = [undefined, "low", "high", "none", 0.5, 0, " medium "];
  const choice = choices[index % choices.length];
  return choice === undefined ? undefined : { reasoning_effort: choice };
}

describe.each(FAMILIES)("$name: our renders and merged ids equal Jinja2 + HF Rust tokenizers", (family) => {
  testWithPython(`${CONVERSATIONS} random conversations, first turn and every appended turn`, async () => {
    const { model, directory } = models.get(family.name)!;
    const random = seededRandom(0x4a11 + family.name.length * 7919 + family.name.charCodeAt(family.name.length - 1));
    const cases: Array<{ body: string; ours: string; ids: number[]; label: string }> = [];
    const conversations: Conversation[] = [];
    for (let n = 0; n < CONVERSATIONS; n += 1) conversations.push(randomConversation(random, family.shape));
    conversations.forEach((conversation, n) => {
      const kwargs = family.name === "inkling" ? inklingKwargs(n) : undefined;
      const merged = model.tito.mergeKwargs(kwargs);
      const turns = playConversation(model, conversation, family.ending, kwargs);
      turns.forEach((turn, t) => {
        const body = dumpsPy({ messages: turn.history, tools: conversation.tools, add_generation_prompt: true, kwargs: merged }, PY_RESPONSE_JSON);
        cases.push({ body, ours: turn.promptText, ids: turn.promptIds, label: `conversation ${n} turn ${t}` });
      });
      // the canonical render of the whole conversation (the mismatch report's reference)
      const whole = dumpsPy({ messages: conversation.messages, tools: conversation.tools, add_generation_prompt: false, kwargs: merged }, PY_RESPONSE_JSON);
      const ours = model.tokenizer.renderChatTemplate(conversation.messages, { tools: conversation.tools, kwargs: merged });
      cases.push({ body: whole, ours, ids: model.tito.canonicalIds(conversation.messages, conversation.tools, kwargs), label: `conversation ${n} canonical` });
    });
    const variables = specialTokenVariables(JSON.parse(fs.readFileSync(path.join(directory, "tokenizer_config.json"), "utf8")) as Record<string, unknown>);
    const rendered = JSON.parse(
      runPythonScript("render_native_qwen3.py", JSON.stringify({ template: templateSource(model), cases: cases.map((c) => c.body), variables })),
    ) as Array<string | { error: string }>;
    const rust = RustTokenizer.fromFile(path.join(directory, "tokenizer.json"));
    let appended = 0;
    for (const [index, c] of cases.entries()) {
      const python = rendered[index];
      if (typeof python !== "string") throw new Error(`${family.name} ${c.label}: Python failed: ${python.error}`);
      if (c.ours !== python) expect({ label: c.label, ours: c.ours }).toEqual({ label: c.label, ours: python });
      const theirs = (await rust.encode(python, null, { addSpecialTokens: false })).getIds();
      if (c.ids.length !== theirs.length || c.ids.some((id, i) => id !== theirs[i]))
        expect({ label: c.label, ids: c.ids }).toEqual({ label: c.label, ids: theirs });
      if (!c.label.endsWith("turn 0") && !c.label.endsWith("canonical")) appended += 1;
    }
    expect(conversations.length).toBe(CONVERSATIONS);
    // every append role the family allows was appended after a stored turn, and parallel calls occurred
    const appendedRoles = new Set<string>();
    let parallel = 0;
    for (const { messages, generated } of conversations) {
      generated.slice(1).forEach((index, k) => messages.slice(generated[k] + 1, index).forEach((message) => appendedRoles.add(message.role)));
      parallel += messages.filter((message) => (message.tool_calls?.length ?? 0) > 1).length;
    }
    expect([...appendedRoles].sort()).toEqual([...family.shape.appendRoles].sort());
    expect(parallel).toBeGreaterThan(20);
    expect(appended).toBeGreaterThan(CONVERSATIONS);
  });
});
