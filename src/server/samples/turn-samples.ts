// One raw per-turn Sample from each stored record, aligned against the trajectory's accumulated token ids.
// Pure: records in, samples out; the decode function is the only tokenizer dependency.
import { pyRepr } from "../../wire/py-json";
import type { JsonObject } from "../../wire/sample";
import { DecodeFn, Sample, SampleStatus, SpecInfo, type JsonValue } from "../../wire/sample";
import type { SessionRecord } from "../types";
import { SampleAssemblyError } from "./assembly-error";
import { cloneJson } from "./merge";
import { attachTurnReplay, type ReplayAssemblyOptions } from "./replay";
import { pyNumberValue } from "../../wire/py-json-values";

/** Options shared by the assembly steps. */
export interface TurnSampleOptions {
  /** Decodes ids keeping special tokens. */
  decode: DecodeFn;
  /** Trailing output tokens a non-last turn may lose to the next turn's template (0 for Qwen3). */
  maxTrimTokens: number;
  /** How replay payloads are read (default: no num_layers, full R3). */
  replay?: ReplayAssemblyOptions;
  /** What the samples op adds beyond miles' defaults (default: nothing). */
  extras?: SampleExtras;
}

/**
 * Optional sample contents miles adds under two arguments (miles/rollout/session/samples/merge.py at 31f1ca96):
 * `debugMessages` (`--save-debug-trajectory-data` set, lines 87-88): the last turn's `metadata.messages` is the
 * request's messages plus the response message; `specInfo` (`--sglang-speculative-algorithm` set, lines 136-137):
 * the backend's speculative-decoding counters summed into `spec_info`.
 */
export interface SampleExtras {
  /** Attach `metadata.messages` to the trajectory's last turn. */
  readonly debugMessages: boolean;
  /** Sum each turn's `meta_info` speculative counters into `spec_info`. */
  readonly specInfo: boolean;
}

/** Neither extra: miles' default arguments. */
export const NO_SAMPLE_EXTRAS: SampleExtras = Object.freeze({ debugMessages: false, specInfo: false });

/**
 * One turn's `spec_info` from its `meta_info` (`SpecInfo.add(meta_info)` of miles/utils/types.py): the three
 * `spec_*` counters as named, `completion_token_num` from `completion_tokens`, each 0 when absent.
 */
export function specInfoOfMeta(meta: Record<string, unknown>): SpecInfo {
  return new SpecInfo({
    spec_accept_token_num: 0 + numberOr(meta.spec_accept_token_num, 0),
    spec_draft_token_num: 0 + numberOr(meta.spec_draft_token_num, 0),
    spec_verify_ct: 0 + numberOr(meta.spec_verify_ct, 0),
    completion_token_num: 0 + numberOr(meta.completion_tokens, 0),
  });
}

/**
 * The debug conversation of a record: `request["messages"] + [response["choices"][0]["message"]]` (merge.py:88),
 * copied. A record without either is refused (Python raises there).
 * @throws SampleAssemblyError naming the missing part
 */
export function debugMessagesOf(record: SessionRecord): JsonValue[] {
  const messages = record.request?.messages;
  const choices = record.response?.choices;
  const message = Array.isArray(choices) && isObject(choices[0]) ? choices[0].message : undefined;
  if (!Array.isArray(messages) || message === undefined) {
    throw new SampleAssemblyError("save_debug_trajectory_data: the last record lacks request.messages or response.choices[0].message");
  }
  return cloneJson([...(messages as JsonValue[]), message]) as JsonValue[];
}

/** Replay reading when the caller gives none: full R3, no layer count (a routed-experts payload is then refused). */
export const NO_REPLAY_CONFIG: ReplayAssemblyOptions = Object.freeze({ numLayers: null, additionR3: false });

const STATUS_BY_FINISH_REASON: Readonly<Record<string, SampleStatus>> = {
  stop: "completed",
  tool_calls: "completed",
  length: "truncated",
  abort: "aborted",
};

/**
 * The status a finish reason sets, or undefined when it sets none (the sample stays `pending`): Python's `match` on
 * `choice["finish_reason"]` (miles/rollout/session/samples/merge.py, `_compute_sample_from_openai_record`). Only the
 * table's own keys count, so `"constructor"` or `"__proto__"` set nothing, as in Python.
 */
export function statusOfFinishReason(finishReason: unknown): SampleStatus | undefined {
  return typeof finishReason === "string" && Object.prototype.hasOwnProperty.call(STATUS_BY_FINISH_REASON, finishReason)
    ? STATUS_BY_FINISH_REASON[finishReason]
    : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The parts of one record the assembly reads, checked. */
export interface RecordTokens {
  /** `request.input_ids`. */
  readonly promptIds: number[];
  /** Second elements of `output_token_logprobs`. */
  readonly outputIds: number[];
  /** First elements of `output_token_logprobs`. */
  readonly outputLogProbs: number[];
  /** `choices[0].meta_info`. */
  readonly meta: Record<string, unknown>;
  /** `choices[0].finish_reason` as found. */
  readonly finishReason: unknown;
  /**
   * How many leading input ids repeat the tokens of the turn read before this one (`of`: its `promptIds + outputIds`,
   * compared with `===`, stopping at an undefined id): found by {@link readRecord} when given that turn, where it spares
   * the integer check over those ids; the merge takes it instead of comparing them again.
   */
  readonly repeated?: { readonly of: RecordTokens; readonly length: number };
}

/**
 * Reads and checks the parts of record number `turn` (1-based, for the messages) the assembly uses. Pure: the same
 * record always reads the same (a holed array's holes are skipped, as `every`/`forEach` skip them). Given the read of
 * the turn before it, also finds how many input ids repeat that turn's tokens (see {@link RecordTokens.repeated}):
 * those equal ids that are integers already, so the integer check reads only the ids after them.
 * @throws SampleAssemblyError when input ids or the output (logprob, id) pairs are missing or malformed
 */
export function readRecord(record: SessionRecord, turn: number, previous: RecordTokens | null = null): RecordTokens {
  const promptIds = record.request?.input_ids;
  if (promptIds === null || promptIds === undefined) {
    throw new SampleAssemblyError("input_ids not found in request \u2014 the session server should populate it"); // Python's text
  }
  const repeated = previous !== null && Array.isArray(promptIds) ? repeatedPrefix(promptIds as unknown[], previous) : 0;
  if (!Array.isArray(promptIds) || !allIntegers(promptIds, repeated)) {
    throw new SampleAssemblyError(`record ${turn}: request.input_ids missing or not integer ids; the session server should populate it`);
  }
  const choices = record.response?.choices;
  const choice = Array.isArray(choices) && isObject(choices[0]) ? choices[0] : null;
  const meta = choice && isObject(choice.meta_info) ? choice.meta_info : null;
  const pairs = meta?.output_token_logprobs;
  if (!choice || !meta || !Array.isArray(pairs)) {
    throw new SampleAssemblyError(`record ${turn}: response.choices[0].meta_info.output_token_logprobs missing`);
  }
  const known = checkedOutputs.get(pairs);
  const { outputIds, outputLogProbs } =
    known !== undefined && known.pairCount === pairs.length
      ? { outputIds: known.outputIds.slice(), outputLogProbs: known.outputLogProbs.slice() }
      : readOutputPairs(pairs, turn);
  const finishReason: unknown = choice.finish_reason;
  if (previous === null) return { promptIds: promptIds as number[], outputIds, outputLogProbs, meta, finishReason };
  return { promptIds: promptIds as number[], outputIds, outputLogProbs, meta, finishReason, repeated: { of: previous, length: repeated } };
}

/** The output ids and log-probs of `output_token_logprobs` pairs, checked (a hole is skipped, as forEach skips it). */
function readOutputPairs(pairs: readonly unknown[], turn: number): { outputIds: number[]; outputLogProbs: number[] } {
  const outputIds: number[] = [];
  const outputLogProbs: number[] = [];
  for (let i = 0; i < pairs.length; i++) {
    const pair: unknown = pairs[i];
    if (pair === undefined && !(i in pairs)) continue; // a hole: skipped, as forEach skips it
    const logProb = Array.isArray(pair) ? pyNumberValue(pair[0]) : undefined;
    if (logProb === undefined || !Number.isInteger((pair as unknown[])[1])) {
      throw new SampleAssemblyError(`record ${turn}: output_token_logprobs[${i}] is not a [logprob, token_id] pair`);
    }
    outputLogProbs.push(logProb);
    outputIds.push((pair as unknown[])[1] as number);
  }
  return { outputIds, outputLogProbs };
}

/** What {@link readOutputPairs} read from one pairs array when its record was committed, and how many pairs it had. */
interface CheckedOutput {
  readonly pairCount: number;
  readonly outputIds: readonly number[];
  readonly outputLogProbs: readonly number[];
}

/**
 * The reading of each committed record's output pairs, by pairs array. Read when the record is committed, while the
 * reply just parsed is still in the processor's caches; the samples op, often much later, then copies two short
 * arrays instead of visiting every pair again. A committed record never changes (the session view copies the texts
 * its parts were spelled as on the same grounds), so the reading stays what {@link readRecord} would find.
 */
const checkedOutputs = new WeakMap<readonly unknown[], CheckedOutput>();

/**
 * Reads a record's output pairs now, for {@link readRecord} to reuse (see {@link checkedOutputs}); a record whose pairs
 * do not read is left to {@link readRecord}, which refuses it then. The caller must not change the record afterwards.
 * Heap bytes it keeps: {@link CHECKED_OUTPUT_BYTES_PER_TOKEN} per output token, about.
 */
export function rememberRecordOutput(record: SessionRecord): void {
  const choices = record.response?.choices;
  const choice = Array.isArray(choices) && isObject(choices[0]) ? choices[0] : null;
  const meta = choice && isObject(choice.meta_info) ? choice.meta_info : null;
  const pairs = meta?.output_token_logprobs;
  if (!Array.isArray(pairs)) return;
  let read: { outputIds: number[]; outputLogProbs: number[] };
  try {
    read = readOutputPairs(pairs, 0);
  } catch (error) {
    if (error instanceof SampleAssemblyError) return;
    throw error;
  }
  checkedOutputs.set(pairs, { pairCount: pairs.length, outputIds: read.outputIds, outputLogProbs: read.outputLogProbs });
}

/** Heap bytes {@link rememberRecordOutput} keeps per output token: an id and a log-prob, 8 bytes each. */
export const CHECKED_OUTPUT_BYTES_PER_TOKEN = 16;

/**
 * How many leading `ids` equal (`===`) the tokens of `previous` (`promptIds + outputIds`), stopping at an undefined
 * id (a hole of the previous prompt reads undefined, and an undefined id is no integer): each id counted is then an
 * integer, as the previous turn's ids passed the checks.
 */
function repeatedPrefix(ids: readonly unknown[], previous: RecordTokens): number {
  const prompt = previous.promptIds;
  const output = previous.outputIds;
  const inPrompt = Math.min(ids.length, prompt.length);
  let k = 0;
  while (k < inPrompt && ids[k] === prompt[k] && ids[k] !== undefined) k++;
  if (k < prompt.length) return k;
  const end = Math.min(ids.length, prompt.length + output.length);
  while (k < end && ids[k] === output[k - prompt.length]) k++; // output ids are integers (checked when read)
  return k;
}

/** `ids.every(Number.isInteger)` as a loop from index `from` (holes pass, as `every` skips them). */
function allIntegers(ids: readonly unknown[], from: number): boolean {
  for (let i = from; i < ids.length; i++) {
    if (!Number.isInteger(ids[i]) && i in ids) return false;
  }
  return true;
}

/** A meta_info counter as a number (`fallback` when absent or not a number). */
export function numberOr(value: unknown, fallback: number): number {
  return pyNumberValue(value) ?? fallback;
}

/** The `lifecycle` metadata segment of one turn: `{t0, t1, turn, req_ts?, prev_t1?}` (miles' `attach_lifecycle_metadata`). */
export function lifecycleSegment(record: SessionRecord, previous: SessionRecord | null, meta: Record<string, unknown>, turn: number): JsonObject {
  const latency = meta.e2e_latency;
  const t1 = record.timestamp;
  const segment: JsonObject = { t0: typeof latency === "number" ? t1 - latency : null, t1, turn };
  if (record.request_timestamp !== null && record.request_timestamp !== undefined) segment.req_ts = record.request_timestamp;
  if (previous !== null) segment.prev_t1 = previous.timestamp;
  return segment;
}

function turnSample(tokens: RecordTokens, trimCount: number, decode: DecodeFn, turn: number, replay: ReplayAssemblyOptions, extras: SampleExtras): Sample {
  const sample = new Sample({
    tokens: [...tokens.promptIds, ...tokens.outputIds],
    rollout_log_probs: tokens.outputLogProbs,
    response: decode(tokens.outputIds),
    response_length: tokens.outputIds.length,
    loss_mask: tokens.outputIds.map(() => 1),
  });
  attachTurnReplay(sample, tokens.meta, turn, replay);
  if (trimCount > 0) sample.stripLastOutputTokens(trimCount, decode);
  const status = statusOfFinishReason(tokens.finishReason);
  if (status !== undefined) sample.status = status;
  if (extras.specInfo) sample.spec_info = sample.spec_info.add(specInfoOfMeta(tokens.meta));
  sample.prefix_cache_info.cached_tokens += numberOr(tokens.meta.cached_tokens, 0);
  sample.prefix_cache_info.total_prompt_tokens += numberOr(tokens.meta.prompt_tokens, 0);
  if ("weight_version" in tokens.meta) sample.weight_versions.push(tokens.meta.weight_version as string);
  return sample;
}

/** One record read and aligned: its parts, the trailing output tokens to strip, and the alignment cursor after it. */
export interface AlignedTurn {
  /** The parts of the record the assembly reads. */
  readonly tokens: RecordTokens;
  /** Trailing output tokens that do not match the accumulated ids (stripped from the turn's sample). */
  readonly trimCount: number;
  /** Position in the accumulated ids after this turn's matched output (meaningless without accumulated ids). */
  readonly cursor: number;
}

/**
 * Reads record `i` and aligns its output against `accumulated[len(input_ids):]` (the step
 * {@link turnSamplesFromRecords} repeats): unmatched trailing tokens are counted for stripping, at most
 * `maxTrimTokens` of them and none on the last turn.
 * @throws SampleAssemblyError when the record is malformed or too many output tokens do not match
 */
function alignTurn(record: SessionRecord, i: number, isLast: boolean, accumulated: readonly number[] | null, maxTrimTokens: number): AlignedTurn {
  return alignRecordTokens(readRecord(record, i + 1), isLast, accumulated, maxTrimTokens);
}

/**
 * {@link alignTurn} on a record already read with {@link readRecord}.
 * @throws SampleAssemblyError when too many output tokens do not match
 */
export function alignRecordTokens(tokens: RecordTokens, isLast: boolean, accumulated: readonly number[] | null, maxTrimTokens: number): AlignedTurn {
  let trimCount = 0;
  let cursor = 0;
  if (accumulated !== null) {
    cursor = tokens.promptIds.length;
    const output = tokens.outputIds;
    const end = Math.min(output.length, accumulated.length - cursor);
    let matched = 0;
    while (matched < end && output[matched] === accumulated[cursor + matched]) matched += 1;
    trimCount = output.length - matched;
    const allowed = isLast ? 0 : maxTrimTokens;
    if (trimCount > allowed) {
      // Python's assertion text (miles/rollout/session/samples/merge.py, compute_samples_from_openai_records).
      throw new SampleAssemblyError(
        `trim_count ${trimCount} exceeds allowed=${allowed} (is_last=${pyRepr(isLast)}, max_trim_tokens=${maxTrimTokens}); ` +
          `output_ids[-3:]=${pyRepr(output.slice(-3))}, accumulated[cursor:cursor+3]=${pyRepr(accumulated.slice(cursor, cursor + 3))}`,
      );
    }
    cursor += matched;
  }
  return { tokens, trimCount, cursor };
}

/** The per-turn sample of record `i` once aligned: tokens, response, masks, status, counters and its lifecycle segment. */
function alignedTurnSample(
  records: readonly SessionRecord[],
  i: number,
  aligned: AlignedTurn,
  decode: DecodeFn,
  replay: ReplayAssemblyOptions = NO_REPLAY_CONFIG,
  extras: SampleExtras = NO_SAMPLE_EXTRAS,
): Sample {
  const sample = turnSample(aligned.tokens, aligned.trimCount, decode, i + 1, replay, extras);
  sample.metadata = { lifecycle: lifecycleSegment(records[i], i > 0 ? records[i - 1] : null, aligned.tokens.meta, i + 1) };
  if (extras.debugMessages && i === records.length - 1) sample.metadata.messages = debugMessagesOf(records[i]);
  return sample;
}

/** Refuses an alignment that did not consume exactly the accumulated ids. */
export function assertAlignmentComplete(cursor: number, accumulated: readonly number[], recordCount: number): void {
  if (cursor !== accumulated.length) {
    throw new SampleAssemblyError(`cursor ${cursor} != len(accumulated_token_ids) ${accumulated.length} after processing all ${recordCount} records`);
  }
}

/**
 * One sample per record, in order. With `accumulated` ids, each turn's output is matched greedily against
 * `accumulated[len(input_ids):]`; unmatched trailing tokens are stripped (at most `maxTrimTokens`, none on the
 * last turn), and the walk must end exactly at the end of `accumulated`.
 * @throws SampleAssemblyError when a record is malformed or the alignment fails
 */
export function turnSamplesFromRecords(records: readonly SessionRecord[], accumulated: readonly number[] | null, options: TurnSampleOptions): Sample[] {
  const samples: Sample[] = [];
  let cursor = 0;
  records.forEach((record, i) => {
    const aligned = alignTurn(record, i, i === records.length - 1, accumulated, options.maxTrimTokens);
    cursor = aligned.cursor;
    samples.push(alignedTurnSample(records, i, aligned, options.decode, options.replay, options.extras));
  });
  if (accumulated !== null) assertAlignmentComplete(cursor, accumulated, records.length);
  return samples;
}
