// Whether JSON.parse would take a text, answered by one forward scan of its UTF-8 bytes that builds nothing: for a
// caller that only needs the verdict (and the top-level keys), a throwaway parse costs three times as much plus garbage.

/**
 * The verdict is the native parser's (RFC 8259 as V8 reads it) on the UTF-8 reading of the bytes: whitespace is space,
 * tab, line feed and carriage return only; a string holds no character below U+0020 and only the escapes
 * `\" \\ \/ \b \f \n \r \t \uXXXX` (any four hex digits, a lone surrogate included); numbers are
 * `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` (any magnitude); the literals are `true`, `false`, `null`;
 * nothing but whitespace follows the value, and an empty or blank text is refused. A byte-order mark is a character
 * like any other (JSON.parse refuses a leading U+FEFF): a caller whose text drops one skips it in the bytes too.
 * Bytes at or above 0x80 only ever appear inside strings in accepted text, and any of them is taken there (UTF-8 and
 * its replacement character alike are at or above U+0080, and a broken sequence never swallows the ASCII byte after
 * it), so the bytes need no decoding.
 */

const TAB = 0x09;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const UPPER_E = 0x45;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const LOWER_E = 0x65;
const LOWER_F = 0x66;
const LOWER_N = 0x6e;
const LOWER_T = 0x74;
const LOWER_U = 0x75;
const OPEN_BRACE = 0x7b;

/** The characters after a backslash that make a one-character escape (`u` is checked apart). */
const SHORT_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') SHORT_ESCAPE[c.charCodeAt(0)] = 1;

/** Hex digits of a `\u` escape, either case. */
const HEX = new Uint8Array(256);
for (const c of "0123456789abcdefABCDEF") HEX[c.charCodeAt(0)] = 1;

/** The byte that opened each open container, by depth (1-based); grown when a text nests deeper, never shrunk. */
let openers = new Uint8Array(256);

// The scan is one loop with the common paths written out in it (plain string bytes, digits, no whitespace): calls to
// helpers there cost a fifth more on session views. The rare paths (escapes, literals, the key of a member) are calls.

/** Index after the escape whose backslash is at `i`, or -1 when JSON.parse refuses it. */
function skipEscape(bytes: Uint8Array, i: number, length: number): number {
  const escaped = i + 1 < length ? bytes[i + 1] : -1;
  if (escaped === LOWER_U) {
    if (i + 5 >= length || HEX[bytes[i + 2]] === 0 || HEX[bytes[i + 3]] === 0 || HEX[bytes[i + 4]] === 0 || HEX[bytes[i + 5]] === 0) return -1;
    return i + 6;
  }
  return escaped >= 0 && SHORT_ESCAPE[escaped] === 1 ? i + 2 : -1;
}

/** Index after the string whose opening quote is at `i`, or -1 when JSON.parse refuses it. */
function skipString(bytes: Uint8Array, i: number, length: number): number {
  i++;
  while (i < length) {
    const c = bytes[i];
    if (c > BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
    else if (c === BACKSLASH) {
      i = skipEscape(bytes, i, length);
      if (i < 0) return -1;
    } else if (c < SPACE) return -1;
    else i++;
  }
  return -1;
}

/** Index after `word` (ASCII, its first letter already matched at `i`), or -1. */
function skipWord(bytes: Uint8Array, i: number, length: number, word: string): number {
  if (i + word.length > length) return -1;
  for (let k = 1; k < word.length; k++) if (bytes[i + k] !== word.charCodeAt(k)) return -1;
  return i + word.length;
}

/**
 * Reads a member's `"key":` (and the whitespace around the colon) from `i`; returns where the value starts, or -1.
 * With `members`, pushes the key's span and the value's start.
 */
function skipKey(bytes: Uint8Array, i: number, length: number, members: number[] | undefined): number {
  if (i >= length || bytes[i] !== QUOTE) return -1;
  const start = i;
  i = skipString(bytes, i, length);
  if (i < 0) return -1;
  const end = i;
  while (i < length && isSpace(bytes[i])) i++;
  if (i >= length || bytes[i] !== COLON) return -1;
  i++;
  while (i < length && isSpace(bytes[i])) i++;
  if (members !== undefined) members.push(start, end, i);
  return i;
}

function isSpace(c: number): boolean {
  return c <= SPACE && (c === SPACE || c === LINE_FEED || c === CARRIAGE_RETURN || c === TAB);
}

/**
 * The scan behind both exports: true when JSON.parse takes the text and it nests at most `maxDepth` arrays/objects.
 * With `members`, each member of a top-level object pushes four offsets, in text order (repeated keys included): its
 * key's start and end (quotes included), its value's start and end.
 */
function scan(bytes: Uint8Array, maxDepth: number, members: number[] | undefined): boolean {
  const length = bytes.length;
  let stack = openers;
  let depth = 0;
  let i = 0;
  while (i < length && isSpace(bytes[i])) i++;
  for (;;) {
    // a value starts at i
    if (i >= length) return false;
    let c = bytes[i];
    if (c === QUOTE) {
      // the plain bytes of a string, in line; escapes and the end are left to skipString
      i++;
      while (i < length) {
        c = bytes[i];
        if (c > BACKSLASH || (c >= SPACE && c !== QUOTE && c !== BACKSLASH)) i++;
        else break;
      }
      if (i >= length) return false;
      if (c === QUOTE) i++;
      else {
        i = skipString(bytes, i - 1, length);
        if (i < 0) return false;
      }
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      if (c === MINUS) {
        i++;
        c = i < length ? bytes[i] : -1;
      }
      if (c === ZERO) i++;
      else if (c > ZERO && c <= NINE) {
        i++;
        while (i < length && (bytes[i] - ZERO) >>> 0 <= 9) i++;
      } else return false;
      c = i < length ? bytes[i] : -1;
      if (c === DOT) {
        const digits = ++i;
        while (i < length && (bytes[i] - ZERO) >>> 0 <= 9) i++;
        if (i === digits) return false;
        c = i < length ? bytes[i] : -1;
      }
      if (c === LOWER_E || c === UPPER_E) {
        i++;
        if (i < length && (bytes[i] === PLUS || bytes[i] === MINUS)) i++;
        const digits = i;
        while (i < length && (bytes[i] - ZERO) >>> 0 <= 9) i++;
        if (i === digits) return false;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return false;
      if (depth >= stack.length) {
        const grown = new Uint8Array(stack.length * 2);
        grown.set(stack);
        openers = stack = grown;
      }
      stack[depth] = c;
      i++;
      while (i < length && isSpace(bytes[i])) i++;
      if (i >= length) return false;
      // an empty container is a whole value (its closer is its opener + 2); else its first member or item starts here
      if (bytes[i] !== c + 2) {
        if (c === OPEN_BRACE) {
          i = skipKey(bytes, i, length, depth === 1 ? members : undefined);
          if (i < 0) return false;
        }
        continue;
      }
      i++;
      depth--;
    } else {
      if (c === LOWER_T) i = skipWord(bytes, i, length, "true");
      else if (c === LOWER_F) i = skipWord(bytes, i, length, "false");
      else if (c === LOWER_N) i = skipWord(bytes, i, length, "null");
      else return false;
      if (i < 0) return false;
    }
    // a value ended at i: close containers until one goes on with a comma
    for (;;) {
      if (depth === 1 && members !== undefined && stack[1] === OPEN_BRACE) members.push(i);
      while (i < length && isSpace(bytes[i])) i++;
      if (depth === 0) return i === length;
      if (i >= length) return false;
      c = bytes[i];
      if (c === COMMA) {
        i++;
        while (i < length && isSpace(bytes[i])) i++;
        if (stack[depth] === OPEN_BRACE) {
          i = skipKey(bytes, i, length, depth === 1 ? members : undefined);
          if (i < 0) return false;
        }
        break;
      }
      if (c !== stack[depth] + 2) return false;
      i++;
      depth--;
    }
  }
}

/** True exactly when `JSON.parse` takes the UTF-8 reading of `bytes` (and it nests at most `maxDepth` levels). */
export function isJsonText(bytes: Uint8Array, maxDepth: number = Infinity): boolean {
  return scan(bytes, maxDepth, undefined);
}

/**
 * The members of the top-level object of a text JSON.parse takes, nesting at most `maxDepth` levels: four byte
 * offsets per member in text order, repeated keys included (the key's span with its quotes, then the value's).
 * Undefined when JSON.parse refuses the text, it nests deeper, or its value is not an object.
 */
export function outlineJsonObject(bytes: Uint8Array, maxDepth: number = Infinity): number[] | undefined {
  let start = 0;
  while (start < bytes.length && isSpace(bytes[start])) start++;
  if (start >= bytes.length || bytes[start] !== OPEN_BRACE) return undefined;
  const members: number[] = [];
  return scan(bytes, maxDepth, members) ? members : undefined;
}
