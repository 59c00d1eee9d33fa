// Derives a value's compact spelling (`PY_RESPONSE_JSON`) from the Python-default one (`PY_DEFAULT_JSON`) already
// written for it, in one pass over bytes: the session view copies each stored request body instead of spelling it.

/** Scratch bytes reused across calls (grown on demand, never past this size; a longer text gets its own). */
const SCRATCH_MAX_BYTES = 1 << 20;
let scratch = Buffer.allocUnsafeSlow(16384);

/** Strings of at least this many bytes between escapes are moved as one block (below it the byte loop is cheaper). */
const BLOCK_COPY_MIN_BYTES = 24;

/**
 * `dumpsPy(value, PY_RESPONSE_JSON)` given `defaultText = dumpsPy(value, PY_DEFAULT_JSON)`, or undefined when the
 * default spelling does not tell it. The default separators put a space after each `,` and `:` outside strings and
 * nowhere else there, and with `ensure_ascii` the text is ASCII: removing the spaces outside strings gives the compact
 * text, unless a `\u` escape of a character from U+007F up stands for one the compact spelling writes as itself (the
 * answer is then undefined, as it is for any `\u` escape not of a control character, a lone surrogate's included),
 * or the value holds NaN or an infinity (written by the default settings, refused by the compact ones).
 * Jumps from quote to quote and escape to escape (found by `indexOf`), moving long string runs as blocks.
 */
export function compactFromDefaultSpelling(defaultText: string): string | undefined {
  const length = defaultText.length;
  // room for the text and 4 bytes more: a non-ASCII character then always shows as more bytes written than characters
  // (UTF-8 is written in whole characters, so a cut short write leaves at most 3 bytes unused)
  const room = length + 4;
  let out: Buffer;
  if (room <= SCRATCH_MAX_BYTES) {
    if (scratch.length < room) scratch = Buffer.allocUnsafeSlow(Math.min(Math.max(room, scratch.length * 2), SCRATCH_MAX_BYTES));
    out = scratch;
  } else {
    out = Buffer.allocUnsafe(room);
  }
  // ASCII from here on: a character's index in the text is its byte's index in `out`
  if (out.write(defaultText, 0, "utf8") !== length) return undefined;
  let at = 0; // bytes written; never past `i`, so the writes land on bytes already read
  let i = 0;
  // the next `"`, `\`, `N` and `I` at or after the last search (-1: none left; -2: not searched yet)
  let quote = -2;
  let backslash = -2;
  let nan = -2;
  let inf = -2;
  for (;;) {
    // outside strings: up to the next quote, each byte but the spaces; `N` or `I` start NaN, Infinity, -Infinity
    if (quote < i) quote = defaultText.indexOf('"', i);
    const end = quote === -1 ? length : quote;
    if (nan < i && nan !== -1) nan = defaultText.indexOf("N", i);
    if (nan !== -1 && nan < end) return undefined;
    if (inf < i && inf !== -1) inf = defaultText.indexOf("I", i);
    if (inf !== -1 && inf < end) return undefined;
    for (; i < end; i++) {
      const c = out[i];
      if (c !== 0x20) out[at++] = c;
    }
    if (end === length) return out.toString("latin1", 0, at);
    // a string: its bytes as they are, up to the closing quote; escapes are read two bytes at a time
    out[at++] = 0x22;
    i = end + 1;
    for (;;) {
      if (quote < i) quote = defaultText.indexOf('"', i);
      if (quote === -1) return undefined; // never closed
      if (backslash < i && backslash !== -1) backslash = defaultText.indexOf("\\", i);
      const stop = backslash !== -1 && backslash < quote ? backslash : quote;
      if (stop - i >= BLOCK_COPY_MIN_BYTES) {
        out.copyWithin(at, i, stop);
        at += stop - i;
      } else {
        for (let j = i; j < stop; j++) out[at++] = out[j];
      }
      if (stop === quote) {
        out[at++] = 0x22;
        i = quote + 1;
        break;
      }
      // an escape: a `\u` only of a control character (`\u0000`-`\u001f`), whose compact spelling is the same
      if (stop + 1 >= length) return undefined;
      const e = out[stop + 1];
      if (e === 0x75 && !(out[stop + 2] === 0x30 && out[stop + 3] === 0x30 && (out[stop + 4] === 0x30 || out[stop + 4] === 0x31))) return undefined;
      out[at++] = 0x5c;
      out[at++] = e;
      i = stop + 2;
    }
  }
}
