// The verdict shape every parity check returns (pass + named failing parts with their differences) and its rendering.
// Matchers and the CLI print verdicts through the same functions, so a report reads the same in both.
import { compareBitwiseSummary } from "./bitwise";
import type { BitwiseDifference, BitwiseOptions } from "./bitwise-types";
import { formatDifferenceCount, formatDifferences } from "./format-differences";
import { alignDifferingSequences, coveredByAlignment, describeSequenceHunks, type DescribeHunksOptions, type SequenceHunks } from "./sequence-hunks";

/** One part of a check that failed. */
export interface ParityFailure {
  /** Which part failed, e.g. `sample count`, `training sample`, `tree.nodes`, `samples[0].metadata`. */
  part: string;
  /** One-line statement of what is wrong. */
  message: string;
  /** The first differing leaves of the part (received/left vs expected/right); may be empty. */
  differences: BitwiseDifference[];
  /** How many leaves differ in total (at least `differences.length`). */
  totalDifferences: number;
  /**
   * True when the part failed because a value is not what the check reads (e.g. a Sample where a run belongs):
   * a usage error rather than a difference, which the matchers throw even under `.not`. Absent otherwise.
   */
  usage?: true;
  /**
   * True when the part failed because a run never completed (a non-2xx reply, no reply, an undecodable reply): the
   * payloads were never compared, so no difference is listed and the matchers throw under `.not` too. Absent otherwise.
   */
  serverProblem?: true;
  /**
   * The differing number sequences of the part (tokens, loss masks, log-probs, accumulated ids) aligned as runs of
   * equal, inserted, deleted and changed elements; computed only for a failing bitwise part. Absent otherwise.
   */
  sequences?: SequenceHunks[];
}

/** Outcome of a parity check. */
export interface ParityVerdict {
  /** True when no part failed. */
  pass: boolean;
  /** The failing parts, in check order. */
  failures: ParityFailure[];
  /** Every part that was checked (failing or not), in check order. */
  checkedParts: string[];
}

/** Differences kept per failing part when a check is not told otherwise. */
export const DEFAULT_PART_DIFFERENCES = 10;

/** Collects parts and failures while a check runs, then yields its {@link ParityVerdict}. */
export class VerdictBuilder {
  private readonly failures: ParityFailure[] = [];
  private readonly parts: string[] = [];

  constructor(
    /** Differences kept per part. */
    readonly maxDifferences: number = DEFAULT_PART_DIFFERENCES,
  ) {}

  /** Records that `part` was checked and passed (no-op when it already failed). */
  passed(part: string): void {
    if (!this.parts.includes(part)) this.parts.push(part);
  }

  /** Records a failing part. */
  fail(part: string, message: string, differences: BitwiseDifference[] = [], totalDifferences = differences.length, sequences?: SequenceHunks[]): void {
    this.passed(part);
    this.failures.push({
      part,
      message,
      differences: differences.slice(0, this.maxDifferences),
      totalDifferences: Math.max(totalDifferences, differences.length),
      ...(sequences !== undefined && sequences.length > 0 ? { sequences } : {}),
    });
  }

  /** Records a run that failed on a server problem (see {@link ParityFailure.serverProblem}). */
  serverProblem(part: string, message: string): void {
    this.passed(part);
    this.failures.push({ part, message, differences: [], totalDifferences: 0, serverProblem: true });
  }

  /** Records a usage failure: a value the check cannot read (see {@link ParityFailure.usage}). */
  usage(part: string, message: string): void {
    this.passed(part);
    this.failures.push({ part, message, differences: [], totalDifferences: 0, usage: true });
  }

  /**
   * Compares `left` and `right` bitwise as part `part`; on a difference records a failure with `message`.
   * `integers: true` prints safe-integer leaves in decimal instead of float64 bits (ids, counters).
   * @returns true when the part passed.
   */
  compare(part: string, message: string, left: unknown, right: unknown, options: BitwiseOptions & { integers?: boolean } = {}): boolean {
    const { integers, ...bitwise } = options;
    const { differences, total } = compareBitwiseSummary(left, right, { ...bitwise, maxDifferences: this.maxDifferences });
    if (total === 0) {
      this.passed(part);
      return true;
    }
    // only now, on a failure: one insertion then reads as one run instead of every later position
    const sequences = alignDifferingSequences(left, right, bitwise.rootPath ?? "value");
    this.fail(part, message, integers === true ? differences.map(readableInteger) : differences, total, sequences);
    return false;
  }

  /** The verdict so far. */
  verdict(): ParityVerdict {
    return { pass: this.failures.length === 0, failures: [...this.failures], checkedParts: [...this.parts] };
  }
}

/**
 * Marks a value difference between two non-negative-zero safe integers as an integer leaf, so formatters print
 * `2 vs 3` rather than float64 bits. A `-0` on either side keeps its float rendering (`+0 vs -0`).
 */
function readableInteger(difference: BitwiseDifference): BitwiseDifference {
  const { reason, left, right } = difference;
  const plainInteger = (value: unknown): boolean => Number.isSafeInteger(value) && !Object.is(value, -0);
  if (reason === "value" && plainInteger(left) && plainInteger(right)) return { ...difference, elementKind: "Int64" };
  return difference;
}

/** The usage failures of a verdict (values a check could not read), empty when there are none. */
export function usageFailures(verdict: ParityVerdict): ParityFailure[] {
  return verdict.failures.filter((failure) => failure.usage === true);
}

/** Options of {@link formatVerdict}. */
export interface FormatVerdictOptions {
  /** Prefix of every line (default two spaces). */
  indent?: string;
  /** Difference lines shown per part (default {@link DEFAULT_PART_DIFFERENCES}). */
  limit?: number;
  /** Names of the two sides in aligned runs (default `left` / `right`) and a decoder of token ids. */
  sides?: DescribeHunksOptions;
}

/**
 * The failing parts as text: per part a `[part] message` line, then its first differences and their count.
 * Returns the empty string for a passing verdict.
 */
export function formatVerdict(verdict: ParityVerdict, options: FormatVerdictOptions = {}): string {
  const indent = options.indent ?? "  ";
  const limit = options.limit ?? DEFAULT_PART_DIFFERENCES;
  return verdict.failures
    .map((failure) => {
      const lines = [`${indent}[${failure.part}] ${failure.message}`];
      for (const sequence of failure.sequences ?? []) lines.push(`${indent}  ${describeSequenceHunks(sequence, options.sides)}`);
      const aligned = (failure.sequences ?? []).map((sequence) => sequence.path);
      const shown = failure.differences.filter((difference) => !coveredByAlignment(difference.path, aligned));
      if (shown.length > 0) lines.push(formatDifferences(shown, { limit, indent: `${indent}  ` }));
      if (failure.differences.length > 0) {
        const listed = Math.min(limit, aligned.length > 0 ? shown.length : failure.differences.length);
        lines.push(`${indent}  ${formatDifferenceCount(failure.totalDifferences, listed, aligned.length > 0)}`);
      }
      return lines.join("\n");
    })
    .join("\n");
}
