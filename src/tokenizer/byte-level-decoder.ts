// Decodes byte-level BPE ids through a precomputed id -> bytes table: one copy per token and one UTF-8 decode per run.
// Mirrors @huggingface/tokenizers' ByteLevel decode exactly and hands every input it does not cover back to it.
import type { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";

/** What the table decoder needs from a loaded vocabulary. */
export interface ByteLevelVocabulary {
  /** One more than the largest id (ids at or above it are unknown). */
  size: number;
  /** Vocabulary spelling of an id (byte-level characters for ordinary tokens), or undefined. */
  tokenAt(id: number): string | undefined;
  /** Spellings of the added tokens: they are emitted verbatim and cut UTF-8 runs. */
  addedContents: ReadonlySet<string>;
  /** Spellings removed when special tokens are skipped. */
  specialContents: ReadonlySet<string>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Whether the library's decode for these files is exactly "byte-level runs between added tokens": a plain
 * ByteLevel decoder, no end-of-word suffix to replace, no clean-up of tokenization spaces. Otherwise the
 * table decoder must not be used.
 * @param tokenizerJson parsed tokenizer.json
 * @param tokenizerConfig parsed tokenizer_config.json
 */
export function tableDecodable(tokenizerJson: Record<string, unknown>, tokenizerConfig: Record<string, unknown>): boolean {
  const decoder = tokenizerJson.decoder;
  const model = tokenizerJson.model;
  return (
    isRecord(decoder) && decoder.type === "ByteLevel" && isRecord(model) && !model.end_of_word_suffix && tokenizerConfig.clean_up_tokenization_spaces === false
  );
}

/**
 * The vocabulary as the library's decode sees it: spellings by id, all added tokens (emitted verbatim), and the
 * skippable specials (added tokens flagged special plus the config's `additional_special_tokens`).
 * @param hf a library tokenizer built from the same files
 * @param tokenizerConfig parsed tokenizer_config.json
 */
export function vocabularyFromLibrary(hf: HfTokenizer, tokenizerConfig: Record<string, unknown>): ByteLevelVocabulary {
  const added = [...hf.get_added_tokens_decoder().values()];
  const extra = Array.isArray(tokenizerConfig.additional_special_tokens) ? tokenizerConfig.additional_special_tokens : [];
  const specialContents = new Set<string>(added.filter((token) => token.special).map((token) => token.content));
  for (const token of extra) if (typeof token === "string") specialContents.add(token);
  let size = 0;
  for (const token of added) size = Math.max(size, token.id + 1);
  while (hf.id_to_token(size) !== undefined) size += 1;
  return {
    size,
    tokenAt: (id) => hf.id_to_token(id),
    addedContents: new Set(added.map((token) => token.content)),
    specialContents,
  };
}

/** Decodes ids exactly as the library would; used for inputs the table does not cover. */
export type FallbackDecode = (ids: readonly number[], skipSpecialTokens: boolean) => string;

const KIND_UNKNOWN = 0;
const KIND_BYTES = 1;
const KIND_VERBATIM = 2;

/**
 * GPT-2's byte-level alphabet reversed: the byte behind each of the 256 printable stand-in characters.
 * Printable Latin-1 bytes stand for themselves; the other 68 bytes map to U+0100 onwards, in byte order.
 */
export function byteLevelCharToByte(): Map<number, number> {
  const map = new Map<number, number>();
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let shifted = 0;
  for (let b = 0; b < 256; b += 1) {
    if (printable(b)) map.set(b, b);
    else {
      map.set(256 + shifted, b);
      shifted += 1;
    }
  }
  return map;
}

/** Whether every character of `token` is one of the 256 byte stand-ins (else the token is left to the fallback). */
function inAlphabet(token: string, byteOf: Int16Array): boolean {
  for (let unit = 0; unit < token.length; unit += 1) {
    const code = token.charCodeAt(unit);
    if (code >= byteOf.length || byteOf[code] < 0) return false;
  }
  return true;
}

/**
 * The flat tables the decoder reads, built once per vocabulary: they depend on the files only, so every decoder
 * over the same files (each with its own fallback and scratch space) can share one.
 */
export interface ByteLevelTable {
  /** Per id: unknown (0), byte-level token (1) or added token emitted verbatim (2). */
  readonly kinds: Uint8Array;
  /** Per id: 1 when the token vanishes under `skipSpecialTokens`. */
  readonly skipped: Uint8Array;
  /** Per id: where its bytes start in {@link bytes}; entry `size` is the end of the last one. */
  readonly offsets: Int32Array;
  /** Every byte-level token's bytes, in id order. */
  readonly bytes: Uint8Array;
  /** Per id: the spelling of an added token, else undefined. */
  readonly verbatim: readonly (string | undefined)[];
}

/**
 * Builds the decoder's tables for `vocabulary` (one walk over every id: ~0.1 s for a 150k vocabulary).
 * @param vocabulary the loaded vocabulary
 */
export function buildByteLevelTable(vocabulary: ByteLevelVocabulary): ByteLevelTable {
  const { size } = vocabulary;
  const byteOf = new Int16Array(512).fill(-1);
  for (const [char, byte] of byteLevelCharToByte()) byteOf[char] = byte;
  const kinds = new Uint8Array(size);
  const skipped = new Uint8Array(size);
  const offsets = new Int32Array(size + 1);
  const verbatim = new Array<string | undefined>(size).fill(undefined);
  const tokens: (string | undefined)[] = new Array<string | undefined>(size);
  let capacity = 0;
  for (let id = 0; id < size; id += 1) {
    const token = vocabulary.tokenAt(id);
    tokens[id] = token;
    if (token === undefined) continue;
    if (vocabulary.specialContents.has(token)) skipped[id] = 1;
    if (vocabulary.addedContents.has(token)) {
      kinds[id] = KIND_VERBATIM;
      verbatim[id] = token;
    } else if (inAlphabet(token, byteOf)) {
      kinds[id] = KIND_BYTES;
      capacity += token.length;
    }
  }
  const bytes = new Uint8Array(capacity);
  let length = 0;
  for (let id = 0; id < size; id += 1) {
    offsets[id] = length;
    if (kinds[id] !== KIND_BYTES) continue;
    const token = tokens[id]!;
    for (let unit = 0; unit < token.length; unit += 1) bytes[length++] = byteOf[token.charCodeAt(unit)]!;
  }
  offsets[size] = length;
  return { kinds, skipped, offsets, bytes: bytes.subarray(0, length), verbatim };
}

/**
 * Byte-level BPE decoder over a flat table (offsets + bytes). Output is identical to the library's ByteLevel
 * decode: ordinary tokens contribute their bytes, runs of them are UTF-8 decoded with replacement characters
 * (BOM kept), added tokens are emitted verbatim between runs, skipped specials vanish without cutting the run.
 * Empty input, non-number ids, ids outside the vocabulary and tokens spelled outside the byte alphabet go to
 * the fallback.
 */
export class ByteLevelTableDecoder {
  private readonly kinds: Uint8Array;
  private readonly skipped: Uint8Array;
  private readonly offsets: Int32Array;
  private readonly bytes: Uint8Array;
  private readonly verbatim: readonly (string | undefined)[];
  private readonly utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  private scratch = new Uint8Array(1 << 16);

  /**
   * @param table the vocabulary's tables ({@link buildByteLevelTable})
   * @param fallback the library's decode, for inputs the table does not cover
   */
  constructor(
    table: ByteLevelTable,
    private readonly fallback: FallbackDecode,
  ) {
    this.kinds = table.kinds;
    this.skipped = table.skipped;
    this.offsets = table.offsets;
    this.bytes = table.bytes;
    this.verbatim = table.verbatim;
  }

  /** Decodes `ids`; special tokens are kept unless `skipSpecialTokens`. */
  decode(ids: readonly number[], skipSpecialTokens = false): string {
    const count = ids.length;
    if (count === 0) return this.fallback(ids, skipSpecialTokens);
    const { kinds, skipped, offsets, bytes } = this;
    let scratch = this.scratch;
    let length = 0;
    let text = "";
    for (let index = 0; index < count; index += 1) {
      const id = ids[index];
      if (typeof id !== "number") return this.fallback(ids, skipSpecialTokens);
      const kind = kinds[id];
      if (kind === undefined || kind === KIND_UNKNOWN) return this.fallback(ids, skipSpecialTokens);
      if (skipSpecialTokens && skipped[id] === 1) continue;
      if (kind === KIND_BYTES) {
        const start = offsets[id];
        const end = offsets[id + 1];
        if (length + end - start > scratch.length) {
          const grown = new Uint8Array(Math.max(scratch.length * 2, length + end - start));
          grown.set(scratch.subarray(0, length));
          scratch = grown;
          this.scratch = grown;
        }
        for (let b = start; b < end; b += 1) scratch[length++] = bytes[b]!;
      } else {
        if (length > 0) text += this.utf8.decode(scratch.subarray(0, length));
        length = 0;
        text += this.verbatim[id]!;
      }
    }
    if (length > 0) text += this.utf8.decode(scratch.subarray(0, length));
    return text;
  }
}
