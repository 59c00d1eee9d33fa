// Lines the v1 and v2 training samples up by aligned runs, marks every token that differs or only one side has, and folds long
// unchanged stretches away so a sample of thousands of tokens stays readable. Pure.
import { alignSequences } from "../matchers/sequence-alignment";
import type { ReportSampleView } from "./types";

/** One token of one side at one position. */
export interface TokenCell {
  /** Token id. */
  id: number;
  /** Decoded text, when known. */
  text: string | null;
  /** Loss-mask entry (null for prompt tokens outside the response). */
  mask: number | null;
  /** Log-prob float64 bits (null for prompt tokens). */
  logProbBits: string | null;
}

/** One aligned position. */
export interface AlignedToken {
  /** Position in the sample's `tokens`. */
  index: number;
  /** v1's token there, or null when v1's sample is shorter (or absent). */
  left: TokenCell | null;
  /** v2's token there, or null when v2's sample is shorter (or absent). */
  right: TokenCell | null;
  /** Position in v2's tokens when it is not `index` (after an insertion or deletion). */
  rightIndex?: number;
  /** True when id, mask or log-prob bits differ, or one side has no token. */
  differs: boolean;
}

/** A stretch of the aligned view: shown tokens, or a folded run of equal ones. */
export type AlignedSegment = { kind: "tokens"; tokens: AlignedToken[] } | { kind: "folded"; from: number; to: number };

/** Options of {@link alignSamples}. */
export interface AlignOptions {
  /** Equal tokens kept visible on each side of a difference and at both ends (default 24). */
  context?: number;
  /** Samples up to this many tokens are never folded (default 400). */
  foldAbove?: number;
}

function cell(sample: ReportSampleView | null, index: number): TokenCell | null {
  if (sample === null || index >= sample.tokens.length) return null;
  const responseStart = sample.tokens.length - sample.responseLength;
  const offset = index - responseStart;
  const inResponse = offset >= 0;
  return {
    id: sample.tokens[index],
    text: sample.tokenTexts?.[index] ?? null,
    mask: inResponse ? (sample.lossMask[offset] ?? null) : null,
    logProbBits: inResponse ? (sample.logProbBits[offset] ?? null) : null,
  };
}

function sameCell(a: TokenCell | null, b: TokenCell | null): boolean {
  if (a === null || b === null) return a === b;
  return Object.is(a.id, b.id) && a.mask === b.mask && a.logProbBits === b.logProbBits;
}

/**
 * The aligned positions of two samples (either may be null), with differences marked. The token ids are aligned as
 * runs (sequence-alignment.ts): an inserted block pairs with nothing on the other side, and the tokens after it pair
 * with their equals, so one insertion marks only itself. `index` is the position in v1's tokens (v2's for a token
 * only v2 has).
 */
export function alignTokens(left: ReportSampleView | null, right: ReportSampleView | null): AlignedToken[] {
  const out: AlignedToken[] = [];
  if (left === null || right === null) {
    const only = left ?? right;
    for (let index = 0; index < (only?.tokens.length ?? 0); index++) out.push({ index, left: cell(left, index), right: cell(right, index), differs: false });
    return out;
  }
  const pair = (i: number | null, j: number | null): void => {
    const a = i === null ? null : cell(left, i);
    const b = j === null ? null : cell(right, j);
    out.push({ index: i ?? j ?? 0, ...(j !== null && j !== i ? { rightIndex: j } : {}), left: a, right: b, differs: !sameCell(a, b) });
  };
  for (const hunk of alignSequences(left.tokens, right.tokens).hunks) {
    const leftCount = hunk.leftEnd - hunk.leftStart;
    const rightCount = hunk.rightEnd - hunk.rightStart;
    const paired = hunk.kind === "equal" || hunk.kind === "replace" ? Math.min(leftCount, rightCount) : 0;
    for (let k = 0; k < paired; k++) pair(hunk.leftStart + k, hunk.rightStart + k);
    for (let k = paired; k < leftCount; k++) pair(hunk.leftStart + k, null);
    for (let k = paired; k < rightCount; k++) pair(null, hunk.rightStart + k);
  }
  return out;
}

/** Index of the first differing position, or -1 when the samples agree everywhere. */
export function firstDifferingToken(tokens: readonly AlignedToken[]): number {
  return tokens.findIndex((token) => token.differs);
}

/**
 * Splits aligned tokens into shown stretches and folded ones: every difference keeps `context` equal tokens on
 * each side, and so do the sample's two ends; the rest of a long equal stretch is folded into one marker.
 */
export function alignSamples(left: ReportSampleView | null, right: ReportSampleView | null, options: AlignOptions = {}): AlignedSegment[] {
  const tokens = alignTokens(left, right);
  const context = options.context ?? 24;
  const foldAbove = options.foldAbove ?? 400;
  if (tokens.length <= foldAbove) return tokens.length === 0 ? [] : [{ kind: "tokens", tokens }];
  // folded stretches are named by their rows in the aligned view
  const keep = new Uint8Array(tokens.length);
  const mark = (from: number, to: number): void => {
    keep.fill(1, Math.max(0, from), Math.min(tokens.length, to));
  };
  mark(0, context);
  mark(tokens.length - context, tokens.length);
  tokens.forEach((token, i) => {
    if (token.differs) mark(i - context, i + context + 1);
  });
  const segments: AlignedSegment[] = [];
  let i = 0;
  while (i < tokens.length) {
    let j = i;
    while (j < tokens.length && keep[j] === keep[i]) j++;
    segments.push(keep[i] === 1 ? { kind: "tokens", tokens: tokens.slice(i, j) } : { kind: "folded", from: i, to: j });
    i = j;
  }
  return segments;
}
