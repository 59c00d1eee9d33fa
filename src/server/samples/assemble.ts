// The whole samples-op assembly for one trajectory (SPEC §7.3): records -> turns -> max_seq_len -> merge.
// Shared by v1 (the session's trajectory) and v2 (one call per leaf path); pure, no I/O.
import type { DecodeFn, JsonObject, Sample } from "../../wire/sample";
import type { EmptyReason, SessionRecord } from "../types";
import { asAssemblyError } from "./assembly-error";
import { cloneJson, mergeTurnSamples } from "./merge";
import { truncateTurnSamples } from "./truncate";
import { turnSamplesFromRecords } from "./turn-samples";

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
    let turns = turnSamplesFromRecords(records, accumulatedTokenIds, options);
    if (options.maxSeqLen !== null) turns = truncateTurnSamples(turns, options.maxSeqLen, options.decode);
    if (turns.length === 0) return { sample: null, emptyReason: "all_truncated" as const };
    const sample = mergeTurnSamples(turns, options.decode);
    if (options.extraMetadata) {
      for (const [key, value] of Object.entries(options.extraMetadata)) sample.metadata[key] = cloneJson(value);
    }
    return { sample, emptyReason: null };
  });
}
