// The bit-tree comparator behind toBeBitwiseEqual: walks two values and lists every leaf whose bits differ.
// Pure and allocation-light: typed arrays and tensors are compared as raw bytes, number arrays without copies.
import { defaultRootName } from "./bitwise-leaves";
import { checkOptions } from "./bitwise-options";
import { rootPath } from "./bitwise-path";
import type { BitwiseDifference, BitwiseOptions, BitwiseSummary } from "./bitwise-types";
import { BitTreeWalker } from "./bitwise-walker";

export { assertBitwiseOptions } from "./bitwise-options";
export * from "./bitwise-types";

/**
 * Compares two values bit for bit (SPEC §5) and returns the differing leaves, at most
 * `options.maxDifferences` of them (all by default). Throws {@link BitwiseUsageError} on values that
 * cannot be compared (functions, symbols, Dates, cycles, ...), naming their path.
 */
export function compareBitwise(left: unknown, right: unknown, options: BitwiseOptions = {}): BitwiseDifference[] {
  return compareBitwiseSummary(left, right, options).differences;
}

/**
 * Like {@link compareBitwise}, and also counts every difference past `maxDifferences` (without
 * recording them), so a report can print "N differences in total".
 */
export function compareBitwiseSummary(left: unknown, right: unknown, options: BitwiseOptions = {}): BitwiseSummary {
  checkOptions(options);
  const walker = new BitTreeWalker(options.maxDifferences ?? Infinity, options.metadataProjection);
  walker.walk(left, right, rootPath(options.rootPath ?? defaultRootName(left)));
  return { differences: walker.differences, total: walker.total };
}

/**
 * True when the two values are bitwise equal. Walks both values completely (recording nothing), so a value
 * that cannot be compared throws a {@link BitwiseUsageError} even when it sits after the first difference:
 * `expect.not.bitwiseEqualTo(...)` must never pass silently on a usage error.
 */
export function isBitwiseEqual(left: unknown, right: unknown, options: BitwiseOptions = {}): boolean {
  checkOptions(options);
  const walker = new BitTreeWalker(0, options.metadataProjection);
  walker.walk(left, right, rootPath(options.rootPath ?? defaultRootName(left)));
  return walker.total === 0;
}
