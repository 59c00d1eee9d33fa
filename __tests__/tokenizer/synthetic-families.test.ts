// glm47, glm53 and nemotron3 on synthetic checkpoints (no package ships their vocabularies): the boundary rules,
// config and parser bindings exactly as miles' tests pin them (each test names the Python test it mirrors), start-up
// refusals, whole conversations whose merged ids equal the fresh render, and the first-turn ids against Jinja2 + Rust.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import { Tokenizer as RustTokenizer } from "tokenizers";
import { loadTitoModel, TitoModelError, type LoadedModel } from "../../src/tokenizer";
import type { ChatMessage, ChatTemplateKwargs, ToolSpec } from "../../src/tokenizer";
import { getTitoFamily } from "../../src/tokenizer/families";
import { dumpsPy, PY_RESPONSE_JSON } from "../../src/wire/py-json";
import { pythonMissing, runPythonScript } from "../python/python3";
import { glm47Spec, glm53Spec, nemotron3Spec, writeSyntheticCheckpoint, type SyntheticCheckpointSpec } from "./synthetic-checkpoint";

const directories: string[] = [];

function checkpoint(spec: SyntheticCheckpointSpec, name: string): string {
  const directory = writeSyntheticCheckpoint(spec, name);
  directories.push(directory);
  return directory;
}

afterAll(() => {
  for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
});

const load = (titoModel: string, hfCheckpoint: string, chatTemplateKwargs?: ChatTemplateKwargs): Promise<LoadedModel> =>
  loadTitoModel({ titoModel, hfCheckpoint, chatTemplateKwargs });

let glmDir: string;
let glm53Dir: string;
let nemotronDir: string;
let glm47: LoadedModel;
let glm53: LoadedModel;
let nemotron3: LoadedModel;

beforeAll(async () => {
  glmDir = checkpoint(glm47Spec(), "glm47");
  glm53Dir = checkpoint(glm53Spec(), "glm53");
  nemotronDir = checkpoint(nemotron3Spec(), "nemotron3");
  [glm47, glm53, nemotron3] = await Promise.all([load("glm47", glmDir), load("glm53", glm53Dir), load("nemotron3", nemotronDir)]);
});

const id = (model: LoadedModel, token: string): number => {
  const found = model.tokenizer.tokenToId(token);
  if (found === undefined) throw new Error(`no ${token}`);
  return found;
};

/** Trajectories shaped like miles' mock_trajectories.py (tool turns, parallel calls, system retries, thinking). */
const WEATHER: ToolSpec[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Get weather information for a location",
      parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } }, required: ["city"] },
    },
  },
  {
    type: "function",
    function: { name: "get_date", description: "Date in a timezone", parameters: { type: "object", properties: { tz: { type: "string" } } } },
  },
];
const call = (id: string, name: string, args: Record<string, unknown>) => ({
  id,
  type: "function" as const,
  function: { name, arguments: JSON.stringify(args) },
});

const TRAJECTORIES: Record<string, ChatMessage[]> = {
  // SingleToolTrajectory
  singleTool: [
    { role: "system", content: "You are a helpful assistant." },
    { role: "user", content: "What's the weather in Beijing?" },
    { role: "assistant", content: "Let me check.", tool_calls: [call("call_1", "get_weather", { city: "Beijing" })] },
    { role: "tool", tool_call_id: "call_1", content: '{"temperature": 25}' },
    { role: "assistant", content: "It is 25 degrees in Beijing." },
  ],
  // MultiToolSingleTurnTrajectory
  parallelTools: [
    { role: "user", content: "Weather in Shanghai and the date in Tokyo?" },
    {
      role: "assistant",
      content: "",
      tool_calls: [call("call_1", "get_weather", { city: "Shanghai", unit: "celsius" }), call("call_2", "get_date", { tz: "Asia/Tokyo" })],
    },
    { role: "tool", tool_call_id: "call_1", content: "sunny" },
    { role: "tool", tool_call_id: "call_2", content: "2026-12-01" },
    { role: "assistant", content: "Sunny, and it is December 1st." },
  ],
  // RetrySystemTrajectory / IntermediateSystemTrajectory
  systemRetry: [
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", content: "", tool_calls: [call("call_1", "get_weather", { city: "Paris" })] },
    { role: "tool", tool_call_id: "call_1", content: "error: timeout" },
    { role: "system", content: "The tool failed; try again once." },
    { role: "assistant", content: "Retrying.", tool_calls: [call("call_2", "get_weather", { city: "Paris" })] },
    { role: "tool", tool_call_id: "call_2", content: "rain" },
    { role: "user", content: "And tomorrow?" },
    { role: "assistant", content: "Probably rain again." },
  ],
  // SingleToolThinkingTrajectory
  thinking: [
    { role: "user", content: "Is it cold in Oslo?" },
    { role: "assistant", content: "", reasoning_content: "I should look it up.", tool_calls: [call("call_1", "get_weather", { city: "Oslo" })] },
    { role: "tool", tool_call_id: "call_1", content: "-5" },
    { role: "assistant", content: "Yes, -5 degrees.", reasoning_content: "Negative means cold." },
  ],
};

/** `_find_tito_splits` + `_split_at`: after each assistant with tool calls followed by tool/system, up to the next assistant. */
function splits(messages: readonly ChatMessage[]): Array<{ old: ChatMessage[]; next: ChatMessage[] }> {
  const out: Array<{ old: ChatMessage[]; next: ChatMessage[] }> = [];
  messages.forEach((message, i) => {
    if (message.role !== "assistant" || !message.tool_calls?.length || !["tool", "system"].includes(messages[i + 1]?.role ?? "")) return;
    let end = i + 1;
    while (end < messages.length && messages[end].role !== "assistant") end += 1;
    out.push({ old: messages.slice(0, i + 1), next: messages.slice(0, end) });
  });
  return out;
}

const BOUNDARY = splits(TRAJECTORIES.singleTool)[0];

describe("glm47 (miles' GLM47TITOTokenizer) on a synthetic GLM-4.7 checkpoint", () => {
  test("TestConfig.test_glm47: assistant start, both boundary tokens trailing, max_trim_tokens 1", () => {
    const family = getTitoFamily("glm47");
    expect(family.comparator.assistantStart).toBe("<|assistant|>");
    expect(family.boundary.trailing).toEqual(expect.arrayContaining([{ token: "<|observation|>" }, { token: "<|user|>" }]));
    expect(glm47.tito.maxTrimTokens).toBe(1);
    expect(glm47.tito.defaultKwargs).toEqual({ clear_thinking: false });
  });

  test("TestParserBinding: glm45 reasoning, glm47 tool calls", () => {
    expect([glm47.family.wire.reasoningParser, glm47.family.wire.toolCallParser]).toEqual(["glm45", "glm47"]);
  });

  test("TestMergeTokensBoundary.test_glm47_strips_observation", () => {
    const incremental = glm47.tito.tokenizeAppended(BOUNDARY.old, BOUNDARY.next, WEATHER);
    const merged = glm47.tito.mergeTokens(BOUNDARY.old, BOUNDARY.next, [100, 200, id(glm47, "<|observation|>")], WEATHER);
    expect(merged).toEqual([100, 200, ...incremental]);
  });

  test("TestMergeTokensBoundary.test_glm47_strips_user", () => {
    const incremental = glm47.tito.tokenizeAppended(BOUNDARY.old, BOUNDARY.next, WEATHER);
    expect(glm47.tito.mergeTokens(BOUNDARY.old, BOUNDARY.next, [100, 200, id(glm47, "<|user|>")], WEATHER)).toEqual([100, 200, ...incremental]);
  });

  test("TestMergeTokensBoundary.test_glm47_no_strip_otherwise", () => {
    const incremental = glm47.tito.tokenizeAppended(BOUNDARY.old, BOUNDARY.next, WEATHER);
    expect(glm47.tito.mergeTokens(BOUNDARY.old, BOUNDARY.next, [100, 200, 300], WEATHER)).toEqual([100, 200, 300, ...incremental]);
  });

  test("the appended suffix opens with <|observation|> itself, so the dropped stop token comes back from the template", () => {
    const incremental = glm47.tito.tokenizeAppended(BOUNDARY.old, BOUNDARY.next, WEATHER);
    expect(incremental[0]).toBe(id(glm47, "<|observation|>"));
    expect(glm47.tokenizer.decode(incremental)).toBe('<|observation|><tool_response>{"temperature": 25}</tool_response><|assistant|><think>');
  });

  test("TestTokenizeAdditional.test_produces_nonempty_incremental: every tool/system split of every trajectory", () => {
    let count = 0;
    for (const messages of Object.values(TRAJECTORIES)) {
      for (const { old, next } of splits(messages)) {
        expect(glm47.tito.tokenizeAppended(old, next, WEATHER).length).toBeGreaterThan(0);
        count += 1;
      }
    }
    expect(count).toBe(5);
  });

  test("TestConfig.test_comparator_inherits_trailing_ids: a trailing stop token is not a mismatch", () => {
    const { old } = BOUNDARY;
    const canonical = glm47.tito.canonicalIds(old, WEATHER);
    expect(glm47.tito.compareIds(canonical, [...canonical, id(glm47, "<|observation|>")])).toEqual([]);
    expect(glm47.tito.compareIds(canonical, [...canonical, id(glm47, "<|user|>")])).toEqual([]);
  });
});

describe("glm53 (miles PR #3087) on a synthetic GLM-5.3 checkpoint (template in chat_template.jinja)", () => {
  test("GLM 4.7's boundary and parsers, with enable_thinking pinned on beside clear_thinking off", () => {
    expect(glm53.templateOrigin).toBe("chat_template.jinja");
    expect(glm53.family.boundary).toEqual(getTitoFamily("glm47").boundary);
    expect(glm53.family.wire).toEqual({ ...getTitoFamily("glm47").wire, reasoningOpenedByPrompt: true });
    expect(glm53.tito.defaultKwargs).toEqual({ clear_thinking: false, enable_thinking: true });
    const incremental = glm53.tito.tokenizeAppended(BOUNDARY.old, BOUNDARY.next, WEATHER);
    expect(glm53.tito.mergeTokens(BOUNDARY.old, BOUNDARY.next, [7, id(glm53, "<|observation|>")], WEATHER)).toEqual([7, ...incremental]);
  });

  test("a request or server default turning thinking off is refused with Python's conflict text", async () => {
    expect(() => glm53.tito.mergeKwargs({ enable_thinking: false })).toThrow(
      "chat template kwarg enable_thinking=False conflicts with the value registered for GLM53TITOTokenizer: True",
    );
    await expect(load("glm53", glm53Dir, { enable_thinking: false })).rejects.toThrow(TitoModelError);
  });
});

describe("nemotron3 (miles' Nemotron3TITOTokenizer) on a synthetic Nemotron 3 checkpoint", () => {
  test("TestParserBinding: nemotron_3 reasoning, qwen3_coder tool calls; truncate_history_thinking pinned off", () => {
    expect([nemotron3.family.wire.reasoningParser, nemotron3.family.wire.toolCallParser]).toEqual(["nemotron_3", "qwen3_coder"]);
    expect(nemotron3.tito.defaultKwargs).toEqual({ truncate_history_thinking: false });
    expect(nemotron3.family.comparator.assistantStart).toBe("<|im_start|>assistant\n");
  });

  test("TestMergeTokensBoundary.test_qwen3_inserts_newline_after_im_end (inherited from Qwen3TITOTokenizer)", () => {
    const incremental = nemotron3.tito.tokenizeAppended(BOUNDARY.old, BOUNDARY.next, WEATHER);
    const imEnd = id(nemotron3, "<|im_end|>");
    const newline = nemotron3.tokenizer.encode("\n");
    expect(newline).toHaveLength(1);
    expect(nemotron3.tito.mergeTokens(BOUNDARY.old, BOUNDARY.next, [100, 200, imEnd], WEATHER)).toEqual([100, 200, imEnd, ...newline, ...incremental]);
  });

  test("TestMergeTokensBoundary.test_qwen3_no_newline_otherwise and test_empty_prefix", () => {
    const incremental = nemotron3.tito.tokenizeAppended(BOUNDARY.old, BOUNDARY.next, WEATHER);
    expect(nemotron3.tito.mergeTokens(BOUNDARY.old, BOUNDARY.next, [100, 200, 300], WEATHER)).toEqual([100, 200, 300, ...incremental]);
    expect(nemotron3.tito.mergeTokens(BOUNDARY.old, BOUNDARY.next, [], WEATHER)).toEqual(incremental);
  });
});

describe("start-up refusals name the family, the file and the missing piece", () => {
  test("a GLM checkpoint without <|observation|> cannot start glm47", async () => {
    const spec = glm47Spec();
    const directory = checkpoint({ ...spec, specialTokens: spec.specialTokens.filter((token) => token !== "<|observation|>") }, "glm-no-observation");
    const refusal = load("glm47", directory);
    await expect(refusal).rejects.toThrow(TitoModelError);
    await expect(refusal).rejects.toMatchObject({ problem: "missing-token", family: "glm47", file: "tokenizer.json" });
    await expect(refusal).rejects.toThrow(/<\|observation\|> token, which the glm47 family needs/);
  });

  test("a checkpoint without a chat template cannot start a checkpoint-template family", async () => {
    const directory = checkpoint({ ...nemotron3Spec(), chatTemplate: "" }, "nemotron-no-template");
    await expect(load("nemotron3", directory)).rejects.toMatchObject({ problem: "missing-template", family: "nemotron3" });
  });
});

/** The trajectory with a reasoning on every assistant turn (what a thinking model writes after a prompt opening <think>). */
function withReasoning(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message, i) =>
    message.role === "assistant" && message.reasoning_content === undefined ? { ...message, reasoning_content: `Step ${i}.` } : message,
  );
}

/**
 * Plays `messages` turn by turn as a session server stores them: the model's output for each assistant turn is the
 * text the template renders for it after the generation prompt, encoded, then the engine's stop token; at each later
 * request the merged ids must be the prompt rendered from scratch, and the mismatch report of the stored turn empty.
 * Returns how many merged prompts were checked.
 */
function play(model: LoadedModel, messages: readonly ChatMessage[], stop: (next: ChatMessage | undefined) => number): number {
  const { tito, tokenizer } = model;
  const kwargs = tito.defaultKwargs;
  let checked = 0;
  let stored: number[] | null = null;
  let storedMessages: ChatMessage[] = [];
  for (let i = 0; i < messages.length; i += 1) {
    if (messages[i].role !== "assistant" || (i > 0 && messages[i - 1].role === "assistant")) continue;
    const history = messages.slice(0, i);
    let prompt: number[];
    if (stored === null) prompt = tito.renderPromptIds(history, WEATHER);
    else {
      prompt = tito.mergeTokens(storedMessages, history, stored, WEATHER);
      expect(prompt).toEqual(tito.renderPromptIds(history, WEATHER));
      checked += 1;
    }
    const before = tokenizer.renderChatTemplate(history, { tools: WEATHER, addGenerationPrompt: true, kwargs });
    const after = tokenizer.renderChatTemplate(messages.slice(0, i + 1), { tools: WEATHER, kwargs });
    if (!after.startsWith(before)) throw new Error(`turn ${i}: the template's render of the turn does not extend its generation prompt`);
    let output = after.slice(before.length);
    // a ChatML family writes <|im_end|>\n after the turn: the model stops at <|im_end|> (its stop token)
    if (output.endsWith("<|im_end|>\n")) output = output.slice(0, -"<|im_end|>\n".length);
    stored = [...prompt, ...tokenizer.encode(output), stop(messages[i + 1])];
    storedMessages = messages.slice(0, i + 1);
    expect(tito.compareWithCanonical(storedMessages, stored, WEATHER)).toEqual([]);
  }
  return checked;
}

describe("whole conversations: merged ids equal the fresh render at every turn", () => {
  const glmStop = (model: LoadedModel) => (next: ChatMessage | undefined) => id(model, next?.role === "tool" ? "<|observation|>" : "<|user|>");
  const names = Object.keys(TRAJECTORIES);

  test.each(names)("glm47, thinking on (server default {}): %s", (name) => {
    expect(play(glm47, withReasoning(TRAJECTORIES[name]), glmStop(glm47))).toBeGreaterThan(0);
  });

  test.each(names.filter((name) => name !== "thinking"))("glm47, thinking off (server default enable_thinking=false): %s", async (name) => {
    const model = await load("glm47", glmDir, { enable_thinking: false });
    expect(play(model, TRAJECTORIES[name], glmStop(model))).toBeGreaterThan(0);
  });

  test.each(names)("glm53 (always thinking): %s", (name) => {
    expect(play(glm53, withReasoning(TRAJECTORIES[name]), glmStop(glm53))).toBeGreaterThan(0);
  });

  test.each(names)("nemotron3, thinking on: %s", (name) => {
    expect(play(nemotron3, withReasoning(TRAJECTORIES[name]), () => id(nemotron3, "<|im_end|>"))).toBeGreaterThan(0);
  });

  test("glm47 stopping on the other boundary token: still dropped, still the fresh render", () => {
    expect(play(glm47, withReasoning(TRAJECTORIES.systemRetry), (next) => id(glm47, next?.role === "tool" ? "<|user|>" : "<|observation|>"))).toBe(2);
  });

  test("test_qwen3_merge_preserves_non_assistant_structure (nemotron3): re-tokenized assistant text is the only difference", () => {
    // the template renders an empty reasoning as "<think>\n\n</think>": prompt and output split the "\n\n" apart
    const { old, next } = splits(TRAJECTORIES.systemRetry)[0];
    const stored = [...nemotron3.tito.renderPromptIds(old.slice(0, -1), WEATHER), ...nemotron3.tokenizer.encode("\n</think>\n"), id(nemotron3, "<|im_end|>")];
    const merged = nemotron3.tito.mergeTokens(old, next, stored, WEATHER);
    const report = nemotron3.tito.compareIds(nemotron3.tito.renderPromptIds(next, WEATHER), merged);
    expect(report.map((entry) => entry.type)).toEqual(["assistant_text"]);
  });
});

const missing = pythonMissing(["jinja2"]);
if (missing !== null) console.warn(`synthetic-checkpoint Jinja2 + Rust cross-check skipped: ${missing} (apt-get install -y python3-jinja2)`);
const testWithPython = missing === null ? test : test.skip;

describe("first-turn ids against Python's Jinja2 + HF's Rust tokenizers on the synthetic checkpoints", () => {
  testWithPython.each([
    ["glm47", () => glm47, () => glmDir],
    ["glm53", () => glm53, () => glm53Dir],
    ["nemotron3", () => nemotron3, () => nemotronDir],
  ] as const)("%s: every prefix of every trajectory, with and without tools", async (_name, model, directory) => {
    const cases: Array<{ messages: ChatMessage[]; tools: ToolSpec[] | null }> = [];
    for (const messages of Object.values(TRAJECTORIES)) {
      for (let k = 1; k <= messages.length; k += 1) {
        cases.push({ messages: messages.slice(0, k), tools: WEATHER }, { messages: messages.slice(0, k), tools: null });
      }
    }
    const kwargs = model().tito.defaultKwargs;
    const bodies = cases.map((c) => dumpsPy({ messages: c.messages, tools: c.tools, add_generation_prompt: true, kwargs }, PY_RESPONSE_JSON));
    const rendered = JSON.parse(
      runPythonScript("render_native_qwen3.py", JSON.stringify({ template: model().tokenizer.chatTemplate.source, cases: bodies })),
    ) as Array<string | { error: string }>;
    const rust = RustTokenizer.fromFile(path.join(directory(), "tokenizer.json"));
    for (const [index, c] of cases.entries()) {
      const python = rendered[index];
      if (typeof python !== "string") throw new Error(`case ${index}: Python failed: ${python.error}`);
      const theirs = (await rust.encode(python, null, { addSpecialTokens: false })).getIds();
      expect(model().tito.renderPromptIds(c.messages, c.tools)).toEqual(theirs);
    }
    expect(cases.length).toBe(44);
  });
});
