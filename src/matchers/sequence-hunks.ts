// Finds the number sequences that differ between two compared values (tokens, loss masks, log-probs, accumulated
// ids) and describes each as aligned hunks: `sample.tokens: +4 tokens in v1 at 242 ("<think>…"), then equal for 360`.
import { alignSequences, type AlignmentHunk, type SequenceAlignment } from "./sequence-alignment";

/** Two number sequences at one path that are not identical. */
interface DifferingSequence {
  /** Rendered path, e.g. `sample.tokens`. */
  path: string;
  left: ArrayLike<number>;
  right: ArrayLike<number>;
}

/** A differing sequence with its alignment. */
export interface SequenceHunks {
  /** Rendered path, e.g. `sample.tokens`. */
  path: string;
  left: ArrayLike<number>;
  right: ArrayLike<number>;
  alignment: SequenceAlignment;
}

/** Sequences shorter than this on both sides read well enough position by position. */
const MIN_ALIGNED_LENGTH = 8;
/** How deep the walk looks for sequences (a sample's fields, its metadata, session metadata entries). */
const MAX_DEPTH = 6;
/** Arrays of objects longer than this are not searched element by element. */
const MAX_OBJECT_ARRAY = 64;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function numberSequence(value: unknown): ArrayLike<number> | null {
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    return typeof (value as unknown as ArrayLike<unknown>)[0] === "bigint" ? null : (value as unknown as ArrayLike<number>);
  }
  if (!Array.isArray(value)) return null;
  for (const element of value) if (typeof element !== "number") return null;
  return value as number[];
}

function identical(left: ArrayLike<number>, right: ArrayLike<number>): boolean {
  if (left.length !== right.length) return false;
  for (let i = 0; i < left.length; i++) if (!Object.is(left[i], right[i])) return false;
  return true;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !ArrayBuffer.isView(value) && !(value instanceof Map) && !(value instanceof Set);
}

/**
 * Every pair of number sequences (plain arrays of numbers or numeric typed arrays, at least 8 long on one side) found at
 * the same path of `left` and `right` whose elements are not identical (`Object.is`), in walk order.
 */
function findDifferingSequences(left: unknown, right: unknown, root: string): DifferingSequence[] {
  const found: DifferingSequence[] = [];
  const walk = (a: unknown, b: unknown, path: string, depth: number): void => {
    const sa = numberSequence(a);
    const sb = numberSequence(b);
    if (sa !== null && sb !== null) {
      if (Math.max(sa.length, sb.length) >= MIN_ALIGNED_LENGTH && !identical(sa, sb)) found.push({ path, left: sa, right: sb });
      return;
    }
    if (depth >= MAX_DEPTH) return;
    if (Array.isArray(a) && Array.isArray(b)) {
      const shared = Math.min(a.length, b.length, MAX_OBJECT_ARRAY);
      for (let i = 0; i < shared; i++) walk(a[i], b[i], `${path}[${i}]`, depth + 1);
      return;
    }
    if (isObject(a) && isObject(b) && !Array.isArray(a) && !Array.isArray(b)) {
      for (const key of Object.keys(a)) {
        if (Object.prototype.hasOwnProperty.call(b, key))
          walk(a[key], b[key], IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`, depth + 1);
      }
    }
  };
  walk(left, right, root, 0);
  return found;
}

/** Per-token sequences of a sample's response, aligned through the sample's tokens rather than by their own values. */
const RESPONSE_ALIGNED = /^(.*)\.(loss_mask|rollout_log_probs)$/;

/**
 * {@link findDifferingSequences} of different lengths, aligned (a sequence whose elements only changed in place reads
 * best position by position, as the differences list it). Token ids align by their values; a loss mask or log-probs
 * (few distinct values) align through their sample's token alignment, as the response's last tokens.
 */
export function alignDifferingSequences(left: unknown, right: unknown, root: string): SequenceHunks[] {
  const sequences = findDifferingSequences(left, right, root).filter((sequence) => sequence.left.length !== sequence.right.length);
  const byPath = new Map<string, SequenceHunks>();
  const aligned: SequenceHunks[] = [];
  for (const sequence of sequences) {
    const owner = RESPONSE_ALIGNED.exec(sequence.path);
    const tokens = owner === null ? undefined : byPath.get(`${owner[1]}.tokens`);
    const alignment = tokens === undefined ? alignSequences(sequence.left, sequence.right) : projectToResponse(tokens, sequence);
    const entry = { ...sequence, alignment };
    byPath.set(sequence.path, entry);
    aligned.push(entry);
  }
  return aligned;
}

/**
 * The alignment of a per-response-token sequence (length r, the last r tokens) from its sample's token alignment:
 * each token run clipped to the response, an equal run split where the values themselves differ.
 */
function projectToResponse(tokens: SequenceHunks, sequence: DifferingSequence): SequenceAlignment {
  const leftOffset = tokens.left.length - sequence.left.length;
  const rightOffset = tokens.right.length - sequence.right.length;
  const hunks: AlignmentHunk[] = [];
  const push = (kind: AlignmentHunk["kind"], leftStart: number, leftEnd: number, rightStart: number, rightEnd: number): void => {
    const last = hunks.at(-1);
    if (last !== undefined && (last.kind === kind || (last.kind !== "equal" && kind !== "equal"))) {
      if (last.kind !== kind) last.kind = "replace";
      last.leftEnd = leftEnd;
      last.rightEnd = rightEnd;
    } else hunks.push({ kind, leftStart, leftEnd, rightStart, rightEnd });
  };
  for (const hunk of tokens.alignment.hunks) {
    const leftStart = Math.max(hunk.leftStart - leftOffset, 0);
    const leftEnd = Math.max(hunk.leftEnd - leftOffset, 0);
    const rightStart = Math.max(hunk.rightStart - rightOffset, 0);
    const rightEnd = Math.max(hunk.rightEnd - rightOffset, 0);
    if (hunk.kind !== "equal") {
      if (leftEnd > leftStart || rightEnd > rightStart)
        push(leftEnd === leftStart ? "insert" : rightEnd === rightStart ? "delete" : "replace", leftStart, leftEnd, rightStart, rightEnd);
      continue;
    }
    // an equal token run: both sides' response parts of it, position by position
    const skip = Math.max(leftStart - (hunk.leftStart - leftOffset), rightStart - (hunk.rightStart - rightOffset));
    const length = hunk.leftEnd - hunk.leftStart - skip;
    const i0 = hunk.leftStart - leftOffset + skip;
    const j0 = hunk.rightStart - rightOffset + skip;
    let k = 0;
    while (k < length) {
      // one push per stretch of equal (or of differing) values, not per position
      const equal = Object.is(sequence.left[i0 + k], sequence.right[j0 + k]);
      let end = k + 1;
      while (end < length && Object.is(sequence.left[i0 + end], sequence.right[j0 + end]) === equal) end++;
      push(equal ? "equal" : "replace", i0 + k, i0 + end, j0 + k, j0 + end);
      k = end;
    }
  }
  return { hunks, complete: tokens.alignment.complete };
}

/** Options of {@link describeSequenceHunks}. */
export interface DescribeHunksOptions {
  /** Name of the left side (default `left`). */
  leftName?: string;
  /** Name of the right side (default `right`). */
  rightName?: string;
  /** Turns token ids into text (given for token-id sequences; others print their values). */
  decode?: (ids: number[]) => string;
  /** Differing runs described (default 4); the rest are counted. */
  maxHunks?: number;
}

/**
 * Whether a positional difference lies inside one of the aligned sequences (its elements and its length), whose
 * aligned runs already describe it: listings print the runs and leave such lines out (they still count).
 */
export function coveredByAlignment(differencePath: string, sequencePaths: readonly string[]): boolean {
  for (const path of sequencePaths) {
    if (differencePath === path) return true;
    if (differencePath.startsWith(`${path}[`) && /^\[\d+\]$/.test(differencePath.slice(path.length))) return true;
  }
  return false;
}

/** True for the paths that hold token ids (decoded to text when a decoder is at hand). */
function holdsTokenIds(path: string): boolean {
  return /(?:^|\.)(?:tokens|\w*token_ids)$/.test(path);
}

/** Elements shown per run when they are printed as values. */
const VALUES_SHOWN = 6;
/** Characters of decoded text shown per run. */
const TEXT_SHOWN = 80;

function shownRun(values: ArrayLike<number>, start: number, end: number, decode: ((ids: number[]) => string) | undefined): string {
  const slice = Array.from({ length: Math.min(end - start, decode === undefined ? VALUES_SHOWN : 4096) }, (_, k) => values[start + k]);
  if (decode !== undefined) {
    let text: string;
    try {
      text = decode(slice);
    } catch {
      text = "";
    }
    const quoted = JSON.stringify(text.length > TEXT_SHOWN ? text.slice(0, TEXT_SHOWN) : text);
    return text.length > TEXT_SHOWN ? `${quoted}…` : quoted;
  }
  const shown = slice.map((value) => (Object.is(value, -0) ? "-0" : String(value))).join(", ");
  return end - start > VALUES_SHOWN ? `[${shown}, …]` : `[${shown}]`;
}

function at(hunk: AlignmentHunk, rightName: string): string {
  return hunk.leftStart === hunk.rightStart ? `at ${hunk.leftStart}` : `at ${hunk.leftStart} (${rightName} ${hunk.rightStart})`;
}

/**
 * One line per differing sequence, its runs in order: `sample.tokens: +4 tokens in v1 at 242 ("<think>\n\n</think>\n\n"),
 * then equal for 360`. The leading equal run is implied by the first position; later equal runs are counted.
 */
export function describeSequenceHunks(sequence: SequenceHunks, options: DescribeHunksOptions = {}): string {
  const leftName = options.leftName ?? "left";
  const rightName = options.rightName ?? "right";
  const decode = holdsTokenIds(sequence.path) ? options.decode : undefined;
  const unit = holdsTokenIds(sequence.path) ? "token" : "element";
  const units = (count: number): string => (count === 1 ? unit : `${unit}s`);
  const maxHunks = options.maxHunks ?? 4;
  const { left, right, alignment } = sequence;
  const parts: string[] = [];
  let differing = 0;
  let omitted = 0;
  alignment.hunks.forEach((hunk, index) => {
    if (hunk.kind === "equal") {
      if (index > 0 && differing <= maxHunks) parts.push(`equal for ${hunk.leftEnd - hunk.leftStart}`);
      return;
    }
    differing++;
    if (differing > maxHunks) {
      omitted++;
      return;
    }
    const leftCount = hunk.leftEnd - hunk.leftStart;
    const rightCount = hunk.rightEnd - hunk.rightStart;
    if (hunk.kind === "delete")
      parts.push(`+${leftCount} ${units(leftCount)} in ${leftName} ${at(hunk, rightName)} (${shownRun(left, hunk.leftStart, hunk.leftEnd, decode)})`);
    else if (hunk.kind === "insert")
      parts.push(`+${rightCount} ${units(rightCount)} in ${rightName} ${at(hunk, rightName)} (${shownRun(right, hunk.rightStart, hunk.rightEnd, decode)})`);
    else
      parts.push(
        `${leftCount} ${units(leftCount)} of ${leftName} vs ${rightCount} of ${rightName} ${at(hunk, rightName)} ` +
          `(${shownRun(left, hunk.leftStart, hunk.leftEnd, decode)} vs ${shownRun(right, hunk.rightStart, hunk.rightEnd, decode)})`,
      );
  });
  if (omitted > 0) parts.push(`${omitted} more differing run${omitted === 1 ? "" : "s"}`);
  const partial = alignment.complete ? "" : " (too many differences to align within the budget: the differing middle is shown as one run)";
  return `${sequence.path}: ${parts.join(", then ")}${partial}`;
}
