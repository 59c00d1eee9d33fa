// JSON in and out with Python's meaning: parse as json.loads does (int vs float, exact big ints, key order) and
// write as json.dumps does (repr floats, separators, ensure_ascii), so the servers' bytes match the Python servers'.
import { PY_KEY_ORDER, PyBigInt, PyFloat, isArrayIndexKey, pyObjectKeys, rememberKeyOrder, type PyJson } from "./py-json-values";
import { pythonFloatRepr } from "./py-repr";
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

export * from "./py-json-values";
export * from "./py-repr";

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

/** The `json.dumps` settings a writing site uses. */
export interface PyDumpsOptions {
  /** `ensure_ascii` (Python's default is true). */
  ensureAscii: boolean;
  /** `separators=(",", ":")` when true, Python's default `(", ", ": ")` when false. */
  compact: boolean;
  /** `allow_nan` (Python's default is true); false refuses NaN and the infinities as Python does. */
  allowNan: boolean;
}

/** Starlette's JSONResponse and miles' `_render_json`: compact, non-ASCII kept, NaN refused. */
export const PY_RESPONSE_JSON: PyDumpsOptions = Object.freeze({ ensureAscii: false, compact: true, allowNan: false });
/** Plain `json.dumps(x)`: what miles sends upstream. */
export const PY_DEFAULT_JSON: PyDumpsOptions = Object.freeze({ ensureAscii: true, compact: false, allowNan: true });
/** miles' samples codec `_samples_meta`: compact, non-ASCII kept, NaN written. */
export const PY_SAMPLES_META_JSON: PyDumpsOptions = Object.freeze({ ensureAscii: false, compact: true, allowNan: true });
/** transformers' `tojson` filter with no arguments: `json.dumps(x, ensure_ascii=False)`. */
export const PY_TOJSON: PyDumpsOptions = Object.freeze({ ensureAscii: false, compact: false, allowNan: true });

/**
 * A value with the text {@link dumpsPy} already wrote for it under `options`: written again with those options, the
 * text is copied instead of spelled anew (with any other options the value is spelled). The value must not change
 * after it was written, and must nest shallowly enough for the depth limit wherever it is placed.
 */
export class SpelledPyJson {
  constructor(
    /** The value the text spells. */
    readonly value: unknown,
    /** `dumpsPy(value, options)`. */
    readonly text: string,
    /** The settings the text was written with. */
    readonly options: PyDumpsOptions,
  ) {}
}

function sameDumpsOptions(a: PyDumpsOptions, b: PyDumpsOptions): boolean {
  return a === b || (a.ensureAscii === b.ensureAscii && a.compact === b.compact && a.allowNan === b.allowNan);
}

/** Thrown by {@link dumpsPy} where Python's `json.dumps` raises (NaN with allow_nan=False, a non-JSON value). */
export class PyJsonWriteError extends Error {
  override readonly name = "PyJsonWriteError";
}

const NON_ASCII = /[\u007f-\uffff]/g;

function asciiEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** A JS number as Python sees it in our model: an int when integral (and not -0), else a float. */
function dumpsNumber(value: number, options: PyDumpsOptions): string {
  // Fractional floats in [1e-4, 1e16): JS and Python both print the shortest round-trip digits, without exponent.
  const magnitude = value < 0 ? -value : value;
  if (magnitude >= 1e-4 && magnitude < 1e16 && !Number.isInteger(value)) return String(value);
  if (!Number.isFinite(value)) {
    if (!options.allowNan) throw new PyJsonWriteError("Out of range float values are not JSON compliant");
    return pythonFloatRepr(value);
  }
  if (Number.isInteger(value) && !Object.is(value, -0)) return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
  return pythonFloatRepr(value);
}

/** True when every element is a number `JSON.stringify` spells exactly as Python would (safe ints, floats ≥ 1e-4). */
export function isNativeSpelledNumberArray(array: readonly unknown[]): boolean {
  for (let i = 0; i < array.length; i++) {
    const x = array[i];
    if (typeof x !== "number" || !isNativeSpelledNumber(x)) return false;
  }
  return true;
}

/**
 * Serializes `value` byte for byte as Python's `json.dumps` with the given settings would serialize the value Python
 * holds for it (see {@link PyFloat}, {@link PyBigInt}, the remembered key order). `undefined` object values are
 * skipped, as `JSON.stringify` does.
 * @throws PyJsonWriteError for NaN/Infinity when `allowNan` is false, and for values JSON cannot hold
 */
export function dumpsPy(value: unknown, options: PyDumpsOptions): string {
  const pieces = nativePieces(value, options);
  if (pieces === undefined) return new PyJsonTextWriter(options).spell(value);
  if (pieces.length === 1) return pieces[0];
  let out = pieces[0];
  for (let k = 1; k < pieces.length; k++) out += pieces[k];
  return out;
}

/**
 * `Buffer.from(dumpsPy(value, options), "utf8")`, the same bytes, without joining the native write and the copies it
 * splices in into one string first: each piece goes into the buffer once, an ASCII one as its characters (the bytes
 * UTF-8 gives them). A session view is mostly copied texts, and UTF-8 encoding its joined text cost more than the copies.
 * @throws PyJsonWriteError as {@link dumpsPy} does
 */
export function dumpsPyBytes(value: unknown, options: PyDumpsOptions): Buffer {
  return utf8Bytes(nativePieces(value, options) ?? [new PyJsonTextWriter(options).spell(value)]);
}

/** The UTF-8 bytes of `pieces` joined (no piece may end inside a surrogate pair the next one completes). */
function utf8Bytes(pieces: readonly string[]): Buffer {
  const lengths = new Array<number>(pieces.length);
  let total = 0;
  for (let k = 0; k < pieces.length; k++) {
    lengths[k] = Buffer.byteLength(pieces[k], "utf8");
    total += lengths[k];
  }
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  // as many bytes as characters: all ASCII, whose Latin-1 bytes are their UTF-8 bytes (and a plain copy)
  for (let k = 0; k < pieces.length; k++) at += out.write(pieces[k], at, lengths[k], lengths[k] === pieces[k].length ? "latin1" : "utf8");
  return out;
}

/**
 * The native write of `value` under compact settings, as pieces whose concatenation is {@link dumpsPy}'s text: the
 * JSON.stringify text between the copies it splices in, alternating with those copies' texts. Undefined when the
 * recursive writer must answer instead.
 */
function nativePieces(value: unknown, options: PyDumpsOptions): string[] | undefined {
  // Python's default separators cannot come out of JSON.stringify for less than the recursive writer costs.
  if (!options.compact) return undefined;
  const zeros: unknown[] = [];
  const splices: unknown[] = [];
  if (isNativeSpelledValue(value, 0, zeros, splices, options) !== NATIVE_SPELLED) return undefined;
  let pieces: string[] | undefined;
  if (zeros.length === 0 && splices.length === 0) {
    const text = nativeStringify(value);
    pieces = text === undefined ? undefined : [text];
  } else {
    pieces = stringifyMarking(value, zeros, splices);
  }
  // Non-ASCII characters only occur inside strings and keys, so escaping every piece escapes exactly those.
  if (pieces !== undefined && options.ensureAscii) for (let k = 0; k < pieces.length; k++) pieces[k] = pieces[k].replace(NON_ASCII, asciiEscape);
  return pieces;
}

/**
 * A string JSON.stringify writes as its characters between two quotes: printable ASCII without `"` and `\`, so
 * no escape and no character `ensure_ascii` would replace.
 */
// eslint-disable-next-line no-control-regex -- the control characters are exactly the ones JSON.stringify escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f-\uffff]/;

/** From this length on an array is tried as int32s (token ids): below it, `join` costs no more than the check. */
const INT32_ARRAY_MIN_LENGTH = 16;
/** Bytes one int32 and a separator can take (`-2147483648, `). */
const INT32_SPELLED_MAX = 13;
/** The reused buffer grows to this size at most (80,000 ids); a longer array gets a buffer of its own. */
const INT32_SCRATCH_MAX_BYTES = 1 << 20;
let int32Scratch = Buffer.allocUnsafeSlow(4096);
/** Counts the writes into the scratch buffer, so a write that another one (an index getter's) interrupted can tell. */
let int32ScratchWrites = 0;

/**
 * `[a, b, ...]` with `separator` when every item is an int32 other than -0 (Python's repr of an int is its decimal
 * digits, as `String` gives them), else undefined. The digits go into one reused byte buffer and come out as one
 * string, where `join` makes a string per number: a prompt's 250-600 token ids cost half as much.
 */
function spellInt32Array(array: readonly unknown[], separator: string): string | undefined {
  const need = 2 + array.length * INT32_SPELLED_MAX;
  if (need > INT32_SCRATCH_MAX_BYTES) return writeInt32Array(array, separator, Buffer.allocUnsafe(need));
  if (int32Scratch.length < need) int32Scratch = Buffer.allocUnsafeSlow(Math.min(Math.max(need, int32Scratch.length * 2), INT32_SCRATCH_MAX_BYTES));
  const write = ++int32ScratchWrites;
  const text = writeInt32Array(array, separator, int32Scratch);
  // another write went into the buffer meanwhile (from an index getter): this one's bytes may be gone, so again
  return write === int32ScratchWrites ? text : writeInt32Array(array, separator, Buffer.allocUnsafe(need));
}

function writeInt32Array(array: readonly unknown[], separator: string, out: Buffer): string | undefined {
  const spaced = separator.length === 2;
  let at = 0;
  out[at++] = 0x5b;
  for (let i = 0; i < array.length; i++) {
    const item = array[i];
    if (typeof item !== "number" || (item | 0) !== item || (item === 0 && 1 / item < 0)) return undefined;
    if (i > 0) {
      out[at++] = 0x2c;
      if (spaced) out[at++] = 0x20;
    }
    let n = item;
    if (n < 0) {
      out[at++] = 0x2d;
      n = -n; // 2^31 for -2^31: still exact, and its digits are the same
    }
    const end = at + decimalDigits(n);
    at = end;
    for (let j = end - 1; ; j--) {
      const q = Math.floor(n / 10);
      out[j] = 0x30 + n - q * 10;
      if (q === 0) break;
      n = q;
    }
  }
  out[at++] = 0x5d;
  return out.toString("latin1", 0, at);
}

/** How many decimal digits `n` (0 <= n <= 2^31) has. */
function decimalDigits(n: number): number {
  if (n < 100000) return n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : 5;
  return n < 1000000 ? 6 : n < 10000000 ? 7 : n < 100000000 ? 8 : n < 1000000000 ? 9 : 10;
}

/**
 * {@link dumpsPyWriter}'s rules with cheaper mechanics, for what the native path does not take (every value under
 * Python's default separators): a string that needs no escape is quoted as it is (tested by one regex, instead of a
 * JSON.stringify call), keys are spelled without a cache, `ensure_ascii` escapes only the strings JSON.stringify
 * spelled (the others are printable ASCII) instead of a pass over the whole text, and token-id arrays are spelled
 * by {@link spellInt32Array}. Tests compare it with the reference.
 */
class PyJsonTextWriter {
  private readonly itemSep: string;
  private readonly keySep: string;

  constructor(private readonly options: PyDumpsOptions) {
    this.itemSep = options.compact ? "," : ", ";
    this.keySep = options.compact ? ":" : ": ";
  }

  spell(value: unknown): string {
    return this.write(value, 0);
  }

  /** JSON.stringify's spelling with `ensure_ascii`'s escapes: the reference's one pass over the text, piece by piece. */
  private string(text: string): string {
    if (!NEEDS_ESCAPE.test(text)) return `"${text}"`;
    const spelled = JSON.stringify(text);
    return this.options.ensureAscii ? spelled.replace(NON_ASCII, asciiEscape) : spelled;
  }

  private write(node: unknown, depth: number): string {
    switch (typeof node) {
      case "string":
        return this.string(node);
      case "number":
        return dumpsNumber(node, this.options);
      case "boolean":
        return node ? "true" : "false";
      case "bigint":
        return node.toString();
      case "object":
        break;
      default:
        throw new PyJsonWriteError(`Object of type ${typeof node} is not JSON serializable`);
    }
    if (node === null) return "null";
    if (depth > MAX_WRITE_DEPTH) throw new PyJsonWriteError("maximum recursion depth exceeded while encoding a JSON object");
    if (Array.isArray(node)) return this.array(node, depth);
    if (node instanceof SpelledPyJson) {
      if (!sameDumpsOptions(node.options, this.options)) return this.write(node.value, depth);
      return this.options.ensureAscii ? node.text.replace(NON_ASCII, asciiEscape) : node.text; // as the reference's pass does
    }
    if (node instanceof PyFloat) return node.value === 0 || Number.isFinite(node.value) ? pythonFloatRepr(node.value) : dumpsNumber(node.value, this.options);
    if (node instanceof PyBigInt) return node.value.toString();
    return this.object(node as Record<string | typeof PY_KEY_ORDER, unknown>, depth);
  }

  private array(node: readonly unknown[], depth: number): string {
    if (node.length === 0) return "[]";
    if (node.length >= INT32_ARRAY_MIN_LENGTH) {
      const ints = spellInt32Array(node, this.itemSep);
      if (ints !== undefined) return ints;
    }
    if (isNativeSpelledNumberArray(node)) return this.options.compact ? JSON.stringify(node) : `[${node.join(", ")}]`;
    let text = "[";
    for (let i = 0; i < node.length; i++) {
      if (i > 0) text += this.itemSep;
      const item: unknown = node[i];
      text += this.write(item === undefined ? null : item, depth + 1);
    }
    return `${text}]`;
  }

  private object(record: Record<string | typeof PY_KEY_ORDER, unknown>, depth: number): string {
    const keys = record[PY_KEY_ORDER] === undefined ? Object.keys(record) : pyObjectKeys(record);
    let text = "{";
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const item = record[key];
      if (item === undefined) continue;
      if (!first) text += this.itemSep;
      text += this.string(key) + this.keySep + this.write(item, depth + 1);
      first = false;
    }
    return `${text}}`;
  }
}

/** Deepest container nesting the writer accepts (Python raises RecursionError well before JS's stack runs out). */
const MAX_WRITE_DEPTH = 1000;

/**
 * Stands in for each `-0` (a log-prob of certainty, which JSON.stringify would write `0`) during a native write: a
 * double, so the container keeps its storage kind, whose text is then replaced by `-0.0`. The scan refuses values
 * that already hold it, and a text holding it anywhere else (inside a string) takes the writer.
 */
const NEGATIVE_ZERO_MARK = -1.2345678901234567e-301;
const NEGATIVE_ZERO_MARK_TEXT = String(NEGATIVE_ZERO_MARK);

/**
 * Stands in for each {@link SpelledPyJson} the native write copies (a reply, a request body): a string whose quoted
 * form is then replaced by the copied text. Each must occur once per copy, so a string that holds it elsewhere sends
 * the value to the writer.
 */
const SPLICE_MARK = "\u0000jest-session-parity:spelled\u0000";
const SPLICE_MARK_TEXT = JSON.stringify(SPLICE_MARK);

/** True when every slot (a container and a key, then `stride - 2` more items) is a plain writable data property of an unfrozen container. */
function writableSlots(slots: unknown[], stride: number): boolean {
  for (let i = 0; i < slots.length; i += stride) {
    const descriptor = Object.getOwnPropertyDescriptor(slots[i], slots[i + 1] as PropertyKey);
    if (descriptor === undefined || descriptor.writable !== true || Object.isFrozen(slots[i])) return false;
  }
  return true;
}

/**
 * `JSON.stringify(value)` with each `-0` at `zeros` (container, key pairs) written `-0.0` and each SpelledPyJson at
 * `splices` (container, key, copy triples, in the order the native writer meets them) written as its text: the
 * slots hold marks during the call and get their values back before it returns: the native text's pieces between
 * the copies, alternating with the copies' texts. Undefined when a slot is not a plain writable data property or a
 * mark's text turns up elsewhere; the writer then runs.
 */
function stringifyMarking(value: unknown, zeros: unknown[], splices: unknown[]): string[] | undefined {
  if (!writableSlots(zeros, 2) || !writableSlots(splices, 3)) return undefined;
  let text: string | undefined;
  try {
    for (let i = 0; i < zeros.length; i += 2) (zeros[i] as Record<PropertyKey, number>)[zeros[i + 1] as PropertyKey] = NEGATIVE_ZERO_MARK;
    for (let i = 0; i < splices.length; i += 3) (splices[i] as Record<PropertyKey, unknown>)[splices[i + 1] as PropertyKey] = SPLICE_MARK;
    text = nativeStringify(value);
  } finally {
    for (let i = 0; i < zeros.length; i += 2) (zeros[i] as Record<PropertyKey, number>)[zeros[i + 1] as PropertyKey] = -0;
    for (let i = 0; i < splices.length; i += 3) (splices[i] as Record<PropertyKey, unknown>)[splices[i + 1] as PropertyKey] = splices[i + 2];
  }
  if (text === undefined) return undefined;
  if (zeros.length > 0) {
    // the mark must occur exactly once per -0: then every one of them is a -0. Each replacement shortens the text by
    // the same count of characters, so the length tells how many there were, without a second pass.
    const replaced = text.replaceAll(NEGATIVE_ZERO_MARK_TEXT, "-0.0");
    const marks = (text.length - replaced.length) / (NEGATIVE_ZERO_MARK_TEXT.length - "-0.0".length);
    if (marks !== zeros.length / 2) return undefined;
    text = replaced;
  }
  if (splices.length === 0) return [text];
  // the quoted mark cannot overlap itself, and a string holding it adds an occurrence: as many pieces as copies plus
  // one means each piece boundary is a copy's place, in the order the scan met them (the native writer's order)
  const pieces = text.split(SPLICE_MARK_TEXT);
  if (pieces.length !== splices.length / 3 + 1) return undefined;
  const out = new Array<string>(2 * pieces.length - 1);
  out[0] = pieces[0];
  for (let k = 1; k < pieces.length; k++) {
    out[2 * k - 1] = (splices[3 * k - 1] as SpelledPyJson).text;
    out[2 * k] = pieces[k];
  }
  return out;
}

/** `JSON.stringify(value)` for a value the scan passed, or undefined should the native writer give up (its stack). */
function nativeStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined; // the recursive writer answers instead, with Python's error where there is one
  }
}

/** {@link isNativeSpelledValue}'s answers: refused, spelled by JSON.stringify, or a copy to splice in. */
const NATIVE_REFUSED = 0;
const NATIVE_SPELLED = 1;
const NATIVE_SPLICED = 2;

/**
 * NATIVE_SPELLED when `JSON.stringify` writes `node` exactly as {@link dumpsPyWriter} does with compact separators,
 * once each `-0` it holds is spelled `-0.0` (their container and key are pushed onto `zeros`) and each
 * {@link SpelledPyJson} written under `options` is replaced by its text (container, key and copy pushed onto
 * `splices`): only strings, booleans, null, numbers {@link isNativeSpelledNumber}, arrays and plain objects
 * (prototype `Object.prototype` or null, no remembered key order, no `toJSON`), nested at most
 * {@link MAX_WRITE_DEPTH} deep. NATIVE_SPLICED for such a copy itself (its container splices it). Builds no text and
 * stops at the first value it cannot vouch for (a marker, a bigint, a function, a class instance), which the writer
 * then spells or refuses.
 */
function isNativeSpelledValue(node: unknown, depth: number, zeros: unknown[], splices: unknown[], options: PyDumpsOptions): number {
  switch (typeof node) {
    case "string":
    case "boolean":
      return NATIVE_SPELLED;
    case "number":
      return isNativeSpelledNumber(node) ? NATIVE_SPELLED : NATIVE_REFUSED;
    case "object":
      break;
    default:
      return NATIVE_REFUSED;
  }
  if (node === null) return NATIVE_SPELLED;
  if (depth > MAX_WRITE_DEPTH || (node as { toJSON?: unknown }).toJSON !== undefined) return NATIVE_REFUSED;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const item: unknown = node[i];
      if (typeof item === "number") {
        if (isNativeSpelledNumber(item)) continue;
        if (item !== 0) return NATIVE_REFUSED;
        zeros.push(node, i);
      } else if (item !== undefined) {
        // a hole or an undefined item is null in both writers
        const answer = isNativeSpelledValue(item, depth + 1, zeros, splices, options);
        if (answer === NATIVE_REFUSED) return NATIVE_REFUSED;
        if (answer === NATIVE_SPLICED) splices.push(node, i, item);
      }
    }
    return NATIVE_SPELLED;
  }
  const prototype: unknown = Object.getPrototypeOf(node);
  if (prototype !== Object.prototype && prototype !== null) {
    return node instanceof SpelledPyJson && sameDumpsOptions(node.options, options) ? NATIVE_SPLICED : NATIVE_REFUSED;
  }
  const record = node as Record<string | typeof PY_KEY_ORDER, unknown>;
  if (record[PY_KEY_ORDER] !== undefined) return NATIVE_REFUSED;
  for (const key in record) {
    const item = record[key];
    if (typeof item === "number") {
      if (isNativeSpelledNumber(item)) continue;
      if (item !== 0) return NATIVE_REFUSED;
      zeros.push(node, key);
    } else if (item !== undefined) {
      // both writers skip an undefined value; a function is skipped by JSON.stringify but refused by Python
      const answer = isNativeSpelledValue(item, depth + 1, zeros, splices, options);
      if (answer === NATIVE_REFUSED) return NATIVE_REFUSED;
      if (answer === NATIVE_SPLICED) splices.push(node, key, item);
    }
  }
  return NATIVE_SPELLED;
}

/** A number `JSON.stringify` spells as Python's repr of our model's value: a safe int (not -0), a float in [1e-4, 1e16). */
export function isNativeSpelledNumber(x: number): boolean {
  if ((x | 0) === x) return x !== 0 || 1 / x > 0; // an int32 (token ids, counts): only -0 is not
  if (Number.isInteger(x)) return x === 0 ? 1 / x > 0 : Number.isSafeInteger(x);
  const magnitude = x < 0 ? -x : x;
  return magnitude >= 1e-4 && magnitude < 1e16;
}

/** The recursive writer behind {@link dumpsPy}: every value it accepts, in Python's spelling (tests compare the two). */
export function dumpsPyWriter(value: unknown, options: PyDumpsOptions): string {
  const itemSep = options.compact ? "," : ", ";
  const keySep = options.compact ? ":" : ": ";
  // Keys repeat across records (`token`, `logprob`, ...): each is spelled once per call.
  const spelledKeys = new Map<string, string>();
  const spellKey = (key: string): string => {
    let spelled = spelledKeys.get(key);
    if (spelled === undefined) {
      spelled = JSON.stringify(key) + keySep;
      spelledKeys.set(key, spelled);
    }
    return spelled;
  };
  const write = (node: unknown, depth: number): string => {
    switch (typeof node) {
      case "string":
        return JSON.stringify(node);
      case "number":
        return dumpsNumber(node, options);
      case "boolean":
        return node ? "true" : "false";
      case "bigint":
        return node.toString();
      case "object":
        break;
      default:
        throw new PyJsonWriteError(`Object of type ${typeof node} is not JSON serializable`);
    }
    if (node === null) return "null";
    if (depth > MAX_WRITE_DEPTH) throw new PyJsonWriteError("maximum recursion depth exceeded while encoding a JSON object");
    if (Array.isArray(node)) {
      if (node.length === 0) return "[]";
      if (isNativeSpelledNumberArray(node)) return options.compact ? JSON.stringify(node) : `[${node.join(", ")}]`;
      let text = "[";
      for (let i = 0; i < node.length; i++) {
        if (i > 0) text += itemSep;
        const item: unknown = node[i];
        text += write(item === undefined ? null : item, depth + 1);
      }
      return `${text}]`;
    }
    if (node instanceof SpelledPyJson) return sameDumpsOptions(node.options, options) ? node.text : write(node.value, depth);
    if (node instanceof PyFloat) return node.value === 0 || Number.isFinite(node.value) ? pythonFloatRepr(node.value) : dumpsNumber(node.value, options);
    if (node instanceof PyBigInt) return node.value.toString();
    const record = node as Record<string | typeof PY_KEY_ORDER, unknown>;
    const keys = record[PY_KEY_ORDER] === undefined ? Object.keys(node) : pyObjectKeys(node);
    let text = "{";
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const item = record[key];
      if (item === undefined) continue;
      if (!first) text += itemSep;
      text += spellKey(key) + write(item, depth + 1);
      first = false;
    }
    return `${text}}`;
  };
  const text = write(value, 0);
  // Strings and keys are spelled by JSON.stringify, and only they can hold non-ASCII characters: one pass escapes all.
  return options.ensureAscii ? text.replace(NON_ASCII, asciiEscape) : text;
}
