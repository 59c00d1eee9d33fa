// The deepseekv32 and deepseekv4 families on the real DeepSeek V3 vocabulary: class attributes, the kwargs bridge
// (aliases, the pinned drop_thinking, the derived thinking kwarg), the encoders' generation-prompt cut, routing by
// config.json model_type, the TITO boundary and suffix rules, the mismatch comparator and the start-up refusals.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { loadTitoModel, type LoadedModel } from "../../src/tokenizer";
import { deepSeekEncodeConfig, DeepSeekEncoderRenderer } from "../../src/tokenizer/deepseek/encoder-renderer";
import { encodeMessagesV32 } from "../../src/tokenizer/deepseek/encoding-dsv32";
import { encodeMessagesV4 } from "../../src/tokenizer/deepseek/encoding-dsv4";
import { readModelType } from "../../src/tokenizer/family-load";
import { verifyTemplate } from "../../src/verify/verify-template-api";
import { DEEPSEEKV32_FAMILY, DEEPSEEKV4_FAMILY, TitoModelError } from "../../src/tokenizer/families";
import { FamilyTito } from "../../src/tokenizer/tito";
import fc from "fast-check";
import { deepseekConversations } from "./deepseek/conversations";
import type { ChatMessage } from "../../src/tokenizer/types";
import { deepseekCheckpoint } from "./deepseek/checkpoint";

const dirs: string[] = [];
const made = new Map<string | null, string>();
/** One checkpoint directory per model type for the whole file (each new directory is a fresh vocabulary load). */
function checkpoint(modelType: string | null): string {
  let dir = made.get(modelType);
  if (dir === undefined) {
    dir = deepseekCheckpoint(modelType);
    dirs.push(dir);
    made.set(modelType, dir);
  }
  return dir;
}
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const THINKING_HISTORY: ChatMessage[] = [
  { role: "user", content: "q1" },
  { role: "assistant", content: "a1", reasoning_content: "r1" },
  { role: "user", content: "q2" },
  { role: "assistant", content: "a2", reasoning_content: "r2" },
];
const TOOL_TAIL_HISTORY: ChatMessage[] = [
  { role: "user", content: "q" },
  { role: "assistant", content: "", reasoning_content: "r", tool_calls: [{ type: "function", function: { name: "f", arguments: '{"a": 1}' } }] },
  { role: "tool", content: "out", tool_call_id: "c0" },
];
const TOOL = { type: "function", function: { name: "f", description: "d", parameters: { type: "object", properties: {} } } };

describe("class attributes (tito_tokenizer.py DeepSeekV32TITOTokenizer / DeepSeekV4TITOTokenizer at 31f1ca96)", () => {
  // mirrors tests/fast/utils/chat_template_utils/test_tito_tokenizer.py::TestParserBinding (the DeepSeek rows)
  test("parsers, pins, aliases, append roles, suffix render and comparator", () => {
    expect(DEEPSEEKV32_FAMILY).toMatchObject({
      pythonClass: "DeepSeekV32TITOTokenizer",
      template: { kind: "encoder", encoder: "deepseek_v32" },
      pinnedKwargs: { drop_thinking: false },
      allowedAppendRoles: ["tool", "user", "system", "assistant"],
      suffixRender: "dummy-prefix",
      wire: { toolCallParser: "deepseekv32", reasoningParser: "deepseek-v3" },
      comparator: { assistantStart: "<｜Assistant｜>" },
    });
    expect(DEEPSEEKV4_FAMILY).toMatchObject({
      pythonClass: "DeepSeekV4TITOTokenizer",
      template: { kind: "encoder", encoder: "deepseek_v4" },
      allowedAppendRoles: ["tool", "user", "assistant"],
      suffixRender: "real-history",
      wire: { toolCallParser: "deepseekv4", reasoningParser: "deepseek-v4" },
    });
    for (const family of [DEEPSEEKV32_FAMILY, DEEPSEEKV4_FAMILY])
      expect([...family.kwargAliases].sort()).toEqual(["enable_thinking", "thinking", "thinking_mode"]);
  });
});

describe("the kwargs bridge (deepseek.py DeepSeekFamily._build_encode_config)", () => {
  // mirrors test_deepseek_v32.py::test_enable_thinking_true_maps_to_thinking ... test_build_config_does_not_mutate_input_kwargs
  test("enable_thinking and thinking select the mode, an explicit thinking_mode wins, thinking is the default", () => {
    expect(deepSeekEncodeConfig({ enable_thinking: true })).toEqual({ thinking_mode: "thinking" });
    expect(deepSeekEncodeConfig({ enable_thinking: false })).toEqual({ thinking_mode: "chat" });
    expect(deepSeekEncodeConfig({})).toEqual({ thinking_mode: "thinking" });
    expect(deepSeekEncodeConfig({ enable_thinking: null })).toEqual({ thinking_mode: "thinking" });
    expect(deepSeekEncodeConfig({ enable_thinking: false, thinking_mode: "thinking" })).toEqual({ thinking_mode: "thinking" });
    expect(deepSeekEncodeConfig({ thinking: 0, drop_thinking: false })).toEqual({ drop_thinking: false, thinking_mode: "chat" });
    const input = { enable_thinking: true };
    deepSeekEncodeConfig(input);
    expect(input).toEqual({ enable_thinking: true });
  });

  // mirrors test_deepseek_v32.py::test_reject_unknown_kwargs and test_deepseek_v4.py::test_reasoning_effort_invalid_value_raises
  test("an unknown kwarg and a bad reasoning effort are refused with the encoder's text", () => {
    const v32 = new DeepSeekEncoderRenderer("deepseek_v32");
    const v4 = new DeepSeekEncoderRenderer("deepseek_v4");
    const messages: ChatMessage[] = [{ role: "user", content: "hi" }];
    expect(() => v32.render(messages, { kwargs: { clear_thinking: false } })).toThrow("encode_messages() got an unexpected keyword argument 'clear_thinking'");
    expect(() => v32.render(messages, { kwargs: { reasoning_effort: "max" } })).toThrow(/unexpected keyword argument 'reasoning_effort'/);
    expect(() => v4.render(messages, { kwargs: { reasoning_effort: "low" } })).toThrow("Invalid reasoning effort: low");
    expect(() => v4.render(messages, { kwargs: { thinking_mode: "fast" } })).toThrow("Invalid thinking_mode `fast`");
  });

  // mirrors test_deepseek_v4.py::test_reasoning_effort_max_differs_from_none / test_reasoning_effort_omitted_equals_none
  test("reasoning_effort max prefixes the prompt in thinking mode only; high and none render alike", () => {
    const v4 = new DeepSeekEncoderRenderer("deepseek_v4");
    const messages: ChatMessage[] = [{ role: "user", content: "hi" }];
    const plain = v4.render(messages, { addGenerationPrompt: true });
    expect(v4.render(messages, { addGenerationPrompt: true, kwargs: { reasoning_effort: "high" } })).toBe(plain);
    expect(v4.render(messages, { addGenerationPrompt: true, kwargs: { reasoning_effort: "max" } })).toMatch(
      /^<｜begin▁of▁sentence｜>Reasoning Effort: Absolute maximum/,
    );
    expect(v4.render(messages, { addGenerationPrompt: true, kwargs: { reasoning_effort: "max", enable_thinking: false } })).not.toContain("Reasoning Effort");
  });
});

describe("renders (encoding_dsv32 with miles' drop_thinking=False)", () => {
  // mirrors test_deepseek_v32.py::test_drop_thinking_false_renders_historical_thinking
  test("drop_thinking=False keeps every assistant's thinking; True drops the earlier ones", () => {
    const kept = encodeMessagesV32(THINKING_HISTORY, { thinkingMode: "thinking", dropThinking: false });
    const dropped = encodeMessagesV32(THINKING_HISTORY, { thinkingMode: "thinking", dropThinking: true });
    expect(kept).toContain("r1");
    expect(kept).toContain("r2");
    expect(dropped).not.toContain("r1");
  });

  // mirrors test_drop_thinking_false_is_append_only_across_user_append / test_drop_thinking_true_is_not_append_only_across_user_append
  test.each([
    ["user turns", THINKING_HISTORY],
    ["tool tail", TOOL_TAIL_HISTORY],
  ])("%s: a user append extends the render with drop_thinking=False, not with True", (_label, history) => {
    const next = [...history, { role: "user", content: "next" }];
    const render = (messages: ChatMessage[], dropThinking: boolean): string => encodeMessagesV32(messages, { thinkingMode: "thinking", dropThinking });
    expect(render(next, false).startsWith(render(history, false))).toBe(true);
    expect(render(next, true).startsWith(render(history, true))).toBe(false);
  });

  // mirrors test_deepseek_v32.py::test_add_generation_prompt_false_strips_the_auto_opener / ..._tool_tail_suffix /
  // ..._noop_on_partial_tool_results / ..._noop_on_assistant_tail
  test("without the generation prompt the opener after a user turn or a finished tool block is cut, nothing else", () => {
    const v32 = new DeepSeekEncoderRenderer("deepseek_v32");
    const user: ChatMessage[] = [{ role: "user", content: "hi" }];
    expect(v32.render(user, { addGenerationPrompt: true })).toBe("<｜begin▁of▁sentence｜><｜User｜>hi<｜Assistant｜><think>");
    expect(v32.render(user, { addGenerationPrompt: false })).toBe("<｜begin▁of▁sentence｜><｜User｜>hi");
    expect(v32.render(user, { kwargs: { enable_thinking: false } })).toBe("<｜begin▁of▁sentence｜><｜User｜>hi");
    expect(v32.render(TOOL_TAIL_HISTORY, { addGenerationPrompt: true, kwargs: { drop_thinking: false } })).toMatch(/<\/function_results>\n\n<think>$/);
    expect(v32.render(TOOL_TAIL_HISTORY, { kwargs: { drop_thinking: false } })).toMatch(/<\/function_results>$/);
    const partial: ChatMessage[] = [
      { role: "user", content: "q" },
      { role: "assistant", content: "", tool_calls: [1, 2].map((i) => ({ id: `c${i}`, type: "function" as const, function: { name: "f", arguments: "{}" } })) },
      { role: "tool", content: "one", tool_call_id: "c1" },
    ];
    expect(v32.render(partial)).toBe(v32.render(partial, { addGenerationPrompt: true }));
    const assistantTail = THINKING_HISTORY.slice(0, 2);
    expect(v32.render(assistantTail)).toBe(v32.render(assistantTail, { addGenerationPrompt: true }));
  });

  // mirrors test_deepseek_v32.py::test_render_with_tools_injects_into_system_functions_block / ..._reuses_existing_system_message /
  // ..._does_not_mutate_input, and test_deepseek_v4.py::test_bare_function_dict_rejected
  test("tools go into the system message (an empty one when there is none); the input is not changed; bare functions are refused", () => {
    const v32 = new DeepSeekEncoderRenderer("deepseek_v32");
    const messages: ChatMessage[] = [{ role: "user", content: "hi" }];
    const injected = v32.render(messages, { tools: [TOOL], addGenerationPrompt: true });
    expect(injected).toMatch(/^<｜begin▁of▁sentence｜>\n\n## Tools\n/);
    expect(injected).toContain(
      '<functions>\n{"description": "d", "name": "f", "parameters": {"type": "object", "properties": {}}, "strict": false}\n</functions>\n<｜User｜>hi',
    );
    const withSystem = v32.render([{ role: "system", content: "You are helpful." }, ...messages], { tools: [TOOL] });
    expect(withSystem).toMatch(/^<｜begin▁of▁sentence｜>You are helpful\.\n\n## Tools\n/);
    expect(messages).toEqual([{ role: "user", content: "hi" }]);
    expect(() => v32.render(messages, { tools: [TOOL.function] })).toThrow(/tools\[0\] is not an OpenAI tool/);
  });
});

describe("renders (SGLang's encoding_dsv4)", () => {
  // mirrors test_deepseek_v4.py::test_add_generation_prompt_false_strips_one_opener_after_tool_and_user_tail
  test("adjacent tool results and a user turn fold into one user block; the cut removes one opener", () => {
    const v4 = new DeepSeekEncoderRenderer("deepseek_v4");
    const messages: ChatMessage[] = [
      { role: "user", content: "q" },
      {
        role: "assistant",
        content: "",
        tool_calls: ["b", "a"].map((id) => ({ id, type: "function" as const, function: { name: "f", arguments: `{"x": "${id}"}` } })),
      },
      { role: "tool", content: "from a", tool_call_id: "a" },
      { role: "tool", content: "from b", tool_call_id: "b" },
      { role: "user", content: "and now?" },
    ];
    const rendered = v4.render(messages, { addGenerationPrompt: true, kwargs: { thinking_mode: "chat" } });
    // the results follow the calls' order (b first), then the user text, all in one block
    expect(rendered).toMatch(
      /<｜end▁of▁sentence｜><｜User｜><tool_result>from b<\/tool_result>\n\n<tool_result>from a<\/tool_result>\n\nand now\?<｜Assistant｜><\/think>$/,
    );
    expect(v4.render(messages, { kwargs: { thinking_mode: "chat" } })).toBe(rendered.slice(0, -"<｜Assistant｜></think>".length));
  });

  // mirrors test_deepseek_v4.py::test_add_generation_prompt_false_noop_on_empty_wo_eos_assistant_tail / ..._noop_on_task_tail
  test("a wo_eos assistant tail and a task tail are left as rendered; a system tail gets no opener", () => {
    const v4 = new DeepSeekEncoderRenderer("deepseek_v4");
    const woEos: ChatMessage[] = [
      { role: "user", content: "q" },
      { role: "assistant", content: "", wo_eos: true },
    ];
    expect(v4.render(woEos)).toBe(v4.render(woEos, { addGenerationPrompt: true }));
    const task: ChatMessage[] = [{ role: "user", content: "q", task: "query" }];
    expect(v4.render(task)).toBe("<｜begin▁of▁sentence｜><｜User｜>q<｜query｜>");
    // miles PR #2202: a system tail renders no assistant opener, with or without the generation prompt
    const system: ChatMessage[] = [
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
      { role: "system", content: "s" },
    ];
    expect(v4.render(system, { addGenerationPrompt: true })).toMatch(/<｜end▁of▁sentence｜>s$/);
  });

  test("V4 arguments that are not JSON become one `arguments` parameter", () => {
    const rendered = encodeMessagesV4(
      [
        { role: "user", content: "q" },
        { role: "assistant", content: "", tool_calls: [{ type: "function", function: { name: "f", arguments: "not json" } }] },
      ],
      { thinkingMode: "chat", dropThinking: false },
    );
    expect(rendered).toContain('<｜DSML｜parameter name="arguments" string="true">not json</｜DSML｜parameter>');
  });
});

describe("on the DeepSeek V3 vocabulary", () => {
  let v32: LoadedModel;
  let v4: LoadedModel;
  beforeAll(async () => {
    v32 = await loadTitoModel({ titoModel: "deepseekv32", hfCheckpoint: checkpoint("deepseek_v32") });
    v4 = await loadTitoModel({ titoModel: "deepseekv4", hfCheckpoint: checkpoint("deepseek_v4") });
  }, 60_000);

  test("the pinned drop_thinking: a conflicting request gets Python's text, a conflicting server default cannot start", async () => {
    expect(() => v32.tito.mergeKwargs({ drop_thinking: true })).toThrow(
      "chat template kwarg drop_thinking=True conflicts with the value registered for DeepSeekV32TITOTokenizer: False",
    );
    await expect(loadTitoModel({ titoModel: "deepseekv4", hfCheckpoint: checkpoint("deepseek_v4"), chatTemplateKwargs: { drop_thinking: 1 } })).rejects.toThrow(
      /drop_thinking=1 conflicts with the value registered for DeepSeekV4TITOTokenizer: False \(server default\)/,
    );
  });

  // mirrors DeepSeekV32TITOTokenizer.__init__ (thinking = render_thinking_enabled) and merge_chat_template_kwargs(alias_keys)
  test("thinking is derived after every merge, and one alias in a request replaces the whole group", async () => {
    const served = await loadTitoModel({ titoModel: "deepseekv32", hfCheckpoint: checkpoint("deepseek_v32"), chatTemplateKwargs: { enable_thinking: false } });
    expect(served.tito.defaultKwargs).toEqual({ enable_thinking: false, drop_thinking: false, thinking: false });
    expect(served.tito.mergeKwargs({ thinking_mode: "thinking" })).toEqual({ drop_thinking: false, thinking_mode: "thinking", thinking: true });
    expect(served.tito.mergeKwargs({ reasoning: 1 })).toEqual({ enable_thinking: false, drop_thinking: false, thinking: false, reasoning: 1 });
    expect(v4.tito.defaultKwargs).toEqual({ drop_thinking: false, thinking: true });
  });

  test("V3.2 appends by concatenation after the stored ids; V4 diffs the real history and refuses a system turn", () => {
    const first: ChatMessage[] = [{ role: "user", content: "hi" }];
    const reply: ChatMessage = { role: "assistant", content: "hello" };
    const next = [...first, reply, { role: "user", content: "again" }];
    for (const model of [v32, v4]) {
      const full = model.tito.renderPromptIds(next, null);
      const stored = model.tito.canonicalIds([...first, reply], null);
      expect(model.tito.mergeTokens([...first, reply], next, stored, null)).toEqual(full);
    }
    expect(() => v4.tito.mergeTokens([...first, reply], [...first, reply, { role: "system", content: "s" }], [], null)).toThrow(
      /role "system", which the deepseekv4 TITO template cannot append; allowed roles: tool, user, assistant/,
    );
  });

  // mirrors DeepSeekV4TITOTokenizer.tokenize_additional_messages: the tail-only render equals the diff of the real renders
  test("V4's appended suffix rendered from the tail alone equals the diff of the whole renders (200 random conversations)", () => {
    const whole = new FamilyTito(v4.tokenizer, {}, {}, DEEPSEEKV4_FAMILY);
    let compared = 0;
    for (const c of fc.sample(deepseekConversations("deepseekv4"), { numRuns: 200, seed: 4804 })) {
      let history = [...c.first];
      for (const turn of c.turns) {
        const old = [...history, turn.reply];
        const next = [...old, ...turn.appended];
        const fast = v4.tito.tokenizeAppended(old, next, c.tools, c.kwargs);
        const full = whole.tokenizeAppended(old, next, c.tools, c.kwargs);
        if (JSON.stringify(fast) !== JSON.stringify(full)) throw new Error(`suffix differs for ${JSON.stringify(next)}`);
        compared += 1;
        history = next;
      }
    }
    expect(compared).toBeGreaterThan(400);
  });

  test("the comparator cuts at <｜User｜> / <｜Assistant｜> only and names an assistant text difference", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello there" },
    ];
    const canonical = v32.tito.canonicalIds(messages, null);
    const changed = v32.tokenizer.encode(
      v32.tokenizer.renderChatTemplate([messages[0], { role: "assistant", content: "hello here" }], {
        kwargs: v32.tito.defaultKwargs,
      }),
    );
    expect(v32.tito.compareWithCanonical(messages, canonical, null)).toEqual([]);
    const report = v32.tito.compareIds(canonical, changed);
    expect(report.map((entry) => entry.type)).toEqual(["assistant_text"]);
  });

  test("/health's family and the template origin name the encoder", () => {
    expect(v32.family.name).toBe("deepseekv32");
    expect(v32.templateOrigin).toBe("encoding_dsv32.py");
    expect(v4.templateOrigin).toBe("encoding_dsv4.py");
  });
});

describe("routing by config.json model_type (deepseek.py _read_model_type / model_type)", () => {
  // mirrors test_deepseek_v32.py::test_detect_dsv32_by_config, test_detect_missing_config_falls_back,
  // test_detect_invalid_config_falls_back, test_detect_non_object_config_falls_back
  test("model_type is read from config.json; a missing, broken or non-object file reads as none", () => {
    expect(readModelType(checkpoint("deepseek_v32"))).toBe("deepseek_v32");
    expect(readModelType(checkpoint(null))).toBe("");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "model-type-"));
    dirs.push(dir);
    fs.writeFileSync(path.join(dir, "config.json"), "{not json");
    expect(readModelType(dir)).toBe("");
    fs.writeFileSync(path.join(dir, "config.json"), "[1]");
    expect(readModelType(dir)).toBe("");
  });

  test("the default family renders a deepseek_v32 checkpoint through the encoder, as miles' apply_chat_template routes it", async () => {
    const model = await loadTitoModel({ titoModel: "default", hfCheckpoint: checkpoint("deepseek_v32") });
    expect(model.templateOrigin).toBe("encoding_dsv32.py");
    expect(model.tokenizer.renderChatTemplate([{ role: "user", content: "hi" }], { addGenerationPrompt: true })).toBe(
      "<｜begin▁of▁sentence｜><｜User｜>hi<｜Assistant｜><think>",
    );
  });

  test("a family whose encoder the checkpoint's model_type contradicts refuses to start, naming family, file and piece", async () => {
    const error = await loadTitoModel({ titoModel: "deepseekv32", hfCheckpoint: checkpoint("deepseek_v4") }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TitoModelError);
    expect(error).toMatchObject({ family: "deepseekv32", file: "config.json" });
    expect((error as Error).message).toMatch(/--tito-model deepseekv32: .* declares model_type "deepseek_v4" in config\.json; .* model_type "deepseek_v32"/);
  });

  test("a vocabulary without <｜User｜> cannot start the family: the refusal names the token and tokenizer.json", async () => {
    const error = await loadTitoModel({ titoModel: "deepseekv4" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TitoModelError);
    expect(error).toMatchObject({ problem: "missing-token", family: "deepseekv4", file: "tokenizer.json" });
    expect((error as Error).message).toMatch(/has no <｜Assistant｜> token, which the deepseekv4 family needs/);
  });
});

describe("verify-template through the families' TITO (miles' scripts/tools/verify_chat_template.py)", () => {
  test("deepseekv4 passes every check, thinking on and off", async () => {
    for (const thinking of ["on", "off"] as const) {
      const report = await verifyTemplate({ titoModel: "deepseekv4", hfCheckpoint: checkpoint("deepseek_v4"), thinking });
      expect(report.templateSource).toBe("encoder via TITO: encoding_dsv4.py");
      expect(report.results.filter((result) => !result.passed).map((result) => result.id)).toEqual([]);
      expect(report.summary.pass).toBe(true);
    }
  });

  test("deepseekv32 fails only where the V3.2 encoder itself breaks append-safety, each failure naming why", async () => {
    const report = await verifyTemplate({ titoModel: "deepseekv32", hfCheckpoint: checkpoint("deepseek_v32"), thinking: "both" });
    const failed = report.results.filter((result) => !result.passed);
    expect(report.summary.pass).toBe(false);
    expect(failed.length).toBeGreaterThan(0);
    for (const result of failed) {
      // a tool result must follow its assistant directly (a system turn between them is refused by the encoder), and a
      // tool block rendered without the generation prompt loses the opener the encoder writes inside the tool turn
      expect(result.error).toMatch(/Invalid messages at \d+|<\/function_results>/);
    }
  });
});
