// Reads JSON text or bytes as Python's json.loads does: ints apart from floats, exact big ints, key order kept, and
// the native parser used wherever it gives the same values (checked by one byte scan first).
import { findJsonDepthExcess, MAX_JSON_DEPTH, type JsonDepthExcess } from "./json-depth";
import {
  closingQuote,
  isIntegerLikeKey,
  isLossyNumber,
  MAX_SPELLING_DEPTH,
  NATIVE_EXACT,
  NESTED_TOO_DEEP,
  nextNonSpace,
  numberEnd,
  scanForNativeParse,
  type JsonTreeTally,
  type SpellingScan,
} from "./py-json-scan";
import { PY_RESPONSE_JSON, SpelledPyJson } from "./py-json-spelling";
import { isArrayIndexKey, PyBigInt, PyFloat, rememberKeyOrder, type PyJson } from "./py-json-values";

/** A text Python's `json.loads` rejects; the message is Python's (`Expecting value: line 1 column 1 (char 0)`). */
export class PyJsonError extends Error {
  override readonly name = "PyJsonError";
  constructor(
    /** Python's message without the position. */
    readonly reason: string,
    /** Offset (in UTF-16 units) where Python reports the problem. */
    readonly position: number,
    text: string,
  ) {
    super(`${reason}: ${describePosition(text, position)}`);
  }
}

function describePosition(text: string, position: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < position; i = text.indexOf("\n", i + 1)) {
    line += 1;
    lineStart = i + 1;
  }
  return `line ${line} column ${position - lineStart + 1} (char ${position})`;
}

/**
 * True when the native parser would lose something Python keeps in `text` (a JSON text; anything it cannot parse
 * falls to the exact reader anyway): a float spelling whose value is an integer (`1.0`, `1e5`, `0.99999999999999999`;
 * not `-0.0`, which the native parser keeps as a negative zero, our float -0.0), an int of 16+ digits (possibly past
 * 2^53), `-0` as an int, an integer-like key (JS objects move those first). Strings are skipped, so ids such as
 * `"chatcmpl-617090e7"` do not count; runs of small ints (token ids, byte lists) are skipped by one sticky regex.
 */
export function isLossyForNativeParse(text: string): boolean {
  const length = text.length;
  let i = 0;
  // the last long run the regex passed, as text: a list that opens with the same characters again (v2's samples
  // reply spells the session's accumulated ids and the active leaf's copy alike) is passed by one comparison
  let longRun = "";
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      const start = i + 1;
      const end = closingQuote(text, start);
      if (end === -1) return true;
      i = end + 1;
      if (end - start <= 10 && isIntegerLikeKey(text, start, end) && nextNonSpace(text, i) === 58) return true;
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      // the same ints, and after them no character that would make the last one a longer number: the run again
      if (longRun !== "" && isRunAgain(text, i, longRun)) {
        i += longRun.length;
        continue;
      }
      SAFE_INT_RUN.lastIndex = i;
      if (SAFE_INT_RUN.test(text)) {
        if (SAFE_INT_RUN.lastIndex - i >= REPEATED_RUN_MIN_CHARS) longRun = text.slice(i, SAFE_INT_RUN.lastIndex);
        i = SAFE_INT_RUN.lastIndex;
        continue;
      }
      const end = numberEnd(text, i);
      if (isLossyNumber(text, i, end)) return true;
      i = end;
    } else {
      i += 1;
    }
  }
  return false;
}

/** From this many characters on, an int run is remembered for {@link isLossyForNativeParse} to recognize again. */
const REPEATED_RUN_MIN_CHARS = 256;

/**
 * True when a list's items at `at` (just after its `[`) are `run` again, with no digit, `.`, `e` or `E` after them.
 * The first and last characters turn most other lists away before the comparison of the whole text (a copy
 * compared at memory speed, which `startsWith` is not).
 */
function isRunAgain(text: string, at: number, run: string): boolean {
  const end = at + run.length;
  if (text.charCodeAt(at - 1) !== 91 || text.charCodeAt(at) !== run.charCodeAt(0) || text.charCodeAt(end - 1) !== run.charCodeAt(run.length - 1)) return false;
  return !continuesNumber(text.charCodeAt(end)) && text.slice(at, end) === run;
}

/** True for a character that continues a number token as the int-run regex's lookahead sees it (`0-9`, `.`, `e`, `E`). */
function continuesNumber(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 46 || c === 101 || c === 69;
}

/**
 * A run of ints of at most 15 digits (never `-0`), separated by commas (and one space, as Python's default separators
 * write them): each is exact in a double and an int on both sides. A number followed by `.`, `e` or a 16th digit is not
 * part of the run.
 */
const SAFE_INT_RUN = /(?:-?[1-9][0-9]{0,14}|0)(?![0-9.eE])(?:, ?(?:-?[1-9][0-9]{0,14}|0)(?![0-9.eE]))*/y;

/** How {@link parsePyJson} hands numbers back. */
export interface PyJsonParseOptions {
  /**
   * The `loose_tool_call` reading of miles' message matcher: duplicate keys and NaN/Infinity are errors, and every
   * number comes back as its {@link ExactJsonNumber} text (compared as a decimal, never rounded to a double).
   */
  exact?: boolean;
}

/**
 * Parses JSON text as Python's `json.loads` does: NaN/Infinity/-Infinity accepted, duplicate keys keep the first
 * position and the last value, ints and floats kept apart (integral floats become {@link PyFloat}, ints past 2^53
{@link PyBigInt}, reordered keys are remembered). Texts without lossy spellings take the native parser.
 * @throws PyJsonError with Python's message for text Python rejects
 */
export function parsePyJson(text: string, options: PyJsonParseOptions = {}): PyJson {
  if (options.exact === true) {
    const reader = new PyJsonReader(text, true);
    reader.skipWhitespace();
    const value = reader.readValue();
    reader.skipWhitespace();
    if (reader.position !== text.length) throw new PyJsonError("Extra data", reader.position, text);
    return value;
  }
  return readPyJson(text, isLossyForNativeParse(text));
}

/** The native parser when `lossy` is false and it accepts the text, else the exact reader. */
function readPyJson(text: string, lossy: boolean): PyJson {
  if (!lossy) {
    const value = parseNatively(text);
    if (value !== NOT_NATIVE) return value;
  }
  return readExactly(text);
}

/** What {@link parseNatively} answers for a text the native parser refuses. */
const NOT_NATIVE: unique symbol = Symbol("not native");

function parseNatively(text: string): PyJson | typeof NOT_NATIVE {
  try {
    return JSON.parse(text) as PyJson;
  } catch {
    return NOT_NATIVE; // Python's literals, or an error to report with Python's words
  }
}

function readExactly(text: string): PyJson {
  const reader = new PyJsonReader(text);
  reader.skipWhitespace();
  const value = reader.readValue();
  reader.skipWhitespace();
  if (reader.position !== text.length) throw new PyJsonError("Extra data", reader.position, text);
  return value;
}

/**
 * What {@link parsePyJsonBytes} read: the value, or where nesting first went past the cap (nothing parsed then). With
 * `keepSpelling`, `spelled` holds the text when it is exactly `dumpsPy(value, PY_RESPONSE_JSON)`, and `tally` what
 * the value holds when it is also an ASCII text the native parser read.
 */
export type PyJsonBytesRead =
  | { readonly value: PyJson; readonly excess: null; readonly spelled?: SpelledPyJson; readonly tally?: JsonTreeTally }
  | { readonly value: undefined; readonly excess: JsonDepthExcess; readonly spelled?: undefined; readonly tally?: undefined };

/** Options of {@link parsePyJsonBytes}. */
export interface PyJsonBytesOptions {
  /**
   * Keep the text as the value's {@link PY_RESPONSE_JSON} spelling when it is one already (a reply a compact JSON
   * writer made), so writing the value again copies it. Decided by the scan that reads the text anyway
   * ({@link isCanonicalNumberToken}, {@link canonicalEscapeSavings}, no whitespace, no repeated or integer-like key):
   * any doubt is a no. Such a text's tree is tallied by the same scan (for a caller that sizes it).
   */
  keepSpelling?: boolean;
}

/**
 * `findJsonDepthExcess(bytes, maxDepth)`, then (within the cap) `parsePyJson` of the bytes as UTF-8, in one pass
 * over the text where those take two: the scan that decides the native parser also counts the nesting. The excess
 * reported is the byte scan's own (its offset counts bytes), which runs only when the text scan finds one: decoding
 * keeps every ASCII byte (brackets, quotes, backslashes) in order and makes none of the others, so both scans agree.
 * @throws PyJsonError with Python's message for text Python rejects (only within the cap, as the two calls would)
 */
export function parsePyJsonBytes(bytes: Buffer, maxDepth: number = MAX_JSON_DEPTH, options: PyJsonBytesOptions = {}): PyJsonBytesRead {
  const text = bytes.toString("utf8");
  const spelling: SpellingScan | null = options.keepSpelling === true && maxDepth <= MAX_SPELLING_DEPTH ? { canonical: true, tally: null } : null;
  const scan = scanForNativeParse(text, maxDepth, spelling);
  if (scan === NESTED_TOO_DEEP) {
    const excess = findJsonDepthExcess(bytes, maxDepth);
    if (excess !== null) return { value: undefined, excess };
  }
  if (spelling === null || !spelling.canonical) return { value: readPyJson(text, scan !== NATIVE_EXACT), excess: null };
  const spelled = (value: PyJson): SpelledPyJson => new SpelledPyJson(value, text, PY_RESPONSE_JSON);
  if (scan === NATIVE_EXACT) {
    const value = parseNatively(text);
    if (value !== NOT_NATIVE) {
      // an ASCII text (as many characters as bytes) holds one-byte strings only, as the tally counts them
      const tally = spelling.tally !== null && text.length === bytes.length ? spelling.tally : undefined;
      return tally === undefined ? { value, excess: null, spelled: spelled(value) } : { value, excess: null, spelled: spelled(value), tally };
    }
  }
  const value = readExactly(text);
  return { value, excess: null, spelled: spelled(value) };
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Below this many characters an array is read element by element (a slice and a native parse cost more). */
const FLAT_ARRAY_MIN_CHARS = 64;

/** A JSON number kept as its source text (only produced by {@link parsePyJson} with `exact`). */
export class ExactJsonNumber {
  constructor(
    /** The number exactly as written. */
    readonly text: string,
  ) {}

  /** The value as a canonical decimal (`1.50e1` and `15` give the same text), as Python's Decimal compares it. */
  canonicalDecimal(): string {
    return canonicalDecimal(this.text);
  }
}

/** A finite decimal numeral (JSON number or Python repr) reduced to `[-]digits e exponent` with no redundant zeros. */
export function canonicalDecimal(text: string): string {
  const match = /^(-?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([-+]?[0-9]+))?$/.exec(text);
  if (match === null) return text;
  const [, sign, whole, fraction = "", exponentText = "0"] = match;
  let digits = `${whole}${fraction}`.replace(/^0+/, "");
  let exponent = Number(exponentText) - fraction.length;
  if (digits === "") return "0";
  const trailing = digits.length - digits.replace(/0+$/, "").length;
  digits = digits.slice(0, digits.length - trailing);
  exponent += trailing;
  return `${sign}${digits}e${exponent}`;
}

class PyJsonReader {
  position = 0;
  constructor(
    private readonly text: string,
    private readonly exact = false,
  ) {}

  private fail(reason: string, position: number): never {
    throw new PyJsonError(reason, position, this.text);
  }

  skipWhitespace(): void {
    const text = this.text;
    let i = this.position;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i += 1;
      else break;
    }
    this.position = i;
  }

  readValue(): PyJson {
    const text = this.text;
    const c = text[this.position];
    if (c === "{") return this.readObject();
    if (c === "[") return this.readArray();
    if (c === '"') return this.readString();
    if (text.startsWith("null", this.position)) return this.literal(4, null);
    if (text.startsWith("true", this.position)) return this.literal(4, true);
    if (text.startsWith("false", this.position)) return this.literal(5, false);
    if (this.exact && /^(?:NaN|Infinity|-Infinity)/.test(text.slice(this.position, this.position + 9))) {
      return this.fail("non-standard JSON constant", this.position);
    }
    if (text.startsWith("NaN", this.position)) return this.literal(3, Number.NaN);
    if (text.startsWith("Infinity", this.position)) return this.literal(8, Number.POSITIVE_INFINITY);
    if (text.startsWith("-Infinity", this.position)) return this.literal(9, Number.NEGATIVE_INFINITY);
    return this.readNumber();
  }

  private literal(length: number, value: PyJson): PyJson {
    this.position += length;
    return value;
  }

  private readNumber(): PyJson {
    NUMBER.lastIndex = this.position;
    const match = NUMBER.exec(this.text);
    if (match === null) return this.fail("Expecting value", this.position);
    const token = match[0];
    this.position += token.length;
    if (this.exact) return new ExactJsonNumber(token) as unknown as PyJson;
    if (match[1] === undefined && match[2] === undefined) {
      const asNumber = Number(token);
      if (Number.isSafeInteger(asNumber)) return asNumber === 0 ? 0 : asNumber;
      const big = BigInt(token);
      return big > MAX_SAFE || big < -MAX_SAFE ? new PyBigInt(big) : Number(big);
    }
    const value = Number(token);
    if (Number.isInteger(value) && !Object.is(value, -0)) return new PyFloat(value);
    return value;
  }

  private readString(): string {
    const text = this.text;
    const start = this.position;
    let i = start + 1;
    let simple = true;
    for (;;) {
      if (i >= text.length) return this.fail("Unterminated string starting at", start);
      const c = text.charCodeAt(i);
      if (c === 34) break;
      if (c === 92) {
        simple = false;
        const next = text[i + 1];
        if (next === undefined) return this.fail("Unterminated string starting at", start);
        if (next === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return this.fail("Invalid \\uXXXX escape", i + 1);
          i += 6;
        } else if ('"\\/bfnrt'.includes(next)) {
          i += 2;
        } else {
          return this.fail("Invalid \\escape", i);
        }
        continue;
      }
      if (c < 32) return this.fail("Invalid control character at", i);
      i += 1;
    }
    this.position = i + 1;
    return simple ? text.slice(start + 1, i) : (JSON.parse(text.slice(start, i + 1)) as string);
  }

  private readArray(): PyJson[] {
    if (!this.exact) {
      const flat = this.readNumberArray();
      if (flat !== null) return flat;
    }
    const items: PyJson[] = [];
    this.position += 1;
    this.skipWhitespace();
    if (this.text[this.position] === "]") {
      this.position += 1;
      return items;
    }
    for (;;) {
      this.skipWhitespace();
      items.push(this.readValue());
      this.skipWhitespace();
      const c = this.text[this.position];
      if (c === "]") {
        this.position += 1;
        return items;
      }
      if (c !== ",") return this.fail("Expecting ',' delimiter", this.position);
      this.position += 1;
    }
  }

  /**
   * A long array of numbers or of arrays of numbers only (token ids, log-prob pairs) whose spellings the native parser reads as Python does:
   * parsed by `JSON.parse` in one call, so such arrays cost what they cost on the fast path. Null when the array
   * holds anything else or a lossy spelling (`1.0`, `-0`, an exponent, ...); the element-wise reader then runs.
   */
  private readNumberArray(): PyJson[] | null {
    const text = this.text;
    const start = this.position;
    let i = start + 1;
    // Numbers, separators and nested brackets only (`[[-0.5, 151643], ...]` counts), up to the matching `]`.
    for (let depth = 1; ; i++) {
      const c = text.charCodeAt(i);
      if ((c >= 48 && c <= 57) || c === 44 || c === 45 || c === 46 || c === 32 || c === 10 || c === 13 || c === 9) continue;
      if (c === 91) depth += 1;
      else if (c === 93) {
        if (--depth === 0) break;
      } else return null;
    }
    if (i - start < FLAT_ARRAY_MIN_CHARS) return null;
    const slice = text.slice(start, i + 1);
    if (isLossyForNativeParse(slice)) return null;
    try {
      const items = JSON.parse(slice) as PyJson[];
      this.position = i + 1;
      return items;
    } catch {
      return null; // not JSON after all (`[1,,2]`): the element-wise reader reports it in Python's words
    }
  }

  private readObject(): { [key: string]: PyJson } {
    const object: { [key: string]: PyJson } = {};
    const keys: string[] = [];
    let reorder = false;
    this.position += 1;
    this.skipWhitespace();
    if (this.text[this.position] === "}") {
      this.position += 1;
      return object;
    }
    for (;;) {
      if (this.text.charCodeAt(this.position) !== 34) return this.fail("Expecting property name enclosed in double quotes", this.position);
      const key = this.readString();
      this.skipWhitespace();
      if (this.text.charCodeAt(this.position) !== 58) return this.fail("Expecting ':' delimiter", this.position);
      this.position += 1;
      this.skipWhitespace();
      const value = this.readValue();
      // A repeated key keeps its first position and takes the last value, as a Python dict does.
      const repeated = Object.prototype.hasOwnProperty.call(object, key);
      if (this.exact && repeated) return this.fail(`duplicate JSON object key: ${JSON.stringify(key)}`, this.position);
      if (!repeated) {
        keys.push(key);
        if (isArrayIndexKey(key)) reorder = true;
      }
      // Plain assignment keeps the object fast; only `__proto__` needs a definition to stay data.
      if (key === "__proto__") Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
      else object[key] = value;
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.position);
      if (c === 125) {
        this.position += 1;
        if (reorder) rememberKeyOrder(object, keys);
        return object;
      }
      if (c !== 44) return this.fail("Expecting ',' delimiter", this.position);
      this.position += 1;
      this.skipWhitespace();
    }
  }
}
