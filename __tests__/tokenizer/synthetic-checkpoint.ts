// Test helper: small Hugging Face checkpoints for families whose vocabulary no package ships (GLM, Nemotron 3),
// written at test time: a byte-level BPE tokenizer.json holding the family's special tokens, its config, a template.
//
// It lives with the tests, not in src: a user onboarding a model has the model's real checkpoint, and a synthetic
// vocabulary proves only that our family rules hold, which is what the tests need offline.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** What a synthetic checkpoint holds beyond the 256 byte-level base tokens. */
export interface SyntheticCheckpointSpec {
  /** Added tokens flagged special (role and boundary markers), in id order after the base vocabulary. */
  specialTokens: readonly string[];
  /** Added tokens that are not special (`<think>`, `<tool_call>`, ...: content the model writes). */
  plainTokens?: readonly string[];
  /** tokenizer_config.json `eos_token`. */
  eosToken: string;
  /** tokenizer_config.json `bos_token`, when the family has one. */
  bosToken?: string;
  /** The chat template text. */
  chatTemplate: string;
  /** Where the template goes: `chat_template` of tokenizer_config.json (default) or a `chat_template.jinja` file. */
  templateFile?: boolean;
  /** A config.json to write beside the tokenizer files (Inkling's `model_type`), when the family reads one. */
  modelConfig?: Record<string, unknown>;
}

/** GPT-2's byte ↔ printable-character table (`bytes_to_unicode`): the spelling of byte-level tokens. */
function byteSymbols(): string[] {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b += 1) printable.push(b);
  for (let b = 161; b <= 172; b += 1) printable.push(b);
  for (let b = 174; b <= 255; b += 1) printable.push(b);
  const symbols: string[] = new Array<string>(256);
  let extra = 0;
  for (let b = 0; b < 256; b += 1) symbols[b] = printable.includes(b) ? String.fromCharCode(b) : String.fromCharCode(256 + extra++);
  return symbols;
}

/** A few merges so that common text does not encode byte by byte (each merge's result is a vocabulary entry). */
const MERGES: ReadonlyArray<readonly [string, string]> = [
  ["t", "h"],
  ["e", "r"],
  ["i", "n"],
  ["Ġ", "t"],
  ["Ġ", "w"],
  ["e", "a"],
  ["Ġt", "h"],
  ["o", "n"],
  ["a", "t"],
  ["Ċ", "Ċ"],
];

/** The tokenizer.json object: byte-level BPE (ByteLevel pre-tokenizer and decoder) plus the added tokens. */
export function syntheticTokenizerJson(spec: SyntheticCheckpointSpec): Record<string, unknown> {
  const vocab: Record<string, number> = {};
  byteSymbols().forEach((symbol, id) => (vocab[symbol] = id));
  for (const [left, right] of MERGES) vocab[left + right] ??= Object.keys(vocab).length;
  let next = Object.keys(vocab).length;
  const added = [
    ...spec.specialTokens.map((content) => ({ content, special: true })),
    ...(spec.plainTokens ?? []).map((content) => ({ content, special: false })),
  ].map(({ content, special }) => ({ id: next++, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special }));
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: true },
    decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: MERGES.map(([left, right]) => `${left} ${right}`),
    },
  };
}

/** The tokenizer_config.json object (transformers' fast-tokenizer layout). */
export function syntheticTokenizerConfig(spec: SyntheticCheckpointSpec, tokenizerJson: Record<string, unknown>): Record<string, unknown> {
  const decoder: Record<string, unknown> = {};
  for (const entry of tokenizerJson.added_tokens as Array<Record<string, unknown>>) {
    const { id, ...rest } = entry;
    decoder[String(id)] = rest;
  }
  const config: Record<string, unknown> = {
    added_tokens_decoder: decoder,
    clean_up_tokenization_spaces: false,
    eos_token: spec.eosToken,
    pad_token: spec.eosToken,
    model_max_length: 131072,
    tokenizer_class: "PreTrainedTokenizerFast",
  };
  if (spec.bosToken !== undefined) config.bos_token = spec.bosToken;
  if (spec.templateFile !== true) config.chat_template = spec.chatTemplate;
  return config;
}

/** Writes the checkpoint into a fresh temporary directory and returns its path (the caller removes it). */
export function writeSyntheticCheckpoint(spec: SyntheticCheckpointSpec, name = "synthetic"): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), `session-parity-${name}-`));
  const tokenizerJson = syntheticTokenizerJson(spec);
  fs.writeFileSync(path.join(directory, "tokenizer.json"), JSON.stringify(tokenizerJson));
  fs.writeFileSync(path.join(directory, "tokenizer_config.json"), JSON.stringify(syntheticTokenizerConfig(spec, tokenizerJson), null, 2));
  if (spec.templateFile === true) fs.writeFileSync(path.join(directory, "chat_template.jinja"), spec.chatTemplate);
  if (spec.modelConfig !== undefined) fs.writeFileSync(path.join(directory, "config.json"), JSON.stringify(spec.modelConfig, null, 2));
  return directory;
}

function template(file: string): string {
  return fs.readFileSync(path.join(__dirname, "synthetic", file), "utf8");
}

const GLM_SPECIAL = ["<|endoftext|>", "[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"];
const GLM_PLAIN = [
  "<think>",
  "</think>",
  "<tool_call>",
  "</tool_call>",
  "<arg_key>",
  "</arg_key>",
  "<arg_value>",
  "</arg_value>",
  "<tool_response>",
  "</tool_response>",
];

/** A GLM-4.7-style checkpoint (template in tokenizer_config.json, as GLM-4.7 ships it). */
export function glm47Spec(): SyntheticCheckpointSpec {
  return { specialTokens: GLM_SPECIAL, plainTokens: GLM_PLAIN, eosToken: "<|endoftext|>", chatTemplate: template("glm47.jinja") };
}

/** A GLM-5.3-style checkpoint (template in chat_template.jinja, as GLM-5 and later ship it; always opens <think>). */
export function glm53Spec(): SyntheticCheckpointSpec {
  return { specialTokens: GLM_SPECIAL, plainTokens: GLM_PLAIN, eosToken: "<|endoftext|>", chatTemplate: template("glm53.jinja"), templateFile: true };
}

/** A Nemotron-3-style checkpoint: ChatML markers, <think> and the XML tool-call tags as plain tokens. */
export function nemotron3Spec(): SyntheticCheckpointSpec {
  return {
    specialTokens: ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"],
    plainTokens: ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"],
    eosToken: "<|im_end|>",
    bosToken: "<s>",
    chatTemplate: template("nemotron3.jinja"),
  };
}

const KIMI_SPECIAL = [
  "[BOS]",
  "[EOS]",
  "<|im_end|>",
  "<|im_user|>",
  "<|im_assistant|>",
  "<|im_system|>",
  "<|im_middle|>",
  "<|tool_calls_section_begin|>",
  "<|tool_calls_section_end|>",
  "<|tool_call_begin|>",
  "<|tool_call_argument_begin|>",
  "<|tool_call_end|>",
  "<|media_begin|>",
  "<|media_content|>",
  "<|media_pad|>",
  "<|media_end|>",
  "<|kimi_k25_video_placeholder|>",
];

/** A Kimi-K2.5-style checkpoint: its role, tool-call section and media tokens as specials; <think> tags plain. */
export function kimi25Spec(chatTemplate = ""): SyntheticCheckpointSpec {
  return { specialTokens: KIMI_SPECIAL, plainTokens: ["<think>", "</think>"], eosToken: "[EOS]", bosToken: "[BOS]", chatTemplate };
}

/** A Kimi-K2.6-style checkpoint: K2.5's tokens, its own template (with the preserve_thinking gate) in chat_template.jinja. */
export function kimi26Spec(): SyntheticCheckpointSpec {
  return { ...kimi25Spec(template("kimi26.jinja")), templateFile: true };
}

/** A MiniMax-M2-style checkpoint: `]~!b[` / `]~b]` / `[e~[` special; think and tool-call tags plain added tokens. */
export function minimaxSpec(): SyntheticCheckpointSpec {
  return {
    specialTokens: ["]~!b[", "]~b]", "[e~[", "]!p~[", "]!d~["],
    plainTokens: ["<think>", "</think>", "<minimax:tool_call>", "</minimax:tool_call>"],
    eosToken: "[e~[",
    bosToken: "]~!b[",
    chatTemplate: "",
  };
}

/** The Inkling message and content tokens (the fixed template's and SGLang's control tokens). */
export const INKLING_TOKENS = [
  "<|message_user|>",
  "<|message_model|>",
  "<|message_system|>",
  "<|message_tool|>",
  "<|content_text|>",
  "<|content_thinking|>",
  "<|content_xml|>",
  "<|content_invoke_tool_json|>",
  "<|end_message|>",
  "<|content_model_end_sampling|>",
  "<|content_image|>",
  "<|content_audio_input|>",
  "<|audio_end|>",
  "<|unused_200053|>",
  "<|unused_200054|>",
];

/** An Inkling-style checkpoint: the message/content tokens as specials, config.json `model_type: inkling_mm_model`. */
export function inklingSpec(): SyntheticCheckpointSpec {
  return {
    specialTokens: INKLING_TOKENS,
    eosToken: "<|content_model_end_sampling|>",
    chatTemplate: "",
    modelConfig: { model_type: "inkling_mm_model", architectures: ["InklingForConditionalGeneration"] },
  };
}
