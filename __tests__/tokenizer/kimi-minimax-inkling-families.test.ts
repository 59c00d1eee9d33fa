// kimi25, kimi26, minimax_m25, minimax_m27 and inkling on synthetic checkpoints: the class attributes, boundary
// rules, comparator configuration and refusals exactly as miles pins them; each test names the Python test it mirrors
// (tests/fast/utils/chat_template_utils/test_tito_tokenizer.py at miles 31f1ca96) or the rule of tito_tokenizer.py.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import { loadTitoModel, TitoError, TitoModelError, type ChatMessage, type LoadedModel, type ToolSpec } from "../../src/tokenizer";
import { getTitoFamily } from "../../src/tokenizer/families";
import { inklingSpec, kimi25Spec, kimi26Spec, minimaxSpec, writeSyntheticCheckpoint, type SyntheticCheckpointSpec } from "./synthetic-checkpoint";

const directories: string[] = [];
function checkpoint(spec: SyntheticCheckpointSpec, name: string): string {
  const directory = writeSyntheticCheckpoint(spec, name);
  directories.push(directory);
  return directory;
}
afterAll(() => {
  for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
});

let kimi25: LoadedModel;
let kimi26: LoadedModel;
let minimax: LoadedModel;
let minimax27: LoadedModel;
let inkling: LoadedModel;
let minimaxDir: string;

beforeAll(async () => {
  minimaxDir = checkpoint(minimaxSpec(), "minimax");
  [kimi25, kimi26, minimax, minimax27, inkling] = await Promise.all([
    loadTitoModel({ titoModel: "kimi25", hfCheckpoint: checkpoint(kimi25Spec(), "kimi25") }),
    loadTitoModel({ titoModel: "kimi26", hfCheckpoint: checkpoint(kimi26Spec(), "kimi26") }),
    loadTitoModel({ titoModel: "minimax_m25", hfCheckpoint: minimaxDir }),
    loadTitoModel({ titoModel: "minimax_m27", hfCheckpoint: minimaxDir }),
    loadTitoModel({ titoModel: "inkling", hfCheckpoint: checkpoint(inklingSpec(), "inkling") }),
  ]);
});

const id = (model: LoadedModel, token: string): number => {
  const found = model.tokenizer.tokenToId(token);
  if (found === undefined) throw new Error(`no ${token}`);
  return found;
};

const WEATHER: ToolSpec[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Weather",
      parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
    },
  },
];
const OLD: ChatMessage[] = [
  { role: "user", content: "Weather in Beijing?" },
  {
    role: "assistant",
    content: "",
    reasoning_content: "Look it up.",
    tool_calls: [{ id: "functions.get_weather:0", type: "function", function: { name: "get_weather", arguments: '{"location": "Beijing"}' } }],
  },
];
const NEW: ChatMessage[] = [...OLD, { role: "tool", tool_call_id: "functions.get_weather:0", content: "sunny" }];

describe("TestParserBinding.test_subclass_binding (the five rows) and the pinned kwargs", () => {
  test.each([
    ["kimi25", null, null, "Kimi25TITOTokenizer", { preserve_thinking: true }],
    ["kimi26", "kimi_k2", "kimi_k2_raw_id", "Kimi26TITOTokenizer", { preserve_thinking: true }],
    ["minimax_m25", "minimax-append-think", "minimax-m2", "MinimaxM25TITOTokenizer", { clear_thinking: false }],
    ["minimax_m27", "minimax-append-think", "minimax-m2", "MinimaxM27TITOTokenizer", { clear_thinking: false }],
    ["inkling", "inkling", "inkling", "InklingTITOTokenizer", {}],
  ])("%s: reasoning %s, tool calls %s, class %s, extra_kwargs %j", (name, reasoning, toolCalls, pythonClass, pinned) => {
    const family = getTitoFamily(name);
    expect([family.wire.reasoningParser, family.wire.toolCallParser]).toEqual([reasoning, toolCalls]);
    expect(family.pythonClass).toBe(pythonClass);
    expect(family.pinnedKwargs).toEqual(pinned);
  });

  test("a conflicting request or server default gets Python's ValueError text (the 400 of a request)", async () => {
    expect(() => kimi25.tito.mergeKwargs({ preserve_thinking: false })).toThrow(
      new TitoError("chat template kwarg preserve_thinking=False conflicts with the value registered for Kimi25TITOTokenizer: True"),
    );
    expect(() => minimax.tito.mergeKwargs({ clear_thinking: 1 })).toThrow(
      "chat template kwarg clear_thinking=1 conflicts with the value registered for MinimaxM25TITOTokenizer: False",
    );
    // Python's `!=`: 0 equals False, so repeating the pinned value in another spelling is accepted
    expect(minimax.tito.mergeKwargs({ clear_thinking: 0 })).toMatchObject({ clear_thinking: false });
    await expect(loadTitoModel({ titoModel: "minimax_m27", hfCheckpoint: minimaxDir, chatTemplateKwargs: { clear_thinking: true } })).rejects.toMatchObject({
      problem: "bad-kwargs",
      family: "minimax_m27",
      message: "chat template kwarg clear_thinking=True conflicts with the value registered for MinimaxM27TITOTokenizer: False (server default)",
    });
  });

  test("kimi26 renders the checkpoint's own template; the others miles' fixed templates, shipped unchanged", () => {
    expect(kimi26.templateOrigin).toBe("chat_template.jinja");
    expect([kimi25, minimax, minimax27, inkling].map((model) => model.templateOrigin)).toEqual([
      "kimi_k25_fixed.jinja",
      "minimax_m25_fixed.jinja",
      "minimax_m27_fixed.jinja",
      "inkling_fixed.jinja",
    ]);
    // MinimaxM27TITOTokenizer: M2.5's rules, another default system identity
    const user: ChatMessage[] = [{ role: "user", content: "hi" }];
    expect(minimax.tokenizer.renderChatTemplate(user, { kwargs: minimax.tito.defaultKwargs })).toContain("Your name is MiniMax-M2.5");
    expect(minimax27.tokenizer.renderChatTemplate(user, { kwargs: minimax27.tito.defaultKwargs })).toContain("Your name is MiniMax-M2.7");
    expect(minimax27.family.boundary).toEqual(minimax.family.boundary);
  });
});

describe("the boundary rule (merge_tokens) of each family", () => {
  test("MinimaxM25TITOTokenizer.merge_tokens: a stored [e~[ gets the template's newline (as test_qwen3_inserts_newline_after_im_end)", () => {
    const incremental = minimax.tito.tokenizeAppended(OLD, NEW, WEATHER);
    const eos = id(minimax, "[e~[");
    const newline = minimax.tokenizer.encode("\n");
    expect(newline).toHaveLength(1);
    expect(minimax.tito.mergeTokens(OLD, NEW, [100, 200, eos], WEATHER)).toEqual([100, 200, eos, ...newline, ...incremental]);
  });

  test("MinimaxM25 no newline otherwise, and an empty prefix (test_qwen3_no_newline_otherwise, test_empty_prefix)", () => {
    const incremental = minimax.tito.tokenizeAppended(OLD, NEW, WEATHER);
    expect(minimax.tito.mergeTokens(OLD, NEW, [100, 200, 300], WEATHER)).toEqual([100, 200, 300, ...incremental]);
    expect(minimax.tito.mergeTokens(OLD, NEW, [], WEATHER)).toEqual(incremental);
    expect(minimax.tokenizer.decode(incremental)).toBe("]~b]tool\n<response>sunny</response>[e~[\n]~b]ai\n<think>\n");
  });

  test("Kimi and Inkling concatenate (test_default_concatenates): no id added or dropped after <|im_end|>", () => {
    for (const model of [kimi25, kimi26, inkling]) {
      const incremental = model.tito.tokenizeAppended(OLD, NEW, WEATHER);
      const last = id(model, model === inkling ? "<|content_model_end_sampling|>" : "<|im_end|>");
      expect(model.tito.mergeTokens(OLD, NEW, [100, last], WEATHER)).toEqual([100, last, ...incremental]);
    }
    expect(kimi25.tokenizer.decode(kimi25.tito.tokenizeAppended(OLD, NEW, WEATHER))).toBe(
      "<|im_system|>tool<|im_middle|>## Return of functions.get_weather:0\nsunny<|im_end|><|im_assistant|>assistant<|im_middle|><think>",
    );
    expect(inkling.tokenizer.decode(inkling.tito.tokenizeAppended(OLD, NEW, WEATHER))).toBe(
      "<|message_tool|>get_weather<|content_text|>sunny<|end_message|><|message_model|>",
    );
  });

  test("FixedTemplate.allowed_append_roles: MiniMax refuses a mid-session system message naming the family; the others take all four", () => {
    const withSystem: ChatMessage[] = [...NEW, { role: "system", content: "be brief" }];
    expect(() => minimax.tito.tokenizeAppended(OLD, withSystem, WEATHER)).toThrow(
      'appended message 3 has role "system", which the minimax_m25 TITO template cannot append; allowed roles: tool, user, assistant',
    );
    for (const model of [kimi25, kimi26, inkling]) expect(model.tito.tokenizeAppended(OLD, withSystem, WEATHER).length).toBeGreaterThan(0);
  });
});

describe("the comparator of each family (create_comparator)", () => {
  test("_kimi_segment_special_token_ids: <|im_middle|> is no boundary, so changed assistant text after it stays assistant_text", () => {
    const canonical = kimi25.tito.canonicalIds(OLD, WEATHER);
    const text = kimi25.tokenizer.decode(canonical);
    const changed = kimi25.tokenizer.encode(text.replace("Look it up.", "Look it up!"));
    expect(kimi25.tito.compareIds(canonical, changed).map((entry) => entry.type)).toEqual(["assistant_text"]);
    // a user turn's text is a hard (non-assistant) difference
    const user = kimi25.tokenizer.encode(text.replace("Weather in Beijing?", "Weather in Paris?"));
    expect(kimi25.tito.compareIds(canonical, user).map((entry) => entry.type)).toEqual(["non_assistant_text"]);
  });

  test("MinimaxM25: the comparator strips the trailing newline (trailing_token_ids = {newline})", () => {
    const canonical = minimax.tito.canonicalIds(OLD, WEATHER);
    expect(minimax.tokenizer.decode(canonical.slice(-2))).toBe("[e~[\n");
    expect(minimax.tito.compareIds(canonical, canonical.slice(0, -1))).toEqual([]);
  });

  test("TestInklingComparatorBoundaries.test_appended_non_assistant_content_is_not_assistant_text (user, system, tool)", () => {
    for (const role of ["user", "system", "tool"]) {
      const assistant = [id(inkling, "<|message_model|>"), ...inkling.tokenizer.encode("assistant")];
      const roleToken = id(inkling, `<|message_${role}|>`);
      const expected = [...assistant, roleToken, ...inkling.tokenizer.encode("expected")];
      const actual = [...assistant, roleToken, ...inkling.tokenizer.encode("changed")];
      expect(inkling.tito.compareIds(expected, actual).map((entry) => entry.type)).toEqual(["non_assistant_text"]);
    }
  });

  test("TestInklingComparatorBoundaries.test_assistant_content_remains_soft_mismatch, and only the four role tokens cut segments", () => {
    const model = id(inkling, "<|message_model|>");
    const expected = [model, ...inkling.tokenizer.encode("expected")];
    expect(inkling.tito.compareIds(expected, [model, ...inkling.tokenizer.encode("changed")]).map((entry) => entry.type)).toEqual(["assistant_text"]);
    // test_uses_exact_message_role_boundaries: <|content_text|> is special in the vocabulary but no boundary here
    const text = id(inkling, "<|content_text|>");
    const withText = [model, text, ...inkling.tokenizer.encode("expected")];
    expect(inkling.tito.compareIds(withText, [model, text, ...inkling.tokenizer.encode("changed")]).map((entry) => entry.type)).toEqual(["assistant_text"]);
  });
});

describe("TestInklingFixedTemplate (through our renderer of the shipped file)", () => {
  const render = (messages: ChatMessage[]): string => inkling.tokenizer.renderChatTemplate(messages, { addGenerationPrompt: false });

  test("test_tool_call_only_turn_skips_empty_text_block", () => {
    const rendered = render([
      { role: "user", content: "weather?" },
      {
        role: "assistant",
        content: "",
        reasoning_content: "check",
        tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"location": "Beijing"}' } }],
      },
    ]);
    expect(rendered).not.toContain("<|message_model|><|content_text|><|end_message|>");
    expect(rendered).toContain(
      '<|message_model|><|content_thinking|>check<|end_message|><|message_model|>get_weather<|content_invoke_tool_json|>{"name":"get_weather",' +
        '"args":{"location":"Beijing"}}<|end_message|><|content_model_end_sampling|>',
    );
  });

  test("test_empty_assistant_turn_skips_bare_terminator", () => {
    const rendered = render([
      { role: "user", content: "hello" },
      { role: "assistant", content: "" },
    ]);
    expect(rendered).not.toContain("<|message_model|>");
    expect(rendered).not.toContain("<|content_model_end_sampling|>");
  });

  test("test_nonempty_reasoning_and_final_text_are_preserved", () => {
    expect(
      render([
        { role: "user", content: "hello" },
        { role: "assistant", content: "done", reasoning_content: "think" },
      ]),
    ).toContain("<|message_model|><|content_thinking|>think<|end_message|><|message_model|><|content_text|>done<|end_message|><|content_model_end_sampling|>");
  });
});

describe("refusals name the family, the file and the missing piece", () => {
  test("a MiniMax checkpoint without [e~[ cannot start minimax_m25", async () => {
    const spec = minimaxSpec();
    const directory = checkpoint({ ...spec, specialTokens: spec.specialTokens.filter((token) => token !== "[e~["), eosToken: "]~!b[" }, "minimax-no-eos");
    const refusal = loadTitoModel({ titoModel: "minimax_m25", hfCheckpoint: directory });
    await expect(refusal).rejects.toThrow(TitoModelError);
    await expect(refusal).rejects.toMatchObject({ problem: "missing-token", family: "minimax_m25", file: "tokenizer.json" });
    await expect(refusal).rejects.toThrow(/has no \[e~\[ token, which the minimax_m25 family needs$/);
  });

  test("a Kimi checkpoint without <|im_middle|> cannot start kimi25; one without a template cannot start kimi26", async () => {
    const spec = kimi25Spec();
    const directory = checkpoint({ ...spec, specialTokens: spec.specialTokens.filter((token) => token !== "<|im_middle|>") }, "kimi-no-middle");
    await expect(loadTitoModel({ titoModel: "kimi25", hfCheckpoint: directory })).rejects.toThrow(
      /has no <\|im_middle\|> token, which the kimi25 family needs$/,
    );
    await expect(loadTitoModel({ titoModel: "kimi26", hfCheckpoint: checkpoint(kimi25Spec(), "kimi26-no-template") })).rejects.toMatchObject({
      problem: "missing-template",
      family: "kimi26",
      file: "tokenizer_config.json",
    });
  });

  test("inkling without <|message_tool|> is refused; --chat-template-path is refused for every named family", async () => {
    const spec = inklingSpec();
    const directory = checkpoint({ ...spec, specialTokens: spec.specialTokens.filter((token) => token !== "<|message_tool|>") }, "inkling-no-tool-role");
    await expect(loadTitoModel({ titoModel: "inkling", hfCheckpoint: directory })).rejects.toThrow(
      /has no <\|message_tool\|> token, which the inkling family needs$/,
    );
    for (const titoModel of ["kimi25", "kimi26", "minimax_m25", "minimax_m27", "inkling"]) {
      await expect(loadTitoModel({ titoModel, hfCheckpoint: minimaxDir, chatTemplatePath: __filename })).rejects.toMatchObject({
        problem: "template-path-refused",
        message: `--chat-template-path cannot override the template registered for --tito-model=${titoModel}; use --tito-model=default for a custom template`,
      });
    }
  });
});

describe("inkling.is_inkling: config.json model_type routes any family's render to the Inkling template", () => {
  test("--tito-model default on a checkpoint whose config.json says inkling_mm_model renders inkling_fixed.jinja", async () => {
    const directory = checkpoint({ ...inklingSpec(), chatTemplate: "{{ 'the checkpoint template' }}" }, "inkling-default");
    const model = await loadTitoModel({ titoModel: "default", hfCheckpoint: directory });
    expect(model.templateOrigin).toBe("inkling_fixed.jinja");
    expect(model.tokenizer.renderChatTemplate([{ role: "user", content: "hi" }], { addGenerationPrompt: true })).toBe(
      "<|message_system|><|content_text|>Thinking effort level: 0.9<|end_message|><|message_user|><|content_text|>hi<|end_message|><|message_model|>",
    );
    // another model_type keeps the checkpoint's own template
    const other = checkpoint({ ...inklingSpec(), chatTemplate: "{{ 'the checkpoint template' }}", modelConfig: { model_type: "llama" } }, "not-inkling");
    expect((await loadTitoModel({ titoModel: "default", hfCheckpoint: other })).templateOrigin).toBe("tokenizer_config.json");
  });
});
