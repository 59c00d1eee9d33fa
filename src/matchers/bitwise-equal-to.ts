// The asymmetric matcher behind `expect.bitwiseEqualTo(value)`, usable inside toEqual, toHaveBeenCalledWith, ...
// Implements Jest's asymmetric-matcher protocol by hand, so nothing here imports Jest.
import { assertBitwiseOptions, compareBitwiseSummary, isBitwiseEqual } from "./bitwise";
import type { BitwiseOptions } from "./bitwise-types";
import { describeValue, formatDifference } from "./format-differences";

const ASYMMETRIC_MATCHER = Symbol.for("jest.asymmetricMatcher");

/**
 * Matches any value bitwise equal to `sample` (or, when `inverse`, any value that is not).
 * Create it with `expect.bitwiseEqualTo(value, options?)` / `expect.not.bitwiseEqualTo(...)` once the
 * matchers are registered, or directly with `new BitwiseEqualTo(value)`.
 */
export class BitwiseEqualTo {
  /** Marks the object as an asymmetric matcher for Jest's and Vitest's equality. */
  readonly $$typeof: symbol = ASYMMETRIC_MATCHER;

  constructor(
    /** The value received values are compared with (the right side). */
    readonly sample: unknown,
    /** Comparator options (`metadataProjection`, `rootPath`). */
    readonly options: BitwiseOptions = {},
    /** True for `expect.not.bitwiseEqualTo`. */
    readonly inverse = false,
  ) {}

  /** The differing leaves of the last value that failed to match (shown in Jest's diff), or null. */
  private lastMismatch: string | null = null;

  /** True when `other` is (for the inverse: is not) bitwise equal to the sample. */
  asymmetricMatch(other: unknown): boolean {
    const equal = isBitwiseEqual(other, this.sample, this.options);
    if (!equal && !this.inverse) {
      const summary = compareBitwiseSummary(other, this.sample, { ...this.options, maxDifferences: 3 });
      this.lastMismatch = `${summary.differences.map(formatDifference).join("; ")}${summary.total > 3 ? `; ${summary.total} differences in total` : ""}`;
    } else this.lastMismatch = null;
    return equal !== this.inverse;
  }

  /** Name shown by Jest when printing the matcher. */
  toString(): string {
    return this.inverse ? "NotBitwiseEqualTo" : "BitwiseEqualTo";
  }

  /** Description shown in Jest's diff output. */
  toAsymmetricMatcher(): string {
    const base = `${this.toString()}<${describeValue(this.sample)}>`;
    return this.lastMismatch === null ? base : `${base} (received vs expected: ${this.lastMismatch})`;
  }

  /** Type name of the sample, for Jest's error messages. */
  getExpectedType(): string {
    return describeValue(this.sample);
  }
}

/**
 * Builds a {@link BitwiseEqualTo} (the function installed as `expect.bitwiseEqualTo`).
 * @throws BitwiseUsageError when `options` is not a valid options object (checked here, not at match time)
 */
export function bitwiseEqualTo(value: unknown, options?: BitwiseOptions): BitwiseEqualTo {
  if (options !== undefined) assertBitwiseOptions(options);
  return new BitwiseEqualTo(value, options ?? {}, false);
}

/**
 * Builds an inverse {@link BitwiseEqualTo} (the function installed as `expect.not.bitwiseEqualTo`).
 * @throws BitwiseUsageError when `options` is not a valid options object
 */
export function notBitwiseEqualTo(value: unknown, options?: BitwiseOptions): BitwiseEqualTo {
  if (options !== undefined) assertBitwiseOptions(options);
  return new BitwiseEqualTo(value, options ?? {}, true);
}
