// The parse scan as it was before it tallied trees and read fractions once (one walk per check, a stack of key
// scopes, every separator a turn of the loop), kept verbatim as the reference the faster scan is held to.
import { canonicalEscapeSavings, CANONICAL_OUTSIDE, isCanonicalNumberToken, isRepeatedKey } from "../../../src/wire/py-json-canonical";
import {
  isEscaped,
  isIntegerLikeKey,
  isLossyNumber,
  nextNonSpace,
  numberEnd,
  NATIVE_EXACT,
  NATIVE_LOSSY,
  NESTED_TOO_DEEP,
} from "../../../src/wire/py-json-scan";

/** What the reference scan finds out about a text's spelling when asked. */
export interface CanonicalScan {
  canonical: boolean;
}

const hasCanonicalEscapes = (text: string, from: number, end: number): boolean => canonicalEscapeSavings(text, from, end) >= 0;

const keyStarts: number[] = [];
const keyEnds: number[] = [];
const scopeBases: number[] = [];

/** The reference: NESTED_TOO_DEEP, NATIVE_LOSSY or NATIVE_EXACT, and with `spelling` whether the text is canonical. */
export function referenceScan(text: string, maxDepth: number, spelling: CanonicalScan | null): number {
  const length = text.length;
  let depth = 0;
  let lossy = false;
  let canonical = spelling !== null;
  let keyCount = 0;
  scopeBases.length = 0;
  let backslash = canonical ? text.indexOf("\\") : -1;
  let i = 0;
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      const start = i + 1;
      let end = text.indexOf('"', start);
      while (end !== -1 && text.charCodeAt(end - 1) === 92 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) return NATIVE_LOSSY; // unterminated: no bracket counts after it, and the exact reader reports it
      i = end + 1;
      if (canonical) {
        if (backslash !== -1 && backslash < end) {
          if (backslash < start) backslash = text.indexOf("\\", start);
          if (backslash !== -1 && backslash < end) {
            canonical = hasCanonicalEscapes(text, backslash, end);
            backslash = text.indexOf("\\", i);
          }
        }
        if (text.charCodeAt(i) === 58) {
          if (end - start <= 10 && isIntegerLikeKey(text, start, end)) canonical = false; // JS would move it first
          // canonical escapes spell each key one way only, so a repeated key repeats its text
          if (isRepeatedKey(text, start, end, keyStarts, keyEnds, scopeBases[scopeBases.length - 1], keyCount)) canonical = false;
          keyStarts[keyCount] = start;
          keyEnds[keyCount] = end;
          keyCount += 1;
        }
      }
      if (!lossy && end - start <= 10 && isIntegerLikeKey(text, start, end) && nextNonSpace(text, i) === 58) lossy = true;
    } else if ((c >= 48 && c <= 57) || c === 45) {
      // an int (most tokens: ids, counts, bytes) is walked here: lossy past 15 digits or as `-0`, not canonical as `-0`
      let j = c === 45 ? i + 1 : i;
      const intStart = j;
      let d = text.charCodeAt(j);
      while (d >= 48 && d <= 57) d = text.charCodeAt(++j);
      if (d !== 46 && d !== 101 && d !== 69 && j > intStart) {
        if (j - intStart >= 16) {
          lossy = true;
        } else if (c === 45 && j - intStart === 1 && text.charCodeAt(intStart) === 48) {
          lossy = true;
          canonical = false;
        }
        i = j;
        continue;
      }
      const next = lossy ? numberEnd(text, i) : scanNumber(text, i);
      const end = next < 0 ? -next : next;
      if (next < 0) lossy = true;
      if (canonical && !isCanonicalNumberToken(text, i, end)) canonical = false;
      i = end;
    } else if (c === 91 || c === 123) {
      if (++depth > maxDepth) return NESTED_TOO_DEEP;
      if (canonical) scopeBases.push(keyCount);
      i += 1;
    } else {
      if ((c === 93 || c === 125) && depth > 0) {
        depth -= 1;
        if (canonical) keyCount = scopeBases.pop() as number; // the keys of the container that closed are gone
      } else if (canonical && (c >= 128 || CANONICAL_OUTSIDE[c] === 0)) canonical = false;
      i += 1;
    }
  }
  if (spelling !== null) spelling.canonical = canonical;
  return lossy ? NATIVE_LOSSY : NATIVE_EXACT;
}

function scanNumber(text: string, start: number): number {
  const negative = text.charCodeAt(start) === 45;
  const intStart = negative ? start + 1 : start;
  let j = intStart;
  let d = text.charCodeAt(j);
  while (d >= 48 && d <= 57) d = text.charCodeAt(++j);
  const intDigits = j - intStart;
  if (d !== 46 && d !== 101 && d !== 69) {
    if (intDigits === 0) return start + 1; // a lone `-`: no number, which the parser refuses
    const lossy = intDigits >= 16 || (negative && intDigits === 1 && text.charCodeAt(intStart) === 48);
    return lossy ? -j : j;
  }
  const end = numberEnd(text, j);
  return isLossyNumber(text, start, end) ? -end : end;
}
