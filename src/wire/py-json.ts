// JSON in and out with Python's meaning: parse as json.loads does (int vs float, exact big ints, key order) and
// write as json.dumps does (repr floats, separators, ensure_ascii), so the servers' bytes match the Python servers'.
import { PY_KEY_ORDER, PyBigInt, PyFloat, isArrayIndexKey, pyObjectKeys, rememberKeyOrder, type PyJson } from "./py-json-values";

export * from "./py-json-values";

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
 * Number or key spellings whose JS parse would lose what Python keeps: an exponent, a fraction of zeros (`1.0`), 16 or
 * more digits in a row (big ints, long fractions that may round to an integer), `-0` as an int, integer-like keys.
 * Matches inside strings only cost the slower exact parse.
 */
const LOSSY_FOR_NATIVE_PARSE = /\d[eE]|\d\.0*(?![0-9])|[0-9.]{16,}|-0(?![.0-9eE])|"(?:0|[1-9][0-9]{0,9})"\s*:/;

/** How {@link parsePyJson} hands numbers back. */
export interface PyJsonParseOptions {
  /**
   * The `loose_tool_call` reading of miles' message matcher: duplicate keys and NaN/Infinity are errors, and every
   * number comes back as its {@link ExactJsonNumber} text (compared as a decimal, never rounded to a double).
   */
  exact?: boolean;
  /**
   * `true` (default): integral floats become {@link PyFloat}, big ints {@link PyBigInt}, reordered keys are remembered.
   * `false`: plain JS numbers and JS key order, only Python's extra literals (NaN, Infinity) are accepted.
   */
  lossless?: boolean;
}

/**
 * Parses JSON text as Python's `json.loads` does: NaN/Infinity/-Infinity accepted, duplicate keys keep the first
 * position and the last value, ints and floats kept apart. Texts without lossy spellings take the native parser.
 * @throws PyJsonError with Python's message for text Python rejects
 */
export function parsePyJson(text: string, options: PyJsonParseOptions = {}): PyJson {
  const lossless = options.lossless !== false;
  if (options.exact === true) {
    const reader = new PyJsonReader(text, true, true);
    reader.skipWhitespace();
    const value = reader.readValue();
    reader.skipWhitespace();
    if (reader.position !== text.length) throw new PyJsonError("Extra data", reader.position, text);
    return value;
  }
  if (!lossless || !LOSSY_FOR_NATIVE_PARSE.test(text)) {
    try {
      return JSON.parse(text) as PyJson;
    } catch {
      // fall through: Python's literals, or an error to report with Python's words
    }
  }
  const reader = new PyJsonReader(text, lossless);
  reader.skipWhitespace();
  const value = reader.readValue();
  reader.skipWhitespace();
  if (reader.position !== text.length) throw new PyJsonError("Extra data", reader.position, text);
  return value;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

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
    private readonly lossless: boolean,
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
      if (!this.lossless) return asNumber;
      const big = BigInt(token);
      return big > MAX_SAFE || big < -MAX_SAFE ? new PyBigInt(big) : Number(big);
    }
    const value = Number(token);
    if (this.lossless && Number.isInteger(value) && !Object.is(value, -0)) return new PyFloat(value);
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
      if (this.text[this.position] !== '"') return this.fail("Expecting property name enclosed in double quotes", this.position);
      const key = this.readString();
      this.skipWhitespace();
      if (this.text[this.position] !== ":") return this.fail("Expecting ':' delimiter", this.position);
      this.position += 1;
      this.skipWhitespace();
      const value = this.readValue();
      if (this.exact && Object.prototype.hasOwnProperty.call(object, key)) return this.fail(`duplicate JSON object key: ${JSON.stringify(key)}`, this.position);
      if (!Object.prototype.hasOwnProperty.call(object, key)) {
        keys.push(key);
        if (isArrayIndexKey(key)) reorder = true;
      }
      Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
      this.skipWhitespace();
      const c = this.text[this.position];
      if (c === "}") {
        this.position += 1;
        if (reorder && this.lossless) rememberKeyOrder(object, keys);
        return object;
      }
      if (c !== ",") return this.fail("Expecting ',' delimiter", this.position);
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

/** Thrown by {@link dumpsPy} where Python's `json.dumps` raises (NaN with allow_nan=False, a non-JSON value). */
export class PyJsonWriteError extends Error {
  override readonly name = "PyJsonWriteError";
}

const NON_ASCII = /[\u007f-\uffff]/g;

function asciiEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** A JSON string literal as `json.dumps` spells it. */
export function dumpsPyString(value: string, ensureAscii: boolean): string {
  const text = JSON.stringify(value);
  return ensureAscii ? text.replace(NON_ASCII, asciiEscape) : text;
}

/** Python's `float.__repr__` (what json.dumps writes for a float): shortest round-trip digits, `1.0`, `1e-07`. */
export function pythonFloatRepr(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "Infinity";
  if (value === Number.NEGATIVE_INFINITY) return "-Infinity";
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const sign = value < 0 ? "-" : "";
  const [mantissa, exponentText] = Math.abs(value).toExponential().split("e");
  const exponent = Number(exponentText);
  const digits = mantissa!.replace(".", "");
  if (exponent < -4 || exponent >= 16) {
    const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${head}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  if (digits.length <= exponent + 1) return `${sign}${digits}${"0".repeat(exponent + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
}

/** A JS number as Python sees it in our model: an int when integral (and not -0), else a float. */
function dumpsNumber(value: number, options: PyDumpsOptions): string {
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
    if (typeof x !== "number") return false;
    if (Number.isInteger(x)) {
      if (x === 0 ? 1 / x < 0 : !Number.isSafeInteger(x)) return false;
    } else if (!(Math.abs(x) >= 1e-4) || !Number.isFinite(x)) {
      return false;
    }
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
  const itemSep = options.compact ? "," : ", ";
  const keySep = options.compact ? ":" : ": ";
  const write = (node: unknown, depth: number): string => {
    switch (typeof node) {
      case "string":
        return dumpsPyString(node, options.ensureAscii);
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
    if (node instanceof PyFloat) return node.value === 0 || Number.isFinite(node.value) ? pythonFloatRepr(node.value) : dumpsNumber(node.value, options);
    if (node instanceof PyBigInt) return node.value.toString();
    if (depth > 1000) throw new PyJsonWriteError("maximum recursion depth exceeded while encoding a JSON object");
    if (Array.isArray(node)) {
      if (node.length === 0) return "[]";
      if (isNativeSpelledNumberArray(node)) return options.compact ? JSON.stringify(node) : `[${node.join(", ")}]`;
      let text = "[";
      for (let i = 0; i < node.length; i++) text += (i === 0 ? "" : itemSep) + write(node[i] === undefined ? null : node[i], depth + 1);
      return `${text}]`;
    }
    const record = node as Record<string | typeof PY_KEY_ORDER, unknown>;
    const keys = record[PY_KEY_ORDER] === undefined ? Object.keys(node) : pyObjectKeys(node);
    let text = "{";
    let first = true;
    for (const key of keys) {
      const item = record[key];
      if (item === undefined) continue;
      text += `${first ? "" : itemSep}${dumpsPyString(key, options.ensureAscii)}${keySep}${write(item, depth + 1)}`;
      first = false;
    }
    return `${text}}`;
  };
  return write(value, 0);
}

function pyStringRepr(value: string): string {
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (char === "\\") out += "\\\\";
    else if (char === quote) out += `\\${quote}`;
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (char === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += char;
  }
  return out + quote;
}

/** Python's `repr()` of a JSON value in its JS form (`False`, `None`, `1.0`, `'text'`, `{'a': [1, 2]}`), for error texts. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string") return pyStringRepr(value);
  if (typeof value === "number") {
    if (Number.isInteger(value) && !Object.is(value, -0)) return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
    if (Number.isNaN(value)) return "nan";
    if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
    return pythonFloatRepr(value);
  }
  if (value instanceof PyFloat) return Number.isFinite(value.value) ? pythonFloatRepr(value.value) : pyRepr(value.value);
  if (value instanceof PyBigInt) return value.value.toString();
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (typeof value === "object") {
    return `{${pyObjectKeys(value).map((key) => `${pyStringRepr(key)}: ${pyRepr((value as Record<string, unknown>)[key])}`).join(", ")}}`;
  }
  return String(value);
}
