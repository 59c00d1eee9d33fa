// The toBeBitwiseEqual matcher: Jest's hint, then the first differing leaves with their bits, then the total count.
// A plain function over Jest's MatcherContext (type-only import), so Vitest can register it too.
import type { MatcherContext, SyncExpectationResult } from "expect";
import { assertBitwiseOptions, compareBitwiseSummary } from "./bitwise";
import type { BitwiseOptions } from "./bitwise-types";
import { formatDifferenceCount, formatDifferences } from "./format-differences";

/** Differences printed by the matchers when `maxDifferences` is not given. */
const DEFAULT_REPORTED_DIFFERENCES = 10;

/**
 * `expect(received).toBeBitwiseEqual(expected, options?)`: passes when the two values have equal bit
 * trees (SPEC §5). On failure the message lists the first `options.maxDifferences` (default 10)
 * differing leaves — received on the left, expected on the right — and the total count. Values that
 * cannot be compared, and options that are not a valid {@link BitwiseOptions} object, throw a
 * BitwiseUsageError, with or without `.not`.
 */
export function toBeBitwiseEqual(this: MatcherContext, received: unknown, expected: unknown, options?: BitwiseOptions): SyncExpectationResult {
  if (options !== undefined) assertBitwiseOptions(options);
  const limit = options?.maxDifferences ?? DEFAULT_REPORTED_DIFFERENCES;
  const { differences, total } = compareBitwiseSummary(received, expected, { ...options, maxDifferences: limit });
  const hint = this.utils.matcherHint("toBeBitwiseEqual", undefined, undefined, {
    isNot: this.isNot,
    promise: this.promise,
    secondArgument: options === undefined ? undefined : "options",
  });
  if (total === 0) {
    return {
      pass: true,
      message: () => `${hint}\n\nReceived and expected are bitwise equal: every leaf has the same bits, so .not fails.`,
    };
  }
  return {
    pass: false,
    message: () =>
      `${hint}\n\nReceived (left) and expected (right) are not bitwise equal:\n` +
      `${formatDifferences(differences, { limit, indent: "  " })}\n` +
      formatDifferenceCount(total, Math.min(limit, differences.length)),
  };
}
