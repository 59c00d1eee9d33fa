// Converts the per-token number lists of a Sample to and from their pinned wire dtypes (I64, U8, F64).
// Every conversion is exact or refused: a value the dtype would change is an error naming where it sits.
import { SamplesCodecError } from "./errors";

const TWO_POW_32 = 0x1_0000_0000;
/** Largest/smallest high word of an int64 whose value is still a safe JS integer. */
const MAX_SAFE_HIGH_WORD = 0x1f_ffff;
const MIN_SAFE_HIGH_WORD = -0x20_0000;

/**
 * Packs safe integers into int64 (written as 32-bit halves, no BigInt per element; -0 counts as 0).
 * `label` names field and sample in the error.
 */
export function int64FromNumbers(values: readonly number[], label: string): BigInt64Array {
  const out = new BigInt64Array(values.length);
  const words = new Int32Array(out.buffer);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value !== "number" || !Number.isSafeInteger(value)) {
      throw new SamplesCodecError(`${label}: value ${describeValue(value)} at index ${i} does not fit wire dtype I64 exactly (needs a safe integer)`);
    }
    if (value >= -0x8000_0000 && value <= 0x7fff_ffff) {
      words[2 * i] = value;
      words[2 * i + 1] = value < 0 ? -1 : 0;
    } else {
      const high = Math.floor(value / TWO_POW_32);
      words[2 * i] = (value - high * TWO_POW_32) | 0;
      words[2 * i + 1] = high;
    }
  }
  return out;
}

/**
 * The refusals of {@link int64FromNumbers}, {@link uint8FromNumbers} and {@link float64FromNumbers} (same texts, same
 * first offender) without the conversion, for a writer that places the values itself later: a list that passes holds
 * no hole and converts exactly through {@link writeInt64Words} or a typed array's `set`.
 */
export function checkWireNumbers(dtype: "I64" | "U8" | "F64", values: readonly number[], label: string): void {
  const fail = (i: number, problem: string): never => {
    throw new SamplesCodecError(`${label}: value ${describeValue(values[i])} at index ${i} ${problem}`);
  };
  if (dtype === "I64") {
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (typeof value !== "number" || !Number.isSafeInteger(value)) fail(i, "does not fit wire dtype I64 exactly (needs a safe integer)");
    }
  } else if (dtype === "U8") {
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 255) fail(i, "does not fit wire dtype U8");
    }
  } else {
    for (let i = 0; i < values.length; i++) if (typeof values[i] !== "number") fail(i, "does not fit wire dtype F64 (not a number)");
  }
}

/**
 * Writes safe integers (checked by {@link checkWireNumbers}) as little-endian int64 into `words`, two int32 words per
 * value from word `at`: the bytes {@link int64FromNumbers} makes.
 */
export function writeInt64Words(values: readonly number[], words: Int32Array, at: number): void {
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value >= -0x8000_0000 && value <= 0x7fff_ffff) {
      words[at + 2 * i] = value;
      words[at + 2 * i + 1] = value < 0 ? -1 : 0;
    } else {
      const high = Math.floor(value / TWO_POW_32);
      words[at + 2 * i] = (value - high * TWO_POW_32) | 0;
      words[at + 2 * i + 1] = high;
    }
  }
}

/** Unpacks int64 into numbers; a value outside the safe-integer range is refused rather than rounded. */
export function numbersFromInt64(data: BigInt64Array, label: string): number[] {
  const words = new Int32Array(data.buffer, data.byteOffset, data.length * 2);
  const out = new Array<number>(data.length);
  for (let i = 0; i < data.length; i++) {
    const low = words[2 * i];
    const high = words[2 * i + 1];
    if ((high === 0 && low >= 0) || (high === -1 && low < 0)) {
      out[i] = low;
      continue;
    }
    const value = high * TWO_POW_32 + (low >>> 0);
    if (high > MAX_SAFE_HIGH_WORD || high < MIN_SAFE_HIGH_WORD || !Number.isSafeInteger(value)) {
      throw new SamplesCodecError(`${label}: int64 value ${data[i]} at index ${i} is outside the safe JavaScript integer range`);
    }
    out[i] = value;
  }
  return out;
}

/** Packs integers 0..255 into uint8 (-0 counts as the integer 0); -1, 256, 0.5 and non-numbers are refused. */
export function uint8FromNumbers(values: readonly number[], label: string): Uint8Array {
  const out = new Uint8Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 255) {
      throw new SamplesCodecError(`${label}: value ${describeValue(value)} at index ${i} does not fit wire dtype U8`);
    }
    out[i] = value;
  }
  return out;
}

/** Copies numbers into float64 (always exact); non-numbers are refused. */
export function float64FromNumbers(values: readonly number[], label: string): Float64Array {
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value !== "number") {
      throw new SamplesCodecError(`${label}: value ${describeValue(value)} at index ${i} does not fit wire dtype F64 (not a number)`);
    }
    out[i] = value;
  }
  return out;
}

/** A plain number array with the typed array's values (uint8 and float64 lists). */
export function numbersFromTyped(data: Uint8Array | Float64Array): number[] {
  const out = new Array<number>(data.length);
  for (let i = 0; i < data.length; i++) out[i] = data[i];
  return out;
}

function describeValue(value: unknown): string {
  if (typeof value === "number" || typeof value === "boolean" || value === null || value === undefined) return Object.is(value, -0) ? "-0" : String(value);
  return typeof value === "string" ? JSON.stringify(value.slice(0, 40)) : `(${typeof value})`;
}
