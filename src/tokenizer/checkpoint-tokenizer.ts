// Any Hugging Face checkpoint's vocabulary as the Tokenizer contract: @huggingface/tokenizers for ids, a chat template for text.
// Built from already-parsed tokenizer.json / tokenizer_config.json objects; file reading lives in load.ts.
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import { sharedTokenizerFiles } from "./shared-files";
import { buildByteLevelTable, ByteLevelTableDecoder, tableDecodable, vocabularyFromLibrary, type ByteLevelTable } from "./byte-level-decoder";
import { vocabularySize } from "./vocabulary-size";
import { SegmentEncodeCache, segmentEncodingProblem } from "./segment-encode-cache";
import type { ChatMessage, RenderOptions, Tokenizer } from "./types";

/** What renders messages to prompt text: the package's templates (`ChatTemplate`) or a checkpoint's own. */
export interface ChatTemplateRenderer {
  /** The Jinja source text. */
  readonly source: string;
  /** Where the source came from (error messages name only its last path segment). */
  readonly origin: string;
  /** Renders messages; kwargs are exposed to the template as top-level variables. */
  render(messages: readonly ChatMessage[], options?: RenderOptions): string;
}

interface AddedTokenEntry {
  id: number;
  content: string;
  special?: boolean;
}

/** A checkpoint's tokenizer plus a chat template. Synchronous once constructed. */
export class CheckpointTokenizer implements Tokenizer {
  /** The `eos_token` of tokenizer_config.json (an AddedToken object gives its content), when it names one. */
  readonly eosToken: string | undefined;
  /** Ids of the added tokens flagged special (`<|im_start|>`, `<|im_end|>`, `<|endoftext|>`, ...). */
  readonly specialIds: ReadonlySet<number>;
  protected readonly hf: HfTokenizer;
  /** Table decoder, built on first decode; null when the vocabulary needs decode steps the table does not mirror. */
  private tableDecoder: ByteLevelTableDecoder | null | undefined;
  /** Builds (or borrows) the decoder's tables; null when the files need decode steps the table does not mirror. */
  private readonly decodeTable: (() => ByteLevelTable) | null;
  /** {@link vocabSize}, once counted. */
  private vocabSizeCache: number | undefined;
  private readonly countVocabulary: () => number;
  /** Piecewise cached encoder; null when these files do not make it provably equal to the library's encode. */
  private readonly segmentCache: SegmentEncodeCache | null;

  /**
   * @param tokenizerJson parsed tokenizer.json
   * @param tokenizerConfig parsed tokenizer_config.json
   * @param source where tokenizer.json was read from (reported in errors and metadata)
   * @param chatTemplate template used by renderChatTemplate
   * @param family family name reported in metadata (`"default"`, `"qwen3"`, ...)
   */
  constructor(
    tokenizerJson: Record<string, unknown>,
    tokenizerConfig: Record<string, unknown>,
    readonly source: string,
    readonly chatTemplate: ChatTemplateRenderer,
    readonly family: string = "default",
  ) {
    // The library tokenizer takes most of a load to build; a host that parsed these very objects may have one, and
    // the tables derived from them too.
    const host = sharedTokenizerFiles();
    this.hf = host?.libraryTokenizer(tokenizerJson) ?? new HfTokenizer(tokenizerJson, tokenizerConfig);
    const lent = host?.derived?.(tokenizerJson, tokenizerConfig);
    const eos = tokenizerConfig.eos_token;
    this.eosToken =
      typeof eos === "string"
        ? eos
        : eos !== null && typeof eos === "object" && typeof (eos as { content?: unknown }).content === "string"
          ? (eos as { content: string }).content
          : undefined;
    const added = Array.isArray(tokenizerJson.added_tokens) ? (tokenizerJson.added_tokens as AddedTokenEntry[]) : [];
    this.specialIds = new Set(added.filter((entry) => entry.special === true).map((entry) => entry.id));
    // Counted on first use: a 150k-entry vocabulary object takes ~0.1 s to walk, and only session servers ask.
    this.countVocabulary = lent ? () => lent.vocabSize() : () => vocabularySize(tokenizerJson);
    this.segmentCache = segmentEncodingProblem(tokenizerJson) === null ? new SegmentEncodeCache(added, (text) => this.libraryEncode(text)) : null;
    this.decodeTable = !tableDecodable(tokenizerJson, tokenizerConfig)
      ? null
      : () => lent?.byteLevelTable() ?? buildByteLevelTable(vocabularyFromLibrary(this.hf, tokenizerConfig));
  }

  private libraryDecode(ids: readonly number[], skipSpecialTokens: boolean): string {
    return this.hf.decode([...ids], { skip_special_tokens: skipSpecialTokens });
  }

  private libraryEncode(text: string): number[] {
    return this.hf.encode(text, { add_special_tokens: false }).ids;
  }

  /**
   * Encodes text without adding special tokens (special-token text inside `text` still maps to its id). When the
   * files allow it ({@link segmentEncodingProblem}), the text is cut at added-token strings and each piece's ids
   * come from a bounded cache, which gives the library's ids exactly; otherwise the library encodes the whole text.
   * Always returns a fresh array.
   */
  encode(text: string): number[] {
    return this.segmentCache ? this.segmentCache.encode(text) : this.libraryEncode(text);
  }

  /** True when {@link encode} goes through the per-piece cache rather than the library alone. */
  get encodeCacheEnabled(): boolean {
    return this.segmentCache !== null;
  }

  /**
   * Decodes ids; special tokens are kept unless `skipSpecialTokens` is true. Byte-level vocabularies (Qwen3's, Llama 3's)
   * decode through a cached id -> bytes table whose output equals the library's decode; anything else, and any
   * input the table does not cover (empty, unknown ids), goes to the library itself.
   */
  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    const skip = options.skipSpecialTokens ?? false;
    if (this.tableDecoder === undefined) {
      this.tableDecoder = this.decodeTable ? new ByteLevelTableDecoder(this.decodeTable(), (rest, skipRest) => this.libraryDecode(rest, skipRest)) : null;
    }
    return this.tableDecoder ? this.tableDecoder.decode(ids, skip) : this.libraryDecode(ids, skip);
  }

  /** One past the highest token id of tokenizer.json (its model vocabulary and its added tokens). */
  get vocabSize(): number {
    this.vocabSizeCache ??= this.countVocabulary();
    return this.vocabSizeCache;
  }

  /** Id of a vocabulary token (byte-level spelling, e.g. "Ċ" for "\n"), or undefined. */
  tokenToId(token: string): number | undefined {
    return this.hf.token_to_id(token);
  }

  /** Vocabulary spelling of an id, or undefined. */
  idToToken(id: number): string | undefined {
    return this.hf.id_to_token(id);
  }

  /** Renders messages with this tokenizer's chat template. */
  renderChatTemplate(messages: readonly ChatMessage[], options: RenderOptions = {}): string {
    return this.chatTemplate.render(messages, options);
  }

  /** The same vocabulary rendering through another template (e.g. a checkpoint's native one), under `family` (default: this one's). */
  withChatTemplate(chatTemplate: ChatTemplateRenderer, family: string = this.family): this {
    const copy = Object.create(Object.getPrototypeOf(this) as object) as this;
    Object.assign(copy, this, { chatTemplate, family });
    return copy;
  }
}
