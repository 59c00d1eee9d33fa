// Public shapes of the bit-tree comparator: differences, options, the usage error and the MISSING marker.
// Kept apart from the walker so formatters, matchers and the CLI can depend on the shapes alone.
import type { JsonObject } from "../wire/sample";

/** Marks the side of a difference where a key or field does not exist. */
export const MISSING: unique symbol = Symbol.for("jest-session-parity.missing");

/**
 * Why two leaves differ:
 * - `value`: same kind, different bits (numbers by float64 bits, strings/booleans/bigints by value,
 *   typed-array and tensor elements by their raw bytes);
 * - `type`: different kinds (number vs string, null vs undefined, Float32Array vs Float64Array, two classes);
 * - `missing`: a key present on one side only, or an index that is a hole of a sparse array on one side
 *   (that side's value is {@link MISSING} on the other);
 * - `length`: arrays or typed arrays of different lengths;
 * - `dtype` / `shape`: tensors whose dtype or shape differ (bytes are then not compared);
 * - `undeclared`: an own property of a declared-field class outside its `static FIELDS`;
 * - `projection`: the `metadataProjection` option threw on one or both sides.
 */
export type BitwiseReason = "value" | "type" | "missing" | "length" | "dtype" | "shape" | "undeclared" | "projection";

/** One leaf where the two bit trees disagree. */
export interface BitwiseDifference {
  /** Where, rendered like `sample.rollout_log_probs[17]` or `sample.metadata.leaf`. */
  path: string;
  /** What kind of disagreement this is. */
  reason: BitwiseReason;
  /** The left (received) value at the path, or {@link MISSING}; for `dtype`/`shape` the dtypes/shapes. */
  left: unknown;
  /** The right (expected) value at the path, or {@link MISSING}; for `dtype`/`shape` the dtypes/shapes. */
  right: unknown;
  /** Raw bits in hex of a floating-point typed-array or tensor element on the left. */
  leftBits?: string;
  /** Raw bits in hex of a floating-point typed-array or tensor element on the right. */
  rightBits?: string;
  /**
   * For a typed-array or tensor element: the array kind (`Float64Array`, `Int32Array`, ...) or the tensor
   * dtype for 16-bit floats (`F16`, `BF16`). Tells formatters whether the value is a float.
   */
  elementKind?: string;
  /** Extra explanation (the class that lacks an undeclared field, the projection's error, ...). */
  detail?: string;
}

/** Replaces a Sample's `metadata` by the part that must match bit for bit (see `trainingMetadataProjection`). */
export type MetadataProjection = (metadata: JsonObject) => unknown;

/** Options of the comparator and of `toBeBitwiseEqual` / `expect.bitwiseEqualTo`. */
export interface BitwiseOptions {
  /** Applied to the `metadata` field of every {@link Sample} met on both sides before comparing it. */
  metadataProjection?: MetadataProjection;
  /**
   * How many differences to keep as records (the comparator keeps counting past it). Defaults to all for
   * `compareBitwise`, and to 10 for the matchers' messages.
   */
  maxDifferences?: number;
  /** Name of the root in rendered paths. Default: `sample` for a Sample, the lower-cased class name for
   * other declared-field classes, else `value`. */
  rootPath?: string;
}

/** The first differences and how many there are in total. */
export interface BitwiseSummary {
  /** At most `maxDifferences` differences, in walk order. */
  differences: BitwiseDifference[];
  /** Total number of differing leaves (every differing element of a large array counts). */
  total: number;
}

/**
 * Thrown when a value cannot be compared bitwise at all (a function, symbol, Date, RegExp, Promise, Set,
 * an instance of a class without `static FIELDS`, a cycle, a bad option). Never a silent pass.
 */
export class BitwiseUsageError extends Error {
  /** Rendered path of the offending value (empty for a bad option). */
  readonly path: string;

  constructor(path: string, problem: string) {
    super(path === "" ? problem : `${path}: ${problem}`);
    this.name = "BitwiseUsageError";
    this.path = path;
  }
}
