// What a Python json.dumps spelling is: the options (ensure_ascii, separators, allow_nan) and the servers' named
// settings, a text already spelled under them, and the number and escape rules every writer shares.
import { pythonFloatRepr } from "./py-repr";

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

export function sameDumpsOptions(a: PyDumpsOptions, b: PyDumpsOptions): boolean {
  return a === b || (a.ensureAscii === b.ensureAscii && a.compact === b.compact && a.allowNan === b.allowNan);
}

/** Thrown by {@link dumpsPy} where Python's `json.dumps` raises (NaN with allow_nan=False, a non-JSON value). */
export class PyJsonWriteError extends Error {
  override readonly name = "PyJsonWriteError";
}

export const NON_ASCII = /[\u007f-\uffff]/g;

export function asciiEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** A JS number as Python sees it in our model: an int when integral (and not -0), else a float. */
export function dumpsNumber(value: number, options: PyDumpsOptions): string {
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
 * A string JSON.stringify writes as its characters between two quotes: printable ASCII without `"` and `\`, so
 * no escape and no character `ensure_ascii` would replace.
 */
// eslint-disable-next-line no-control-regex -- the control characters are exactly the ones JSON.stringify escapes
export const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f-\uffff]/;

/** A number `JSON.stringify` spells as Python's repr of our model's value: a safe int (not -0), a float in [1e-4, 1e16). */
export function isNativeSpelledNumber(x: number): boolean {
  if ((x | 0) === x) return x !== 0 || 1 / x > 0; // an int32 (token ids, counts): only -0 is not
  if (Number.isInteger(x)) return x === 0 ? 1 / x > 0 : Number.isSafeInteger(x);
  const magnitude = x < 0 ? -x : x;
  return magnitude >= 1e-4 && magnitude < 1e16;
}

/** Deepest container nesting the writer accepts (Python raises RecursionError well before JS's stack runs out). */
export const MAX_WRITE_DEPTH = 1000;
