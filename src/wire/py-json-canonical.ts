// The token rules that tell when a JSON text is already exactly what dumpsPy would write for the value it parses to
// (compact, ensure_ascii=False), so a server can keep the text it received instead of spelling the value again.

/** Most significant digits a decimal may have and still be the shortest spelling of its double (DBL_DIG). */
const MAX_EXACT_DIGITS = 15;
/** Widest exponent the rule vouches for: past it doubles lose precision (subnormals) or overflow. */
const MAX_EXPONENT = 307;

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/**
 * True when the number token `text[start, end)` (a JSON number the parser accepted) is spelled as dumpsPy writes
 * the value the readers give it. An int: its digits, so any int but `-0` (Python's `0`). A float: Python's repr of
 * its double, decided without converting: a decimal of at most 15 significant digits is the only one of that length
 * that reads as its double (doubles are ~15.95 digits apart), so repr's shortest digits are the token's own when it
 * has no trailing zero; the form must then be repr's: fixed for 1e-4 <= |x| < 1e16 (`0.0001`, `1.0`, `-0.0`,
 * `12.5`), else `d[.ddd]e±XX` (`1e-05`, `1.5e+16`). Longer or unusual spellings answer false (the caller spells
 * the value again, which is always right), as do exponents past ±307.
 */
export function isCanonicalNumberToken(text: string, start: number, end: number): boolean {
  let i = start;
  if (text.charCodeAt(i) === 45) i += 1;
  const intStart = i;
  while (i < end && isDigit(text.charCodeAt(i))) i += 1;
  const intDigits = i - intStart;
  if (intDigits === 0) return false; // a lone `-` (`-Infinity`)
  const leadingZero = text.charCodeAt(intStart) === 48;
  if (i === end) return !(leadingZero && start !== intStart); // an int: all but `-0`
  let j = i;
  if (text.charCodeAt(i) === 46) {
    const fractionStart = i + 1;
    j = fractionStart;
    while (j < end && isDigit(text.charCodeAt(j))) j += 1;
    const fractionDigits = j - fractionStart;
    if (fractionDigits === 0) return false;
    if (j === end) {
      // the fixed form
      if (fractionDigits === 1 && text.charCodeAt(fractionStart) === 48) {
        return leadingZero || intDigits <= MAX_EXACT_DIGITS; // an integral float: `0.0`, `-0.0`, `12.0`
      }
      if (text.charCodeAt(end - 1) === 48) return false; // a trailing zero: repr's digits are shorter
      if (!leadingZero) return intDigits + fractionDigits <= MAX_EXACT_DIGITS;
      let zeros = 0;
      while (text.charCodeAt(fractionStart + zeros) === 48) zeros += 1;
      return zeros <= 3 && fractionDigits - zeros <= MAX_EXACT_DIGITS; // below 1e-4 repr writes an exponent
    }
    // `d.ddde±XX`: one leading digit, no trailing zero in the fraction
    if (intDigits !== 1 || leadingZero || text.charCodeAt(j - 1) === 48 || 1 + fractionDigits > MAX_EXACT_DIGITS) return false;
  } else if (intDigits !== 1 || leadingZero) {
    return false; // `de±XX` takes one leading digit
  }
  // the exponent form: a signed exponent of two digits or three (no leading zero), within the normal doubles
  if (text.charCodeAt(j) !== 101) return false;
  const sign = text.charCodeAt(j + 1);
  if (sign !== 43 && sign !== 45) return false;
  const exponentStart = j + 2;
  const exponentDigits = end - exponentStart;
  for (let k = exponentStart; k < end; k++) if (!isDigit(text.charCodeAt(k))) return false;
  if (exponentDigits < 2 || exponentDigits > 3 || (exponentDigits === 3 && text.charCodeAt(exponentStart) === 48)) return false;
  const exponent = Number(text.slice(exponentStart, end));
  return exponent <= MAX_EXPONENT && (sign === 45 ? exponent >= 5 : exponent >= 16);
}

/**
 * How many characters decoding the escapes of the string body `text[start, end)` (between its quotes) removes, when
 * every escape in it is one JSON.stringify writes: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t` (one each), or `\u00xx`
 * (lowercase; five) for another control character; -1 when one is not. `\/`, `\u0041`, `\u00e9`, an escaped surrogate
 * or uppercase hex spell a character JSON.stringify writes otherwise. `from` is the first backslash in the body. The
 * raw characters need no check: the parser refuses raw control characters, and a text decoded from UTF-8 holds no
 * lone surrogate.
 */
export function canonicalEscapeSavings(text: string, from: number, end: number): number {
  let saved = 0;
  for (let b = from; b !== -1 && b < end; b = text.indexOf("\\", b)) {
    const next = text.charCodeAt(b + 1);
    if (next === 34 || next === 92 || next === 98 || next === 102 || next === 110 || next === 114 || next === 116) {
      b += 2;
      saved += 1;
      continue;
    }
    if (next !== 117 || text.charCodeAt(b + 2) !== 48 || text.charCodeAt(b + 3) !== 48) return -1;
    const high = text.charCodeAt(b + 4);
    const low = text.charCodeAt(b + 5);
    if ((high !== 48 && high !== 49) || !(isDigit(low) || (low >= 97 && low <= 102))) return -1;
    const code = (high - 48) * 16 + (isDigit(low) ? low - 48 : low - 87);
    if (code === 8 || code === 9 || code === 10 || code === 12 || code === 13) return -1; // written `\b`, `\t`, ...
    b += 6;
    saved += 5;
  }
  return saved;
}

/**
 * The characters a canonical text may hold outside strings and numbers: the compact separators, the brackets and the
 * letters of `true`, `false` and `null` (no whitespace; no `NaN` or `Infinity`, which dumpsPy refuses).
 */
export const CANONICAL_OUTSIDE = new Uint8Array(128);
for (const c of ",:[]{}truefalsn") CANONICAL_OUTSIDE[c.charCodeAt(0)] = 1;

/**
 * True when the key `text[start, end)` is one of the keys `text[starts[k], ends[k])` for `from <= k < to` (the keys
 * its object held before it). Length and end characters first, so most comparisons cost two reads.
 */
export function isRepeatedKey(text: string, start: number, end: number, starts: readonly number[], ends: readonly number[], from: number, to: number): boolean {
  const length = end - start;
  for (let k = from; k < to; k++) {
    const other = starts[k];
    if (ends[k] - other !== length) continue;
    if (length === 0) return true;
    if (text.charCodeAt(other) !== text.charCodeAt(start) || text.charCodeAt(other + length - 1) !== text.charCodeAt(end - 1)) continue;
    let j = 1;
    while (j < length - 1 && text.charCodeAt(other + j) === text.charCodeAt(start + j)) j += 1;
    if (j >= length - 1) return true;
  }
  return false;
}
