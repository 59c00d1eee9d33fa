// The one pass over a JSON text that decides how it is read: within the depth cap or not, safe for the native parser
// or not, already dumpsPy's compact spelling or not, and (for such a text) what the tree it parses to holds.
import { CANONICAL_OUTSIDE, canonicalEscapeSavings, isCanonicalNumberToken, isRepeatedKey } from "./py-json-canonical";

/** {@link scanForNativeParse}'s answers. */
export const NATIVE_EXACT = 0;
export const NATIVE_LOSSY = 1;
export const NESTED_TOO_DEEP = 2;

/** Deepest nesting a spelling scan follows (the writer's own limit: deeper values are never spelled compactly). */
export const MAX_SPELLING_DEPTH = 1000;

/**
 * What `JSON.parse` builds from a text, counted from the text itself: its containers, their slots (object fields and
 * array items), the numbers a heap-size model boxes, and its string values. Keys are not counted (V8 shares them).
 */
export interface JsonTreeTally {
  readonly objects: number;
  readonly arrays: number;
  /** Object fields plus array items. */
  readonly slots: number;
  /** Numbers other than 32-bit ints (-0 included), held in an object field or in an array that holds a non-number too. */
  readonly boxedNumbers: number;
  /** String values (not keys), each of one-byte characters (the caller vouches for that: an ASCII text). */
  readonly strings: number;
  /** Their decoded characters in 8-byte words, each string's rounded up. */
  readonly stringWords: number;
}

/** What a spelling scan ({@link scanForNativeParse} with this object) finds out beside its answer. */
export interface SpellingScan {
  /** The text is dumpsPy's compact spelling (meaningful only when it parses). */
  canonical: boolean;
  /** For a canonical text the native parser reads exactly (it must parse), what its tree holds; else null. */
  tally: JsonTreeTally | null;
}

/** Where each key of the objects open in a spelling scan starts and ends (reused; they only grow). */
const keyStarts: number[] = [];
const keyEnds: number[] = [];
/** For each container open in a spelling scan, by depth: how many keys the arrays above held when it opened. */
const keyBases = new Int32Array(MAX_SPELLING_DEPTH + 2);
/** The kind of each container a spelling scan left for a nested one, by depth (0: the top level, outside any). */
const kinds = new Int32Array(MAX_SPELLING_DEPTH + 2);
/** For each array of numbers only left for a nested container: how many of them a non-number joining them would box. */
const pendingBoxed = new Int32Array(MAX_SPELLING_DEPTH + 2);
const TOP_LEVEL = 0;
const OBJECT = 1;
const NUMBERS = 2;
const MIXED = 3;

/**
 * {@link isLossyForNativeParse} and {@link findJsonDepthExcess} of a string in one pass: NESTED_TOO_DEEP when an array
 * or object opens past `maxDepth` (outside strings, as the depth scan counts), else NATIVE_LOSSY or NATIVE_EXACT as the
 * lossy check answers. Number tokens are walked by hand rather than by the lossy check's int-run regex, so short
 * runs (a log-prob pair, a token's bytes) cost no regex call, and a fixed-form float is read once for both checks.
 * With `spelling` (and `maxDepth` at most {@link MAX_SPELLING_DEPTH}), also whether the text is spelled as dumpsPy
 * writes compactly (meaningful only when it parses): the tokens as {@link isCanonicalNumberToken} and
 * {@link canonicalEscapeSavings} say, nothing outside them but {@link CANONICAL_OUTSIDE}, no integer-like key and no key
 * twice in one object (the parsers would keep one entry); and for such a text, the tally of its tree. Tests hold every
 * answer to the two functions', the spelling to the reference writer and the tally to a walk of the parsed tree.
 */
export function scanForNativeParse(text: string, maxDepth: number, spelling: SpellingScan | null): number {
  const length = text.length;
  let depth = 0;
  let lossy = false;
  let canonical = spelling !== null;
  let keyCount = 0;
  keyBases[0] = 0;
  let backslash = canonical ? text.indexOf("\\") : -1;
  // the tally, kept while the text is canonical
  let objects = 0;
  let arrays = 0;
  let slots = 0;
  let boxed = 0;
  let strings = 0;
  let words = 0;
  // the innermost container's kind, and (an array of numbers only) how many of them a non-number would box
  let kind = TOP_LEVEL;
  let pending = 0;
  let i = 0;
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      const start = i + 1;
      const end = closingQuote(text, start);
      if (end === -1) return NATIVE_LOSSY; // unterminated: no bracket counts after it, and the exact reader reports it
      i = end + 1;
      const first = text.charCodeAt(start);
      const integerLike = first >= 48 && first <= 57 && end - start <= 10 && isIntegerLikeKey(text, start, end);
      if (canonical) {
        let chars = end - start;
        if (backslash !== -1 && backslash < end) {
          if (backslash < start) backslash = text.indexOf("\\", start);
          if (backslash !== -1 && backslash < end) {
            const saved = canonicalEscapeSavings(text, backslash, end);
            if (saved < 0) canonical = false;
            chars -= saved;
            backslash = text.indexOf("\\", i);
          }
        }
        if (text.charCodeAt(i) === 58) {
          if (integerLike) canonical = false; // JS would move it first
          // canonical escapes spell each key one way only, so a repeated key repeats its text
          if (isRepeatedKey(text, start, end, keyStarts, keyEnds, keyBases[depth], keyCount)) canonical = false;
          keyStarts[keyCount] = start;
          keyEnds[keyCount] = end;
          keyCount += 1;
          slots += 1;
        } else {
          strings += 1;
          words += (chars + 7) >>> 3;
          if (kind >= NUMBERS) {
            slots += 1;
            if (kind === NUMBERS) {
              kind = MIXED;
              boxed += pending;
            }
          }
        }
      }
      if (integerLike && !lossy && nextNonSpace(text, i) === 58) lossy = true;
      const after = text.charCodeAt(i);
      if (after === 58 || after === 44) i += 1; // the `:` or `,` that follows, which asks nothing of the scan
    } else if ((c >= 48 && c <= 57) || c === 45) {
      // an int (most tokens: ids, counts, bytes) is walked here: lossy past 15 digits or as `-0`, not canonical as `-0`
      let j = c === 45 ? i + 1 : i;
      const intStart = j;
      let d = text.charCodeAt(j);
      while (d >= 48 && d <= 57) d = text.charCodeAt(++j);
      const intDigits = j - intStart;
      let end: number;
      let boxedNumber = true;
      if (d !== 46 && d !== 101 && d !== 69 && intDigits > 0) {
        if (intDigits >= 16) {
          lossy = true;
        } else if (c === 45 && intDigits === 1 && text.charCodeAt(intStart) === 48) {
          lossy = true;
          canonical = false;
        }
        end = j;
        boxedNumber = intDigits > 9 && (intDigits > 10 || !isInt32Digits(text, intStart, j, c === 45));
      } else if (d === 46 && intDigits > 0 && intDigits < 13) {
        // a fraction: its digits, how many of them repeat the first, and what follows, in one walk
        const fractionStart = j + 1;
        const firstDigit = text.charCodeAt(fractionStart);
        let k = fractionStart;
        if (firstDigit >= 48 && firstDigit <= 57) {
          while (text.charCodeAt(k) === firstDigit) k++;
        }
        const run = k - fractionStart;
        for (let f = text.charCodeAt(k); f >= 48 && f <= 57; f = text.charCodeAt(++k));
        const after = text.charCodeAt(k);
        if (run === 0 || after === 46 || after === 101 || after === 69 || after === 43 || after === 45) {
          end = otherNumber(text, i, lossy); // no digit after the dot, an exponent, or not JSON
          if (end < 0) {
            lossy = true;
            end = -end;
          }
          if (canonical && !isCanonicalNumberToken(text, i, end)) canonical = false;
        } else {
          end = k;
          // isLossyNumber's cheap test: the nearest double may be integral only when these digits say so
          const fractionDigits = k - fractionStart;
          if (lossy) {
            // known already
          } else if (firstDigit === 48 && run === fractionDigits) {
            lossy = c !== 45 || !isAllZeros(text, intStart, j); // an integral float: lossy but as -0.0
          } else if ((firstDigit === 48 || firstDigit === 57) && run >= 13 - intDigits) {
            lossy = isLossyNumber(text, i, k);
          }
          if (canonical && !isCanonicalFraction(text, intStart, intDigits, fractionStart, fractionDigits, firstDigit === 48 ? run : 0)) canonical = false;
        }
      } else {
        end = otherNumber(text, i, lossy);
        if (end < 0) {
          lossy = true;
          end = -end;
        }
        if (canonical && !isCanonicalNumberToken(text, i, end)) canonical = false;
      }
      i = end;
      if (text.charCodeAt(i) === 44) i += 1;
      if (canonical) {
        if (kind === OBJECT) {
          if (boxedNumber) boxed += 1;
        } else if (kind === NUMBERS) {
          slots += 1;
          if (boxedNumber) pending += 1;
        } else if (kind === MIXED) {
          slots += 1;
          if (boxedNumber) boxed += 1;
        }
      }
    } else if (c === 91 || c === 123) {
      if (++depth > maxDepth) return NESTED_TOO_DEEP;
      if (canonical) {
        keyBases[depth] = keyCount;
        if (kind >= NUMBERS) {
          slots += 1;
          if (kind === NUMBERS) {
            kind = MIXED;
            boxed += pending;
          }
        }
        kinds[depth - 1] = kind;
        pendingBoxed[depth - 1] = pending;
        pending = 0;
        if (c === 123) {
          objects += 1;
          kind = OBJECT;
        } else {
          arrays += 1;
          kind = NUMBERS;
        }
      }
      i += 1;
    } else {
      if ((c === 93 || c === 125) && depth > 0) {
        if (canonical) {
          keyCount = keyBases[depth]; // the keys of the container that closed are gone
          kind = kinds[depth - 1];
          pending = pendingBoxed[depth - 1];
        }
        depth -= 1;
        if (text.charCodeAt(i + 1) === 44) i += 1;
      } else if (canonical) {
        if (c >= 128 || CANONICAL_OUTSIDE[c] === 0) canonical = false;
        else if ((c === 116 || c === 102 || c === 110) && kind >= NUMBERS) {
          // the first letter of `true`, `false` or `null` (no other letter of theirs is one of these): an item
          slots += 1;
          if (kind === NUMBERS) {
            kind = MIXED;
            boxed += pending;
          }
        }
      }
      i += 1;
    }
  }
  if (spelling !== null) {
    spelling.canonical = canonical;
    spelling.tally = canonical && !lossy ? { objects, arrays, slots, boxedNumbers: boxed, strings, stringWords: words } : null;
  }
  return lossy ? NATIVE_LOSSY : NATIVE_EXACT;
}

/** True when the ten digits `text[start, end)` (after a `-` when `negative`) spell a 32-bit int (V8 keeps those unboxed). */
function isInt32Digits(text: string, start: number, end: number, negative: boolean): boolean {
  let value = 0;
  for (let k = start; k < end; k++) value = value * 10 + text.charCodeAt(k) - 48;
  return value <= (negative ? 2147483648 : 2147483647);
}

/** True when `text[start, end)` holds zeros only. */
function isAllZeros(text: string, start: number, end: number): boolean {
  for (let k = start; k < end; k++) if (text.charCodeAt(k) !== 48) return false;
  return true;
}

/**
 * {@link isCanonicalNumberToken} for a fixed-form float (`intDigits` digits from `intStart`, a dot, `fractionDigits`
 * digits from `fractionStart`, the first `zeros` of them zeros), from what the scan's walk already knows.
 */
function isCanonicalFraction(text: string, intStart: number, intDigits: number, fractionStart: number, fractionDigits: number, zeros: number): boolean {
  const leadingZero = text.charCodeAt(intStart) === 48;
  if (fractionDigits === 1 && zeros === 1) return leadingZero || intDigits <= 15; // an integral float: `0.0`, `12.0`
  if (text.charCodeAt(fractionStart + fractionDigits - 1) === 48) return false; // a trailing zero: repr's digits are shorter
  if (!leadingZero) return intDigits + fractionDigits <= 15;
  return zeros <= 3 && fractionDigits - zeros <= 15; // below 1e-4 repr writes an exponent
}

/**
 * The end of the number token at `start` (a `-` or a digit), negated when the native parser would read it otherwise
 * than Python (only looked at while `lossy` is false): an int of 16+ digits or `-0`, a float whose double is integral
 * ({@link isLossyNumber}).
 */
function otherNumber(text: string, start: number, lossy: boolean): number {
  if (lossy) return numberEnd(text, start);
  const negative = text.charCodeAt(start) === 45;
  const intStart = negative ? start + 1 : start;
  let j = intStart;
  let d = text.charCodeAt(j);
  while (d >= 48 && d <= 57) d = text.charCodeAt(++j);
  const intDigits = j - intStart;
  if (d !== 46 && d !== 101 && d !== 69) {
    if (intDigits === 0) return start + 1; // a lone `-`: no number, which the parser refuses
    return intDigits >= 16 || (negative && intDigits === 1 && text.charCodeAt(intStart) === 48) ? -j : j;
  }
  const end = numberEnd(text, j);
  return isLossyNumber(text, start, end) ? -end : end;
}

/** Index of the quote that closes the string whose body starts at `start` (escaped quotes skipped), or -1. */
export function closingQuote(text: string, start: number): number {
  let end = text.indexOf('"', start);
  while (end !== -1 && text.charCodeAt(end - 1) === 92 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
  return end;
}

/** True when the quote at `quote` follows an odd run of backslashes (it is part of the string). */
export function isEscaped(text: string, quote: number): boolean {
  let backslashes = 0;
  for (let j = quote - 1; text.charCodeAt(j) === 92; j--) backslashes += 1;
  return backslashes % 2 === 1;
}

/** True for a string body `text[start, end)` a JS object would take as an array index (`0`, `17`; not `017`). */
export function isIntegerLikeKey(text: string, start: number, end: number): boolean {
  if (end === start) return false;
  if (text.charCodeAt(start) === 48) return end === start + 1;
  for (let j = start; j < end; j++) {
    const d = text.charCodeAt(j);
    if (d < 48 || d > 57) return false;
  }
  return true;
}

/** The first character at or after `from` that is not JSON whitespace. */
export function nextNonSpace(text: string, from: number): number {
  let j = from;
  for (let c = text.charCodeAt(j); c === 32 || c === 9 || c === 10 || c === 13; c = text.charCodeAt(++j));
  return text.charCodeAt(j);
}

/** The end of the number token at `from`: its characters as far as `0-9 . e E + -` go. */
export function numberEnd(text: string, from: number): number {
  let j = from + 1;
  for (let c = text.charCodeAt(j); (c >= 48 && c <= 57) || c === 46 || c === 101 || c === 69 || c === 43 || c === 45; c = text.charCodeAt(++j));
  return j;
}

/**
 * A number token the native parser would read differently from Python. An int: 16+ digits or `-0`. A float (a
 * fraction or an exponent): only when its nearest double is an integer other than -0, since both parsers round to the
 * same double and only the kind can be lost. That is decided by parsing the token, after a cheap test lets most floats
 * through: without an exponent and with an integer part of `k` digits (below 1e13), the nearest double can be an
 * integer only when the fraction is all zeros or starts with at least `13 - k` zeros or nines (doubles there are less
 * than 1.2e(k-16) apart), so a log-prob such as `-0.0078125` or a timestamp such as `1796075262.0039878` is let through.
 */
export function isLossyNumber(text: string, start: number, end: number): boolean {
  const negative = text.charCodeAt(start) === 45;
  const intStart = negative ? start + 1 : start;
  let j = intStart;
  while (j < end && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
  const intDigits = j - intStart;
  if (j === end) return intDigits >= 16 || (negative && intDigits === 1 && text.charCodeAt(intStart) === 48);
  if (text.charCodeAt(j) === 46 && intDigits < 13) {
    const fractionStart = j + 1;
    let k = fractionStart;
    while (k < end && text.charCodeAt(k) >= 48 && text.charCodeAt(k) <= 57) k++;
    if (k === end) {
      const first = text.charCodeAt(fractionStart);
      let run = 0;
      while (fractionStart + run < end && text.charCodeAt(fractionStart + run) === first) run++;
      const allZeros = first === 48 && run === end - fractionStart;
      if (!allZeros && !((first === 48 || first === 57) && run >= 13 - intDigits)) return false;
    }
  }
  // An exponent, a long integer part or a fraction that may round away: what the double is decides.
  const value = Number(text.slice(start, end));
  return Number.isInteger(value) && !Object.is(value, -0);
}
