// A JSON nesting cap checked by a single forward scan, before any parser sees the text.
// Deep nesting would otherwise cost a parser (or a recursive walker after it) time, memory or its stack.

/**
 * Deepest nesting of arrays and objects accepted anywhere JSON enters the package (request bodies, backend
 * replies, the safetensors header, `_samples_meta`). The Rust `safetensors` reader behind SGLang and the
 * Python `safetensors` package (serde_json) refuses deeper headers, so nothing useful is lost.
 */
export const MAX_JSON_DEPTH = 128;

/** Where a scan first went past the cap. */
export interface JsonDepthExcess {
  /** Index (byte for a Uint8Array, UTF-16 unit for a string) of the bracket that opened level `maxDepth + 1`. */
  offset: number;
  /** The cap that was exceeded. */
  maxDepth: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Scans JSON text (UTF-8 bytes or a string) and returns where nesting first exceeds `maxDepth`, or null.
 * Brackets inside strings (escapes honoured) do not count. The scan stops at the first bracket past the
 * cap, so refusing costs time proportional to the bytes read up to that point; it never allocates.
 * It does not validate the JSON: malformed text within the cap is left to the parser.
 * All structural characters are ASCII, so scanning UTF-8 bytes never confuses them with multi-byte text.
 */
export function findJsonDepthExcess(text: Uint8Array | string, maxDepth: number = MAX_JSON_DEPTH): JsonDepthExcess | null {
  const offset = typeof text === "string" ? excessInString(text, maxDepth) : excessInBytes(text, maxDepth);
  return offset === -1 ? null : { offset, maxDepth };
}

/**
 * True when `bytes` hold at most `maxDepth` opening brackets (`[` and `{`, inside strings or not): no nesting can then
 * go past `maxDepth`, so {@link findJsonDepthExcess} would find nothing. Counted by the native byte search, a fraction
 * of the scan's cost on texts of few containers (a samples reply's metadata); false only means the scan must decide.
 * The search goes chunk by chunk, so a text of many brackets is handed to the scan after about the bytes that hold
 * them (a search for `[` alone would read a whole text of `{` first).
 */
export function cannotNestPast(bytes: Uint8Array, maxDepth: number = MAX_JSON_DEPTH): boolean {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  let openers = 0;
  for (let start = 0; start < view.length; start += BRACKET_COUNT_CHUNK) {
    const chunk = view.length <= BRACKET_COUNT_CHUNK ? view : view.subarray(start, start + BRACKET_COUNT_CHUNK);
    for (let at = chunk.indexOf(OPEN_BRACKET); at !== -1; at = chunk.indexOf(OPEN_BRACKET, at + 1)) if (++openers > maxDepth) return false;
    for (let at = chunk.indexOf(OPEN_BRACE); at !== -1; at = chunk.indexOf(OPEN_BRACE, at + 1)) if (++openers > maxDepth) return false;
  }
  return true;
}

/** Bytes {@link cannotNestPast} searches at a time. */
const BRACKET_COUNT_CHUNK = 1 << 16;

// One loop per input kind (a loop that asks which kind on every character costs a fifth more); a string's
// characters are skipped in an inner loop that looks for its closing quote and backslashes only.

function excessInBytes(bytes: Uint8Array, maxDepth: number): number {
  const length = bytes.length;
  let depth = 0;
  for (let i = 0; i < length; i++) {
    const code = bytes[i];
    if (code === QUOTE) {
      for (i++; i < length; i++) {
        const c = bytes[i];
        if (c === QUOTE) break;
        if (c === BACKSLASH) i++;
      }
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > maxDepth) return i;
    } else if ((code === CLOSE_BRACKET || code === CLOSE_BRACE) && depth > 0) depth--;
  }
  return -1;
}

function excessInString(text: string, maxDepth: number): number {
  const length = text.length;
  let depth = 0;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      for (i++; i < length; i++) {
        const c = text.charCodeAt(i);
        if (c === QUOTE) break;
        if (c === BACKSLASH) i++;
      }
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > maxDepth) return i;
    } else if ((code === CLOSE_BRACKET || code === CLOSE_BRACE) && depth > 0) depth--;
  }
  return -1;
}

/** The message every refusal uses, prefixed by the caller with what was being read. */
export function describeJsonDepthExcess(excess: JsonDepthExcess): string {
  return `JSON nesting exceeds the depth limit of ${excess.maxDepth} (level ${excess.maxDepth + 1} opens at offset ${excess.offset})`;
}
