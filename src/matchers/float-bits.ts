// Reads the raw IEEE-754 bits of numbers without allocating, so comparisons can tell -0 from +0 and NaN payloads apart.
// Hex renderings are only built for the few differences that end up in a report.

const SCRATCH_F64 = new Float64Array(2);
const SCRATCH_U32 = new Uint32Array(SCRATCH_F64.buffer);
const SCRATCH_F32 = new Float32Array(SCRATCH_F64.buffer, 0, 1);

/** True when this machine stores typed-array elements little-endian (every platform Node ships on). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LO = LITTLE_ENDIAN ? 0 : 1;
const HI = LITTLE_ENDIAN ? 1 : 0;

/**
 * True when two numbers have the same float64 bit pattern (so `0` vs `-0` and NaNs with different
 * payloads are unequal). Allocation-free.
 */
export function sameFloat64Bits(a: number, b: number): boolean {
  if (a === b) return a !== 0 || 1 / a === 1 / b;
  if (a === a || b === b) return false; // at least one side is not NaN, and they differ
  SCRATCH_F64[0] = a;
  SCRATCH_F64[1] = b;
  return SCRATCH_U32[0] === SCRATCH_U32[2] && SCRATCH_U32[1] === SCRATCH_U32[3];
}

/** The 16 hex digits of a number's float64 bit pattern, most significant first (`3fe0000000000000` for 0.5). */
export function float64Hex(value: number): string {
  SCRATCH_F64[0] = value;
  return hex32(SCRATCH_U32[HI]) + hex32(SCRATCH_U32[LO]);
}

/** Hex of two 32-bit words of a float64 read straight from memory (low word first, as stored little-endian). */
export function float64HexFromWords(low: number, high: number): string {
  return hex32(high) + hex32(low);
}

/** Zero-padded 8-digit hex of an unsigned 32-bit integer. */
export function hex32(word: number): string {
  return (word >>> 0).toString(16).padStart(8, "0");
}

/** Zero-padded 4-digit hex of an unsigned 16-bit integer. */
export function hex16(half: number): string {
  return (half & 0xffff).toString(16).padStart(4, "0");
}

/** Value of an IEEE-754 binary16 bit pattern. */
export function decodeFloat16(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/** Value of a bfloat16 bit pattern (the upper half of a float32). */
export function decodeBfloat16(bits: number): number {
  SCRATCH_U32[0] = (bits & 0xffff) << 16;
  return SCRATCH_F32[0];
}
