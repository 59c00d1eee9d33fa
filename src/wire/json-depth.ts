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
  const isString = typeof text === "string";
  const length = text.length;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < length; i += 1) {
    const code = isString ? text.charCodeAt(i) : text[i];
    if (inString) {
      if (code === BACKSLASH) i += 1;
      else if (code === QUOTE) inString = false;
      continue;
    }
    if (code === QUOTE) inString = true;
    else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      depth += 1;
      if (depth > maxDepth) return { offset: i, maxDepth };
    } else if ((code === CLOSE_BRACKET || code === CLOSE_BRACE) && depth > 0) depth -= 1;
  }
  return null;
}

/** The message every refusal uses, prefixed by the caller with what was being read. */
export function describeJsonDepthExcess(excess: JsonDepthExcess): string {
  return `JSON nesting exceeds the depth limit of ${excess.maxDepth} (level ${excess.maxDepth + 1} opens at offset ${excess.offset})`;
}
