// Derives a value's compact spelling (`PY_RESPONSE_JSON`) from the Python-default one (`PY_DEFAULT_JSON`) already
// written for it, in one pass over bytes: the session view copies each stored request body instead of spelling it.

/** Scratch bytes reused across calls (grown on demand, never past this size; a longer text gets its own). */
const SCRATCH_MAX_BYTES = 1 << 20;
let scratch = Buffer.allocUnsafeSlow(16384);

/**
 * `dumpsPy(value, PY_RESPONSE_JSON)` given `defaultText = dumpsPy(value, PY_DEFAULT_JSON)`, or undefined when the
 * default spelling does not tell it. The default separators put a space after each `,` and `:` outside strings and
 * nowhere else there, and with `ensure_ascii` the text is ASCII: removing the spaces outside strings gives the compact
 * text, unless a `\u` escape of a character from U+007F up stands for one the compact spelling writes as itself (the
 * answer is then undefined, as it is for any `\u` escape not of a control character, a lone surrogate's included),
 * or the value holds NaN or an infinity (written by the default settings, refused by the compact ones).
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
  if (out.write(defaultText, 0, "utf8") !== length) return undefined;
  let at = 0;
  let inString = false;
  for (let i = 0; i < length; i++) {
    const c = out[i];
    if (inString) {
      out[at++] = c;
      if (c === 0x22) {
        inString = false;
      } else if (c === 0x5c) {
        // an escape: a `\u` only of a control character (`\u0000`-`\u001f`), whose compact spelling is the same
        const e = out[++i];
        if (e === 0x75 && !(out[i + 1] === 0x30 && out[i + 2] === 0x30 && (out[i + 3] === 0x30 || out[i + 3] === 0x31))) return undefined;
        out[at++] = e;
      }
    } else if (c === 0x22) {
      inString = true;
      out[at++] = c;
    } else if (c !== 0x20) {
      if (c === 0x4e || c === 0x49) return undefined; // `NaN`, `Infinity`, `-Infinity`
      out[at++] = c;
    }
  }
  if (inString) return undefined;
  return out.toString("latin1", 0, at);
}
