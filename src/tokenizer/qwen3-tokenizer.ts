// The Qwen3 implementation of the Tokenizer contract: a checkpoint tokenizer that checks Qwen3's special tokens.
// Built from already-parsed tokenizer.json / tokenizer_config.json objects; file reading lives in load.ts.
import { qwen3ChatTemplate } from "./chat-template";
import { CheckpointTokenizer, type ChatTemplateRenderer } from "./checkpoint-tokenizer";

/** Well-known Qwen3 token ids (SPEC §8); the loader checks the vocabulary agrees. */
export const QWEN3_IDS = {
  imStart: 151644,
  imEnd: 151645,
  newline: 198,
  thinkOpen: 151667,
  thinkClose: 151668,
} as const;

/** Qwen3 tokenizer plus chat template (the package's append-safe Qwen3 template by default). Synchronous once constructed. */
export class Qwen3Tokenizer extends CheckpointTokenizer {
  /** Id of `<|im_end|>`. */
  readonly imEndId: number;
  /** Id of `<|im_start|>`. */
  readonly imStartId: number;
  /** Id of the single token that encodes "\n". */
  readonly newlineId: number;

  /**
   * @param tokenizerJson parsed tokenizer.json
   * @param tokenizerConfig parsed tokenizer_config.json
   * @param source where tokenizer.json was read from (reported in errors and metadata)
   * @param chatTemplate template used by renderChatTemplate; the package's append-safe Qwen3 template by default
   * @param family family name reported in metadata (default `"qwen3"`)
   * @throws Error when the vocabulary lacks `<|im_start|>` / `<|im_end|>` or encodes "\n" as more than one token
   */
  constructor(
    tokenizerJson: Record<string, unknown>,
    tokenizerConfig: Record<string, unknown>,
    source: string,
    chatTemplate: ChatTemplateRenderer = qwen3ChatTemplate(),
    family = "qwen3",
  ) {
    super(tokenizerJson, tokenizerConfig, source, chatTemplate, family);
    const ids = qwen3Ids(this);
    this.imStartId = ids.imStartId;
    this.imEndId = ids.imEndId;
    this.newlineId = ids.newlineId;
  }

  /**
   * The same vocabulary (shared, not re-read) as a Qwen3 tokenizer rendering `chatTemplate`.
   * @throws Error when the vocabulary is not Qwen3's (see the constructor)
   */
  static fromCheckpoint(base: CheckpointTokenizer, chatTemplate: ChatTemplateRenderer = qwen3ChatTemplate(), family = "qwen3"): Qwen3Tokenizer {
    const ids = qwen3Ids(base);
    const copy = Object.create(Qwen3Tokenizer.prototype) as Qwen3Tokenizer;
    return Object.assign(copy, base, { chatTemplate, family }, ids);
  }
}

/** The ids a Qwen3 vocabulary must hold. */
function qwen3Ids(tokenizer: CheckpointTokenizer): { imStartId: number; imEndId: number; newlineId: number } {
  const requireId = (token: string): number => {
    const id = tokenizer.tokenToId(token);
    if (id === undefined) throw new Error(`tokenizer ${tokenizer.source} has no ${token} token; it is not a Qwen3 tokenizer`);
    return id;
  };
  const imStartId = requireId("<|im_start|>");
  const imEndId = requireId("<|im_end|>");
  const newline = tokenizer.encode("\n");
  if (newline.length !== 1) {
    throw new Error(`tokenizer ${tokenizer.source} encodes "\\n" as ${newline.length} tokens; a Qwen3 tokenizer uses one`);
  }
  return { imStartId, imEndId, newlineId: newline[0]! };
}
