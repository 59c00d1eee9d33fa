// Encodes text by cutting it at added-token strings and caching the ids of each piece between them (bounded LRU).
// Chat prompts repeat the same pieces (system text, tool specs, earlier turns), so most pieces are encoded once.
import { heapScaledBound } from "./heap-scaled";

/** One added token as listed in tokenizer.json's `added_tokens`. */
export interface AddedTokenSpec {
  /** Vocabulary id of the token. */
  id: number;
  /** The token's text, matched verbatim in the input. */
  content: string;
}

/**
 * Default bound of {@link SegmentEncodeCache}: total characters of the cached pieces (less on a small heap). The
 * pieces that hit are those of the conversations in flight (each render re-encodes their earlier messages): half a
 * million characters holds a 300-turn session's whole history. Pieces of finished conversations are dead weight, and
 * a costly one: a cached character takes about 8 heap bytes with its ids and entry, and V8 lets the old generation
 * grow to a multiple of what it holds before collecting it, so a replay whose cache kept filling (up to 8 million
 * characters) peaked at half as much RSS again as one a tenth its length.
 */
const DEFAULT_SEGMENT_CACHE_CHARS = 500_000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Normalizer types of @huggingface/tokenizers; each is a pure function of the one section it is given. */
const SECTION_LOCAL_NORMALIZERS = new Set([
  "BertNormalizer",
  "Precompiled",
  "Replace",
  "NFC",
  "NFD",
  "NFKC",
  "NFKD",
  "Strip",
  "StripAccents",
  "Lowercase",
  "Prepend",
]);

/** Pre-tokenizer types that never read the section's position (only Metaspace with prepend_scheme "first" does). */
const SECTION_LOCAL_PRE_TOKENIZERS = new Set([
  "BertPreTokenizer",
  "Whitespace",
  "WhitespaceSplit",
  "ByteLevel",
  "Split",
  "Punctuation",
  "Digits",
  "Replace",
  "FixedLength",
]);

/** Post-processors that add nothing when special tokens are not requested (the wrapper never requests them). */
const PASS_THROUGH_POST_PROCESSORS = new Set(["ByteLevel", "TemplateProcessing"]);

function normalizerProblem(config: unknown): string | null {
  if (config === null || config === undefined) return null;
  if (!isRecord(config)) return "normalizer is not an object";
  if (config.type === "Sequence") {
    const parts = Array.isArray(config.normalizers) ? (config.normalizers as unknown[]) : [];
    for (const part of parts) {
      const problem = normalizerProblem(part);
      if (problem) return problem;
    }
    return null;
  }
  return SECTION_LOCAL_NORMALIZERS.has(String(config.type)) ? null : `normalizer type ${String(config.type)} is not known to be section-local`;
}

function preTokenizerProblem(config: unknown): string | null {
  if (config === null || config === undefined) return null;
  if (!isRecord(config)) return "pre_tokenizer is not an object";
  if (config.type === "Sequence") {
    const parts = Array.isArray(config.pretokenizers) ? (config.pretokenizers as unknown[]) : [];
    for (const part of parts) {
      const problem = preTokenizerProblem(part);
      if (problem) return problem;
    }
    return null;
  }
  if (config.type === "Metaspace") {
    return config.prepend_scheme === "first" ? 'a Metaspace pre-tokenizer with prepend_scheme "first" depends on the section position' : null;
  }
  return SECTION_LOCAL_PRE_TOKENIZERS.has(String(config.type)) ? null : `pre_tokenizer type ${String(config.type)} is not known to be section-local`;
}

function postProcessorProblem(config: unknown): string | null {
  if (config === null || config === undefined) return null;
  if (!isRecord(config)) return "post_processor is not an object";
  if (config.type === "Sequence") {
    const parts = Array.isArray(config.processors) ? (config.processors as unknown[]) : [];
    for (const part of parts) {
      const problem = postProcessorProblem(part);
      if (problem) return problem;
    }
    return null;
  }
  return PASS_THROUGH_POST_PROCESSORS.has(String(config.type)) ? null : `post_processor type ${String(config.type)} may change the ids`;
}

/**
 * Why encoding piece by piece between added tokens might differ from @huggingface/tokenizers' encode of the whole
 * text for these files, or null when it provably cannot. The library cuts the raw text at the (unnormalized)
 * added-token strings first, longest match leftmost, then normalizes, pre-tokenizes and BPE-encodes each section on
 * its own. Piecewise encoding is therefore exact when: every added token is matched verbatim (normalized false)
 * and strips nothing from its neighbours (lstrip/rstrip false); the normalizer and pre-tokenizer look at one
 * section only and never at its position; the post-processor adds nothing without special tokens.
 * @param tokenizerJson parsed tokenizer.json
 */
export function segmentEncodingProblem(tokenizerJson: Record<string, unknown>): string | null {
  const added = tokenizerJson.added_tokens;
  if (added !== undefined && !Array.isArray(added)) return "added_tokens is not a list";
  for (const token of (added ?? []) as unknown[]) {
    if (!isRecord(token) || typeof token.content !== "string" || typeof token.id !== "number") return "an added token lacks content or id";
    if (token.content.length === 0) return "an added token is empty";
    const normalized = (token.normalized as boolean | undefined) ?? !(token.special === true);
    if (normalized) return `added token ${JSON.stringify(token.content)} is normalized before matching`;
    if (token.lstrip === true || token.rstrip === true) return `added token ${JSON.stringify(token.content)} strips its neighbours`;
  }
  return normalizerProblem(tokenizerJson.normalizer) ?? preTokenizerProblem(tokenizerJson.pre_tokenizer) ?? postProcessorProblem(tokenizerJson.post_processor);
}

/** Ids of one cached piece and whether it was read since the eviction walk last passed it. */
interface CachedPiece {
  readonly ids: readonly number[];
  used: boolean;
}

/** Below this length V8 copies a substring anyway; from it on, a substring may be a view that keeps its parent alive. */
const SLICE_VIEW_MIN_LENGTH = 13;

/**
 * A string with `text`'s characters that holds no other string alive. A piece is cut from a whole prompt render;
 * V8 makes such a substring a view into its parent, so a cached view would keep every prompt it was cut from (far
 * more than the cached characters the bound counts). Concatenating then slicing makes V8 write the characters into
 * a string of their own (one character longer).
 */
export function ownedString(text: string): string {
  return text.length < SLICE_VIEW_MIN_LENGTH ? text : ` ${text}`.slice(1);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * Encoder that cuts text at added-token strings (one precompiled regex, longest token first so the leftmost
 * longest match wins, as in the library's trie) and encodes each piece between them once: pieces are looked up in
 * a map of text -> frozen ids bounded by the total characters cached, evicting least recently used pieces
 * first (the second-chance approximation of LRU, so that a hit costs no map update). A cached piece owns its
 * characters (never a view into the text it was cut from), so the bound is what the cache holds. Only valid when
 * {@link segmentEncodingProblem} returns null for the tokenizer that `encodePiece` runs.
 */
export class SegmentEncodeCache {
  private readonly splitter: RegExp | null;
  private readonly idOfToken: ReadonlyMap<string, number>;
  private readonly pieces = new Map<string, CachedPiece>();
  private chars = 0;

  /**
   * @param addedTokens every added token of the vocabulary (special or not)
   * @param encodePiece encodes a text holding no added-token string (the library's encode)
   * @param maxChars bound on the total characters of cached pieces; pieces not used recently go first
   */
  constructor(
    addedTokens: readonly AddedTokenSpec[],
    private readonly encodePiece: (text: string) => number[],
    /** Bound on the total characters of cached pieces. */
    readonly maxChars: number = heapScaledBound(DEFAULT_SEGMENT_CACHE_CHARS, 8), // the text, its ids (~1 per 4 chars) and the entry
  ) {
    this.idOfToken = new Map(addedTokens.map((token) => [token.content, token.id]));
    const contents = [...this.idOfToken.keys()].sort((a, b) => b.length - a.length);
    this.splitter = contents.length > 0 ? new RegExp(contents.map(escapeRegExp).join("|"), "g") : null;
  }

  /** Number of cached pieces. */
  get size(): number {
    return this.pieces.size;
  }

  /** Total characters of the cached pieces (never above {@link maxChars}). */
  get cachedChars(): number {
    return this.chars;
  }

  /** Drops every cached piece. */
  clear(): void {
    this.pieces.clear();
    this.chars = 0;
  }

  /** Ids of `text`, equal to the library's encode of the whole text; always a fresh array. */
  encode(text: string): number[] {
    const out: number[] = [];
    const splitter = this.splitter;
    if (splitter === null) {
      this.appendPiece(text, out);
      return out;
    }
    splitter.lastIndex = 0;
    let start = 0;
    for (let match = splitter.exec(text); match !== null; match = splitter.exec(text)) {
      if (match.index > start) this.appendPiece(text.slice(start, match.index), out);
      out.push(this.idOfToken.get(match[0])!);
      start = match.index + match[0].length;
    }
    if (start < text.length) this.appendPiece(start === 0 ? text : text.slice(start), out);
    return out;
  }

  private appendPiece(piece: string, out: number[]): void {
    let entry = this.pieces.get(piece);
    if (entry !== undefined) entry.used = true;
    else {
      entry = { ids: Object.freeze(this.encodePiece(piece)), used: false };
      this.remember(piece, entry);
    }
    const ids = entry.ids;
    for (let i = 0; i < ids.length; i += 1) out.push(ids[i]);
  }

  /**
   * Makes room, then caches the piece. Eviction walks from the oldest entry: one used since its last visit is
   * cleared and moved to the newest end (second chance), one not used is dropped. Marking a hit is then a flag
   * write instead of a map delete and re-insert, and after one pass every flag is clear, so the walk ends.
   */
  private remember(piece: string, entry: CachedPiece): void {
    if (piece.length > this.maxChars) return;
    if (this.chars + piece.length > this.maxChars) {
      for (const [oldest, candidate] of this.pieces) {
        this.pieces.delete(oldest);
        if (candidate.used) {
          candidate.used = false;
          this.pieces.set(oldest, candidate);
        } else {
          this.chars -= oldest.length;
          if (this.chars + piece.length <= this.maxChars) break;
        }
      }
    }
    this.chars += piece.length;
    this.pieces.set(ownedString(piece), entry);
  }
}
