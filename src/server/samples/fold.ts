// One-pass sample assembly: a trajectory's turns merged straight into one Sample, each array written once at its size.
// Same checks, texts and result as turnSamplesFromRecords -> truncateTurnSamples -> mergeTurnSamples (miles' merge.py).
import { PrefixCacheInfo, Sample, SpecInfo, type DecodeFn, type JsonObject, type JsonValue, type SampleStatus } from "../../wire/sample";
import type { Tensor } from "../../wire/tensor";
import type { SessionRecord } from "../types";
import { SampleAssemblyError } from "./assembly-error";
import { cloneJson } from "./merge";
import { turnReplayTensors, type ReplayAssemblyOptions } from "./replay";
import {
  debugMessagesOf,
  lifecycleSegment,
  NO_REPLAY_CONFIG,
  NO_SAMPLE_EXTRAS,
  numberOr,
  specInfoOfMeta,
  statusOfFinishReason,
  type AlignedTurn,
  type RecordTokens,
  type SampleExtras,
} from "./turn-samples";

/**
 * One turn as the fold sees it: what the per-turn Sample of `turnSamplesFromRecords` holds, without building it.
 * The turn's tokens are `promptIds + outputIds[:outputLength]`, its loss mask `outputLength` ones, its log-probs
 * `outputLogProbs[:outputLength]`; every other field of that Sample keeps its default.
 */
export interface FoldTurn {
  readonly record: SessionRecord;
  /** The record before this one in the trajectory (its timestamp is the lifecycle's `prev_t1`). */
  readonly previous: SessionRecord | null;
  /** 1-based turn number. */
  readonly turn: number;
  readonly parts: RecordTokens;
  /** Output tokens kept after the trailing-token trim and any max_seq_len cut. */
  outputLength: number;
  response: string;
  status: SampleStatus;
  routed: Tensor<"I32"> | null;
  indexer: Tensor<"I32"> | null;
  /** `prefix_cache_info` of the turn alone. */
  readonly cachedTokens: number;
  readonly totalPromptTokens: number;
  /** `spec_info` of the turn alone (zeros unless the speculative extra is on). */
  readonly spec: SpecInfo;
  /** The debug conversation (`metadata.messages`) when this is the trajectory's last turn and the extra is on. */
  readonly messages: JsonValue[] | undefined;
  /** Set once a memoized prefix ends on this turn: a sample ending on it then gets its own copy of the tensors. */
  shared: boolean;
}

/**
 * The per-turn state of record `i` once aligned, built as `turnSample` builds the turn's Sample, step for step
 * (decode the output, read the replay tensors, strip the trim, map the finish reason, add the counters).
 */
export function foldTurn(
  records: readonly SessionRecord[],
  i: number,
  aligned: AlignedTurn,
  decode: DecodeFn,
  replay: ReplayAssemblyOptions = NO_REPLAY_CONFIG,
  extras: SampleExtras = NO_SAMPLE_EXTRAS,
): FoldTurn {
  const parts = aligned.tokens;
  const response = decode(parts.outputIds);
  const { routed, indexer } = turnReplayTensors(parts.meta, parts.promptIds.length + parts.outputIds.length - 1, i + 1, replay);
  const turn: FoldTurn = {
    record: records[i],
    previous: i > 0 ? records[i - 1] : null,
    turn: i + 1,
    parts,
    outputLength: parts.outputIds.length,
    response,
    status: "pending",
    routed,
    indexer,
    cachedTokens: 0 + numberOr(parts.meta.cached_tokens, 0),
    totalPromptTokens: 0 + numberOr(parts.meta.prompt_tokens, 0),
    spec: extras.specInfo ? specInfoOfMeta(parts.meta) : ZERO_SPEC,
    messages: extras.debugMessages && i === records.length - 1 ? debugMessagesOf(records[i]) : undefined,
    shared: false,
  };
  if (aligned.trimCount > 0) stripTurnOutput(turn, aligned.trimCount, decode);
  const status = statusOfFinishReason(parts.finishReason);
  if (status !== undefined) turn.status = status;
  return turn;
}

const ZERO_SPEC = new SpecInfo();

/** `Sample.stripLastOutputTokens` on a fold turn: same refusals, same row cuts, same re-decoding. */
function stripTurnOutput(turn: FoldTurn, n: number, decode: DecodeFn): void {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`stripLastOutputTokens: n must be a non-negative integer, got ${n}`);
  if (n === 0) return;
  if (n > turn.outputLength) {
    throw new RangeError(`stripLastOutputTokens: cannot strip ${n} tokens, only ${turn.outputLength} output tokens`);
  }
  turn.outputLength -= n;
  if (turn.routed !== null) turn.routed = turn.routed.sliceRows(turn.routed.shape[0] - n);
  if (turn.indexer !== null) turn.indexer = turn.indexer.sliceRows(turn.indexer.shape[0] - n);
  turn.response = turn.outputLength > 0 ? decode(turn.parts.outputIds.slice(0, turn.outputLength)) : "";
}

/** `truncateTurnSamples` on fold turns: keeps turns within `maxSeqLen`, cuts the first one over it, drops the rest. */
export function truncateFoldTurns(turns: readonly FoldTurn[], maxSeqLen: number, decode: DecodeFn): FoldTurn[] {
  const kept: FoldTurn[] = [];
  for (const turn of turns) {
    const total = turn.parts.promptIds.length + turn.outputLength;
    if (total <= maxSeqLen) {
      kept.push(turn);
      continue;
    }
    const overshoot = total - maxSeqLen;
    if (turn.outputLength - overshoot <= 0) break;
    stripTurnOutput(turn, overshoot, decode);
    turn.status = "truncated";
    kept.push(turn);
    break;
  }
  return kept;
}

/**
 * The merged sample of a prefix of turns, as an immutable chain (each node adds one turn to its predecessor's), so
 * the leaves of one tree can resume from a shared prefix. Holds the scalars of the merge; arrays are written once,
 * when the chain becomes a Sample.
 */
export interface FoldNode {
  /** The last merged turn: the merged sample's tokens, status and replay tensors are its own. */
  readonly turn: FoldTurn;
  readonly prev: FoldNode | null;
  /** Observation tokens between the previous node's turn and this one (0 on the first node). */
  readonly observationLength: number;
  readonly response: string;
  readonly responseLength: number;
  readonly cachedTokens: number;
  readonly totalPromptTokens: number;
  /** `spec_info` summed over the merged turns. */
  readonly spec: SpecInfo;
  /** Turns merged so far. */
  readonly count: number;
}

/** The fold's start: the first turn alone. */
export function firstFoldNode(turn: FoldTurn): FoldNode {
  return {
    turn,
    prev: null,
    observationLength: 0,
    response: turn.response,
    responseLength: turn.outputLength,
    cachedTokens: turn.cachedTokens,
    totalPromptTokens: turn.totalPromptTokens,
    spec: turn.spec,
    count: 1,
  };
}

/**
 * `foldStopsBefore` on the fold: the merge stops before `next` when the last merged turn is not completed or
 * carries a replay tensor `next` lacks.
 */
export function foldStopsBeforeTurn(acc: FoldNode, next: FoldTurn): boolean {
  const last = acc.turn;
  return last.status !== "completed" || (last.routed !== null && next.routed === null) || (last.indexer !== null && next.indexer === null);
}

/**
 * `mergeSamplePair(acc, next)` on the fold, with its checks in its order and its texts. The checks it makes that
 * cannot fail on turns read from records are left out: both sides pass `validate`, both prompts are `""`, the
 * equal-field and metadata-rest checks compare defaults, {@link foldStopsBeforeTurn} has already ruled out a
 * non-completed accumulator and a dropped replay tensor, and a replay tensor never loses rows (each turn's has
 * `max(len(tokens) - 1, 0)` rows, and `obs_len > 0` makes the next turn's tokens longer).
 */
export function mergeFoldTurn(acc: FoldNode, next: FoldTurn, decode: DecodeFn): FoldNode {
  const last = acc.turn;
  const accLength = last.parts.promptIds.length + last.outputLength;
  if (!turnTokensStartWith(next, last)) throw new SampleAssemblyError("b.tokens must start with a.tokens");
  const observationLength = next.parts.promptIds.length - accLength;
  if (!(observationLength > 0)) throw new SampleAssemblyError(`obs_len must be > 0, got ${observationLength}`);
  const observationText = decode(next.parts.promptIds.slice(accLength, accLength + observationLength));
  return {
    turn: next,
    prev: acc,
    observationLength,
    response: acc.response + observationText + next.response,
    responseLength: acc.responseLength + observationLength + next.outputLength,
    cachedTokens: acc.cachedTokens + next.cachedTokens,
    totalPromptTokens: acc.totalPromptTokens + next.totalPromptTokens,
    spec: acc.spec === ZERO_SPEC && next.spec === ZERO_SPEC ? ZERO_SPEC : acc.spec.add(next.spec),
    count: acc.count + 1,
  };
}

/** The left fold over `turns` (at least one), stopping where {@link foldStopsBeforeTurn} says. */
export function foldTurns(turns: readonly FoldTurn[], decode: DecodeFn): FoldNode {
  let acc = firstFoldNode(turns[0]);
  for (let i = 1; i < turns.length; i++) {
    if (foldStopsBeforeTurn(acc, turns[i])) break;
    acc = mergeFoldTurn(acc, turns[i], decode);
  }
  return acc;
}

/** Whether `long`'s tokens (`promptIds + outputIds[:outputLength]`) start with `short`'s, read in place. */
function turnTokensStartWith(long: FoldTurn, short: FoldTurn): boolean {
  const longPrompt = long.parts.promptIds;
  const shortPrompt = short.parts.promptIds;
  const shortOutput = short.parts.outputIds;
  const shortLength = shortPrompt.length + short.outputLength;
  if (longPrompt.length + long.outputLength < shortLength) return false;
  if (shortLength <= longPrompt.length) {
    // The usual case: the next turn's prompt re-renders the whole previous turn, as reading it found (same comparisons).
    const repeated = long.parts.repeated;
    if (repeated !== undefined && repeated.of === short.parts && repeated.length >= shortLength) return true;
    for (let i = 0; i < shortPrompt.length; i++) if (longPrompt[i] !== shortPrompt[i]) return false;
    for (let i = shortPrompt.length; i < shortLength; i++) if (longPrompt[i] !== shortOutput[i - shortPrompt.length]) return false;
    return true;
  }
  const longOutput = long.parts.outputIds;
  for (let i = 0; i < shortLength; i++) {
    const want = i < shortPrompt.length ? shortPrompt[i] : shortOutput[i - shortPrompt.length];
    const have = i < longPrompt.length ? longPrompt[i] : longOutput[i - longPrompt.length];
    if (have !== want) return false;
  }
  return true;
}

/**
 * The Sample a fold chain stands for, every array written once at its final size: tokens of the last turn, loss
 * mask and log-probs turn by turn with zeros over each observation, weight versions and lifecycle segments in turn
 * order (one turn keeps its lone segment, several give the list, as the metadata merge does). Nothing is shared
 * with the records or with another sample, except replay tensors, handed out as the merge hands them out.
 * `lastShared`: whether a memoized prefix ended on the last turn when the chain was folded (a sample written later
 * copies its tensors as one written right away would).
 */
export function sampleFromFold(node: FoldNode, lastShared: boolean = node.turn.shared): Sample {
  const chain = new Array<FoldNode>(node.count);
  for (let at: FoldNode | null = node, k = node.count - 1; at !== null; at = at.prev, k--) chain[k] = at;
  const lossMask = new Array<number>(node.responseLength);
  const logProbs = new Array<number>(node.responseLength);
  const weightVersions: string[] = [];
  const segments: JsonObject[] = [];
  let at = 0;
  for (const link of chain) {
    for (let k = 0; k < link.observationLength; k++, at++) {
      lossMask[at] = 0;
      logProbs[at] = 0;
    }
    const { parts, outputLength } = link.turn;
    const turnLogProbs = parts.outputLogProbs;
    for (let k = 0; k < outputLength; k++, at++) {
      lossMask[at] = 1;
      logProbs[at] = turnLogProbs[k];
    }
    if ("weight_version" in parts.meta) weightVersions.push(parts.meta.weight_version as string);
    segments.push(lifecycleSegment(link.turn.record, link.turn.previous, parts.meta, link.turn.turn));
  }
  const last = node.turn;
  const output = last.parts.outputIds;
  const sample = new Sample();
  sample.tokens = last.parts.promptIds.concat(last.outputLength === output.length ? output : output.slice(0, last.outputLength));
  sample.response = node.response;
  sample.response_length = node.responseLength;
  sample.loss_mask = lossMask;
  sample.weight_versions = weightVersions;
  sample.rollout_log_probs = logProbs;
  sample.rollout_routed_experts = last.routed !== null && lastShared ? last.routed.clone() : last.routed;
  sample.rollout_indexer_topk = last.indexer !== null && lastShared ? last.indexer.clone() : last.indexer;
  sample.status = last.status;
  sample.metadata = { lifecycle: segments.length === 1 ? segments[0] : segments };
  // the merge keeps the last turn's messages (merge_samples' `_pop_messages`): only the trajectory's last turn has them
  if (last.messages !== undefined) sample.metadata.messages = cloneJson(last.messages);
  if (node.spec !== ZERO_SPEC) sample.spec_info = node.spec.add(ZERO_SPEC);
  sample.prefix_cache_info = new PrefixCacheInfo({ cached_tokens: node.cachedTokens, total_prompt_tokens: node.totalPromptTokens });
  return sample;
}
