// Aligns two number sequences (token ids, loss masks, log-probs) as runs of equal, inserted, deleted and changed
// elements, so one insertion reads as one hunk rather than as every later position. Runs only on a failure.
import diffSequences from "@jest/diff-sequences";

/** One run of an alignment: `left[leftStart, leftEnd)` against `right[rightStart, rightEnd)`. */
export interface AlignmentHunk {
  /** `equal` (same elements), `insert` (right only), `delete` (left only), `replace` (both sides, different). */
  kind: "equal" | "insert" | "delete" | "replace";
  leftStart: number;
  leftEnd: number;
  rightStart: number;
  rightEnd: number;
}

/** The alignment of two sequences. */
export interface SequenceAlignment {
  /** Runs covering both sequences in order; adjacent runs never share a kind. */
  hunks: AlignmentHunk[];
  /**
   * False when the differing middle was too large to align within the budget: it is then one `replace` hunk
   * (the common prefix and suffix are still exact).
   */
  complete: boolean;
}

/** Options of {@link alignSequences}. */
export interface AlignSequencesOptions {
  /**
   * Most element comparisons the aligner may make on the differing middle (default 30 000 000, a few hundred ms).
   * Myers' algorithm costs about (n + m) × D comparisons for D differing elements; beyond the budget the middle is
   * reported as one changed run instead.
   */
  maxComparisons?: number;
}

const DEFAULT_MAX_COMPARISONS = 30_000_000;

class BudgetExceeded extends Error {}

/** Same element bit for bit: `Object.is` (so `-0` differs from `0` and `NaN` equals `NaN`). */
function same(left: ArrayLike<unknown>, i: number, right: ArrayLike<unknown>, j: number): boolean {
  return Object.is(left[i], right[j]);
}

/**
 * Aligns `left` with `right` (a shortest edit script, Myers' algorithm from `@jest/diff-sequences`, run only on the part
 * between the common prefix and suffix). Time is bounded by `maxComparisons`; memory is linear.
 */
export function alignSequences(left: ArrayLike<unknown>, right: ArrayLike<unknown>, options: AlignSequencesOptions = {}): SequenceAlignment {
  const budget = options.maxComparisons ?? DEFAULT_MAX_COMPARISONS;
  const n = left.length;
  const m = right.length;
  let prefix = 0;
  while (prefix < n && prefix < m && same(left, prefix, right, prefix)) prefix++;
  let suffix = 0;
  while (suffix < n - prefix && suffix < m - prefix && same(left, n - 1 - suffix, right, m - 1 - suffix)) suffix++;
  const builder = new HunkBuilder();
  builder.equal(0, 0, prefix);
  const leftMiddle = n - prefix - suffix;
  const rightMiddle = m - prefix - suffix;
  let complete = true;
  if (leftMiddle > 0 && rightMiddle > 0) {
    const common: Array<[number, number, number]> = [];
    let comparisons = 0;
    try {
      diffSequences(
        leftMiddle,
        rightMiddle,
        (i, j) => {
          if (++comparisons > budget) throw new BudgetExceeded();
          return same(left, prefix + i, right, prefix + j);
        },
        (length, i, j) => common.push([length, prefix + i, prefix + j]),
      );
    } catch (error) {
      if (!(error instanceof BudgetExceeded)) throw error;
      complete = false;
      common.length = 0;
    }
    let i = prefix;
    let j = prefix;
    for (const [length, leftAt, rightAt] of common) {
      builder.gap(i, leftAt, j, rightAt);
      builder.equal(leftAt, rightAt, length);
      i = leftAt + length;
      j = rightAt + length;
    }
    builder.gap(i, n - suffix, j, m - suffix);
  } else {
    builder.gap(prefix, n - suffix, prefix, m - suffix);
  }
  builder.equal(n - suffix, m - suffix, suffix);
  return { hunks: builder.hunks, complete };
}

/** Appends runs, merging a run into the previous one of the same kind (a replace absorbs adjacent gaps). */
class HunkBuilder {
  readonly hunks: AlignmentHunk[] = [];

  equal(leftAt: number, rightAt: number, length: number): void {
    if (length > 0) this.push("equal", leftAt, leftAt + length, rightAt, rightAt + length);
  }

  gap(leftStart: number, leftEnd: number, rightStart: number, rightEnd: number): void {
    if (leftEnd === leftStart && rightEnd === rightStart) return;
    const kind = leftEnd === leftStart ? "insert" : rightEnd === rightStart ? "delete" : "replace";
    this.push(kind, leftStart, leftEnd, rightStart, rightEnd);
  }

  private push(kind: AlignmentHunk["kind"], leftStart: number, leftEnd: number, rightStart: number, rightEnd: number): void {
    const last = this.hunks.at(-1);
    if (last !== undefined && last.kind !== "equal" && kind !== "equal") {
      // two differing runs in a row (an insert beside a delete) are one changed run
      last.kind = "replace";
      last.leftEnd = leftEnd;
      last.rightEnd = rightEnd;
      return;
    }
    if (last !== undefined && last.kind === kind) {
      last.leftEnd = leftEnd;
      last.rightEnd = rightEnd;
      return;
    }
    this.hunks.push({ kind, leftStart, leftEnd, rightStart, rightEnd });
  }
}
