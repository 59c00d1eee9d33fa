// The whole samples-op assembly for one trajectory (SPEC §7.3): records -> turns -> max_seq_len -> merge.
// Shared by v1 (the session's trajectory) and v2 (one call per leaf path); pure, no I/O.
import type { DecodeFn, JsonObject, Sample } from "../../wire/sample";
import { deepCopySample } from "../../wire/sample-copy";
import type { EmptyReason, SessionRecord } from "../types";
import { asAssemblyError } from "./assembly-error";
import { cloneJson, foldStopsBefore, mergeSamplePair, mergeTurnSamples } from "./merge";
import { applyAdditionR3, type ReplayAssemblyOptions } from "./replay";
import { truncateTurnSamples } from "./truncate";
import { alignedTurnSample, alignTurn, assertAlignmentComplete, turnSamplesFromRecords } from "./turn-samples";

/** What one path prefix assembled to: the trailing-token trims of its turns and the fold over them so far. */
interface PrefixState {
  readonly trims: readonly number[];
  readonly acc: Sample;
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
  /** @internal Accumulators held here, which a trajectory must copy before handing one out as its own sample. */
  readonly held = new WeakSet<Sample>();
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
    if (options.prefixMemo !== undefined && options.maxSeqLen === null) {
      const sample = assembleThroughMemo(records, accumulatedTokenIds, options, options.prefixMemo);
      if (options.replay?.additionR3) applyAdditionR3(sample, records, options.replay);
      if (options.extraMetadata) {
        for (const [key, value] of Object.entries(options.extraMetadata)) sample.metadata[key] = cloneJson(value);
      }
      return { sample, emptyReason: null };
    }
    let turns = turnSamplesFromRecords(records, accumulatedTokenIds, options);
    if (options.maxSeqLen !== null) turns = truncateTurnSamples(turns, options.maxSeqLen, options.decode);
    if (turns.length === 0) return { sample: null, emptyReason: "all_truncated" as const };
    const sample = mergeTurnSamples(turns, options.decode);
    if (options.replay?.additionR3) applyAdditionR3(sample, records, options.replay);
    if (options.extraMetadata) {
      for (const [key, value] of Object.entries(options.extraMetadata)) sample.metadata[key] = cloneJson(value);
    }
    return { sample, emptyReason: null };
  });
}

/**
 * {@link turnSamplesFromRecords} then {@link mergeTurnSamples}, resuming from the deepest prefix of `records` the
 * memo holds with the same trims: every record is still read and aligned (same checks, same order), turns inside
 * that prefix are neither rebuilt nor merged again, and each prefix this walk folds is left in the memo.
 */
function assembleThroughMemo(
  records: readonly SessionRecord[],
  accumulated: readonly number[] | null,
  options: TrajectoryAssemblyOptions,
  memo: PathPrefixMemo,
): Sample {
  const last = records.length - 1;
  const trims: number[] = [];
  const turns: (Sample | null)[] = [];
  let resume: PrefixState | null = null;
  let covered = true; // every turn so far lies inside a prefix the memo holds
  let cursor = 0;
  for (let i = 0; i <= last; i++) {
    const aligned = alignTurn(records[i], i, i === last, accumulated, options.maxTrimTokens);
    cursor = aligned.cursor;
    trims.push(aligned.trimCount);
    const known = covered && i < last ? memo.prefixes.get(records[i]) : undefined;
    if (known !== undefined && sameNumbers(known.trims, trims)) {
      resume = known;
      turns.push(null);
      continue;
    }
    covered = false;
    turns.push(alignedTurnSample(records, i, aligned, options.decode, options.replay));
  }
  if (accumulated !== null) assertAlignmentComplete(cursor, accumulated, records.length);

  let acc: Sample | null = resume?.acc ?? null;
  let stopped = resume?.stopped ?? false;
  for (let i = resume?.trims.length ?? 0; i <= last; i++) {
    const next = turns[i] as Sample;
    if (acc === null) acc = next;
    else if (!stopped) {
      if (foldStopsBefore(acc, next)) stopped = true;
      else acc = mergeSamplePair(acc, next, options.decode);
    }
    if (i < last) {
      memo.prefixes.set(records[i], { trims: trims.slice(0, i + 1), acc, stopped });
      memo.held.add(acc);
    }
  }
  const sample = acc as Sample;
  return memo.held.has(sample) ? deepCopySample(sample) : sample;
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
