// The whole samples-op assembly for one trajectory (SPEC §7.3): records -> turns -> max_seq_len -> merge, in one pass.
// Shared by v1 (the session's trajectory) and v2 (one call per leaf path); pure, no I/O.
import type { DecodeFn, JsonObject, Sample } from "../../wire/sample";
import type { EmptyReason, SessionRecord } from "../types";
import { asAssemblyError } from "./assembly-error";
import {
  firstFoldNode,
  foldStopsBeforeTurn,
  foldTurn,
  foldTurns,
  mergeFoldTurn,
  sampleFromFold,
  truncateFoldTurns,
  type FoldNode,
  type FoldTurn,
} from "./fold";
import { cloneJson } from "./merge";
import { applyAdditionR3, type ReplayAssemblyOptions } from "./replay";
import { alignRecordTokens, assertAlignmentComplete, readRecord, type RecordTokens, type SampleExtras } from "./turn-samples";

/** What one path prefix assembled to: the trailing-token trims of its turns and the fold over them so far. */
interface PrefixState {
  readonly trims: readonly number[];
  readonly acc: FoldNode;
  readonly stopped: boolean;
}

/**
 * Merged prefixes of trajectories already assembled in one samples op, keyed by the record that ends the prefix.
 * The paths of one v2 tree share their leading records (a record belongs to one node, and a node to one path
 * from the root), so each leaf after the first only aligns its shared turns and merges from where its own begin.
 */
export class PathPrefixMemo {
  /** @internal */
  readonly prefixes = new Map<SessionRecord, PrefixState>();
  /**
   * @internal Records already read (reading is pure: a record that failed has ended the op). A read's repeated-id
   * count is against the record read before it on the first path that read it; the merge uses it only for that one.
   */
  readonly reads = new Map<SessionRecord, RecordTokens>();
}

/** Options of {@link assembleTrajectorySample}. */
export interface TrajectoryAssemblyOptions {
  /** Decodes ids keeping special tokens. */
  decode: DecodeFn;
  /** Trailing output tokens a non-last turn may lose to the next turn's template (0 for Qwen3). */
  maxTrimTokens: number;
  /** Token budget (before merging), or null for none. */
  maxSeqLen: number | null;
  /** Keys assigned into the merged sample's metadata after merging (v2: accumulated_token_ids, leaf, ...). */
  extraMetadata?: JsonObject;
  /**
   * Shares merged prefixes with the other trajectories assembled through the same memo (the leaf paths of one
   * tree). Only used without `maxSeqLen` (truncation edits turns in place); the result is the same either way.
   */
  prefixMemo?: PathPrefixMemo;
  /** How replay payloads are read: the layer count and whether records hold additional-R3 patches. */
  replay?: ReplayAssemblyOptions;
  /** Debug messages and speculative counters (miles' `--save-debug-trajectory-data`, `--sglang-speculative-algorithm`). */
  extras?: SampleExtras;
}

/** The assembled sample, or null with the reason it is empty. */
export interface TrajectoryAssembly {
  sample: Sample | null;
  emptyReason: EmptyReason | null;
}

/**
 * Builds one training sample from a trajectory's records aligned against its accumulated token ids.
 * No records -> `no_records`; every turn truncated away -> `all_truncated`.
 * @throws SampleAssemblyError when alignment, truncation or merging breaks a rule
 */
export function assembleTrajectorySample(
  records: readonly SessionRecord[],
  accumulatedTokenIds: readonly number[] | null,
  options: TrajectoryAssemblyOptions,
): TrajectoryAssembly {
  if (records.length === 0) return { sample: null, emptyReason: "no_records" };
  return asAssemblyError(() => {
    let sample: Sample;
    if (options.prefixMemo !== undefined && options.maxSeqLen === null) {
      sample = sampleFromFold(foldThroughMemo(records, accumulatedTokenIds, options, options.prefixMemo));
    } else {
      let turns = foldTurnsFromRecords(records, accumulatedTokenIds, options);
      if (options.maxSeqLen !== null) turns = truncateFoldTurns(turns, options.maxSeqLen, options.decode);
      if (turns.length === 0) return { sample: null, emptyReason: "all_truncated" as const };
      sample = sampleFromFold(foldTurns(turns, options.decode));
    }
    if (options.replay?.additionR3) applyAdditionR3(sample, records, options.replay);
    if (options.extraMetadata) {
      for (const [key, value] of Object.entries(options.extraMetadata)) sample.metadata[key] = cloneJson(value);
    }
    return { sample, emptyReason: null };
  });
}

/**
 * {@link assembleTrajectorySample} through a prefix memo, without `maxSeqLen` or additional-R3 patches, in two steps:
 * this call reads, aligns and merges every record (the same checks in the same order, so it throws what that call
 * throws, and leaves in the memo what that call leaves), and the function it returns writes the sample that call
 * returns, at any later time (null: no records). For a caller that may never need the sample: a v2 leaf the default
 * picker drops is checked, never written.
 * @throws SampleAssemblyError when alignment or merging breaks a rule
 */
export function foldTrajectorySample(
  records: readonly SessionRecord[],
  accumulatedTokenIds: readonly number[] | null,
  options: { decode: DecodeFn; maxTrimTokens: number; prefixMemo: PathPrefixMemo; replay?: ReplayAssemblyOptions; extras?: SampleExtras },
): (() => Sample) | null {
  if (options.replay?.additionR3) throw new Error("foldTrajectorySample: additional-R3 patches are applied by assembleTrajectorySample only");
  if (records.length === 0) return null;
  const memoOptions: TrajectoryAssemblyOptions = { ...options, maxSeqLen: null };
  const node = asAssemblyError(() => foldThroughMemo(records, accumulatedTokenIds, memoOptions, options.prefixMemo));
  // what the sample would see now: a later fold may end a memoized prefix on this chain's last turn
  const lastShared = node.turn.shared;
  return () => asAssemblyError(() => sampleFromFold(node, lastShared));
}

/** `turnSamplesFromRecords` as fold turns: every record read, aligned and turned into its turn, in order. */
function foldTurnsFromRecords(records: readonly SessionRecord[], accumulated: readonly number[] | null, options: TrajectoryAssemblyOptions): FoldTurn[] {
  const last = records.length - 1;
  const turns = new Array<FoldTurn>(records.length);
  let cursor = 0;
  let previous: RecordTokens | null = null;
  for (let i = 0; i <= last; i++) {
    const read = readRecord(records[i], i + 1, previous);
    previous = read;
    const aligned = alignRecordTokens(read, i === last, accumulated, options.maxTrimTokens);
    cursor = aligned.cursor;
    turns[i] = foldTurn(records, i, aligned, options.decode, options.replay, options.extras);
  }
  if (accumulated !== null) assertAlignmentComplete(cursor, accumulated, records.length);
  return turns;
}

/**
 * {@link foldTurnsFromRecords} then {@link foldTurns}, resuming from the deepest prefix of `records` the memo holds
 * with the same trims: every record is still aligned (same checks, same order), turns inside that prefix are neither
 * rebuilt nor merged again, and each prefix this walk folds is left in the memo.
 */
function foldThroughMemo(
  records: readonly SessionRecord[],
  accumulated: readonly number[] | null,
  options: TrajectoryAssemblyOptions,
  memo: PathPrefixMemo,
): FoldNode {
  const last = records.length - 1;
  const trims: number[] = [];
  const turns: (FoldTurn | null)[] = [];
  let resume: PrefixState | null = null;
  let covered = true; // every turn so far lies inside a prefix the memo holds
  let cursor = 0;
  let previous: RecordTokens | null = null;
  for (let i = 0; i <= last; i++) {
    const record = records[i];
    let read = memo.reads.get(record);
    if (read === undefined) {
      read = readRecord(record, i + 1, previous);
      memo.reads.set(record, read);
    }
    previous = read;
    const aligned = alignRecordTokens(read, i === last, accumulated, options.maxTrimTokens);
    cursor = aligned.cursor;
    trims.push(aligned.trimCount);
    const known = covered && i < last ? memo.prefixes.get(record) : undefined;
    if (known !== undefined && sameNumbers(known.trims, trims)) {
      resume = known;
      turns.push(null);
      continue;
    }
    covered = false;
    turns.push(foldTurn(records, i, aligned, options.decode, options.replay, options.extras));
  }
  if (accumulated !== null) assertAlignmentComplete(cursor, accumulated, records.length);

  let acc: FoldNode | null = resume?.acc ?? null;
  let stopped = resume?.stopped ?? false;
  for (let i = resume?.trims.length ?? 0; i <= last; i++) {
    const next = turns[i] as FoldTurn;
    if (acc === null) acc = firstFoldNode(next);
    else if (!stopped) {
      if (foldStopsBeforeTurn(acc, next)) stopped = true;
      else acc = mergeFoldTurn(acc, next, options.decode);
    }
    if (i < last) {
      memo.prefixes.set(records[i], { trims: trims.slice(0, i + 1), acc, stopped });
      acc.turn.shared = true;
    }
  }
  return acc as FoldNode;
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
