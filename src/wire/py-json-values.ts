// The JS form of a value Python's json.loads produced, for the few cases a plain JS value cannot carry.
// Integral floats, integers past 2^53 and objects whose key order JS would rearrange get small markers.

/**
 * A Python float whose value is integral (`1.0`, `0.0`, `1e16`), which a plain JS `1` cannot mean (a plain integral
 * number is a Python int). The readers make non-integral floats, `-0.0`, NaN and the infinities plain JS numbers;
 * {@link pyFloat} of such a value compares equal to the plain number. Build one with {@link pyFloat}.
 */
export class PyFloat {
  constructor(
    /** The float's value. */
    readonly value: number,
  ) {}

  /** `JSON.stringify` and other JS-only consumers see the number. */
  toJSON(): number {
    return this.value;
  }

  /** Arithmetic and comparisons in JS see the number (`pyFloat(1) + 1 === 2`). */
  valueOf(): number {
    return this.value;
  }
}

/** A Python int kept exact as a JS bigint: what the reader makes of an integer outside JS's safe range (|n| > 2^53 - 1), and what {@link pyInt} builds. */
export class PyBigInt {
  /** The integer as a JS bigint. */
  readonly value: bigint;

  constructor(digits: string | bigint) {
    this.value = typeof digits === "bigint" ? digits : BigInt(digits);
  }

  /** `JSON.stringify` and other JS-only consumers see the nearest double. */
  toJSON(): number {
    return Number(this.value);
  }

  /** The exact decimal digits. */
  toString(): string {
    return this.value.toString();
  }
}

/**
 * Where an object keeps its keys' original order when JS would put integer-like keys (`"1"`, `"20"`) first.
 * An enumerable symbol: `Object.keys` and `JSON.stringify` ignore it, object spread copies it along.
 */
export const PY_KEY_ORDER: unique symbol = Symbol.for("jest-session-parity.py-key-order");

/** A value as Python's `json.loads` sees it, in its JS form. */
export type PyJson = null | boolean | string | number | PyFloat | PyBigInt | PyJson[] | { [key: string]: PyJson };

/** True for a string JS treats as an array index, which object key order moves to the front. */
export function isArrayIndexKey(key: string): boolean {
  if (key.length === 0 || key.length > 10) return false;
  if (key === "0") return true;
  const first = key.charCodeAt(0);
  if (first < 49 || first > 57) return false;
  for (let i = 1; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return Number(key) < 4294967295;
}

/** The keys of `object` in Python's order: the remembered original order first, then keys added since. */
export function pyObjectKeys(object: object): string[] {
  const keys = Object.keys(object);
  const order = (object as { [PY_KEY_ORDER]?: readonly string[] })[PY_KEY_ORDER];
  if (order === undefined) return keys;
  const present = new Set(keys);
  const out: string[] = [];
  const seen = new Set<string>();
  for (const key of order) {
    if (present.has(key) && !seen.has(key)) {
      out.push(key);
      seen.add(key);
    }
  }
  for (const key of keys) if (!seen.has(key)) out.push(key);
  return out;
}

/** Records `keys` as the Python order of `object` when JS's own order differs from it. */
export function rememberKeyOrder(object: Record<string, unknown>, keys: readonly string[]): void {
  const jsOrder = Object.keys(object);
  if (jsOrder.length === keys.length && jsOrder.every((key, i) => key === keys[i])) return;
  Object.defineProperty(object, PY_KEY_ORDER, { value: [...keys], enumerable: true, writable: true, configurable: true });
}

const MAX_SAFE_BIGINT = BigInt(Number.MAX_SAFE_INTEGER);

/** A Python int in the JS form the reader gives it: a plain number when safe, a {@link PyBigInt} past 2^53. */
export function pyIntValue(value: bigint): number | PyBigInt {
  return value > MAX_SAFE_BIGINT || value < -MAX_SAFE_BIGINT ? new PyBigInt(value) : Number(value);
}

/** A Python float in the JS form the reader gives it: a {@link PyFloat} when integral (not -0), else the plain number. */
export function pyFloatValue(value: number): number | PyFloat {
  return Number.isInteger(value) && !Object.is(value, -0) ? new PyFloat(value) : value;
}

/**
 * A Python dict of string keys in JS form: every key an own data property (`"__proto__"` included), the insertion
 * order remembered under {@link PY_KEY_ORDER} when JS would move integer-like keys first.
 */
export function pyObjectFromEntries(entries: Iterable<readonly [string, PyJson]>): { [key: string]: PyJson } {
  const object: { [key: string]: PyJson } = {};
  const keys: string[] = [];
  for (const [key, value] of entries) {
    if (!Object.prototype.hasOwnProperty.call(object, key)) keys.push(key);
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  }
  rememberKeyOrder(object, keys);
  return object;
}

/** The numeric value of a Python int or float in JS form, or undefined for anything else (bool included). */
export function pyNumberValue(value: unknown): number | undefined {
  if (typeof value === "number") return value;
  if (value instanceof PyFloat) return value.value;
  if (value instanceof PyBigInt) return Number(value.value);
  return undefined;
}

/** True when `value` is a Python float in JS form (a non-integral or non-finite number, `-0`, or a PyFloat). */
export function isPyFloat(value: unknown): boolean {
  if (value instanceof PyFloat) return true;
  return typeof value === "number" && (!Number.isInteger(value) || Object.is(value, -0));
}

/**
 * A copy in which integral floats and big integers are plain JS numbers and key order is JS's own: what code that
 * only wants JS values (a template engine, a JS client) should see.
 */
export function toPlainJs(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (value instanceof PyFloat) return value.value;
  if (value instanceof PyBigInt) return Number(value.value);
  if (Array.isArray(value)) return value.map(toPlainJs);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(out, key, { value: toPlainJs((value as Record<string, unknown>)[key]), writable: true, enumerable: true, configurable: true });
  }
  return out;
}

/**
 * A Python float in a golden value or a hand-built {@link Sample}-like value: `pyFloat(1)` is Python's `1.0`, which a
 * plain JS `1` cannot say (a plain integral number means a Python int). Non-integral values, `-0`, NaN and the
 * infinities are floats already as plain numbers; `pyFloat` of them compares equal to the plain number.
 * @throws TypeError when `value` is not a number
 */
export function pyFloat(value: number): PyFloat {
  if (typeof value !== "number") throw new TypeError(`pyFloat: expected a number, got ${typeof value}`);
  return new PyFloat(value);
}

/**
 * A Python int of any size, kept exact: `pyInt("9007199254740993")` or `pyInt(2n ** 64n)`. A safe JS integer is
 * accepted too (and compares equal to the plain number); an unsafe one is refused, since it has already been rounded.
 * @throws TypeError for a string that is not an integer's digits, RangeError for a non-integral or unsafe number
 */
export function pyInt(value: bigint | string | number): PyBigInt {
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) {
      throw new RangeError(`pyInt: ${String(value)} is not a safe integer (pass an integer past 2^53 as its digits or as a bigint)`);
    }
    return new PyBigInt(BigInt(value));
  }
  if (typeof value === "string" && !/^-?(?:0|[1-9][0-9]*)$/.test(value)) throw new TypeError(`pyInt: ${JSON.stringify(value)} is not an integer's digits`);
  if (typeof value !== "string" && typeof value !== "bigint") throw new TypeError(`pyInt: expected a bigint, digits or a safe integer, got ${typeof value}`);
  return new PyBigInt(value);
}

/** Python's number kind of a JS value: `int` for a PyBigInt or a plain integral number (not -0), `float` for a PyFloat or any other plain number, else undefined. */
export function pyNumberKind(value: unknown): "int" | "float" | undefined {
  if (typeof value === "number") return Number.isInteger(value) && !Object.is(value, -0) ? "int" : "float";
  if (value instanceof PyFloat) return "float";
  if (value instanceof PyBigInt) return "int";
  return undefined;
}
