// Sizes a samples reply before any work, so the session budget admits or refuses it as it does a chat turn.
// The v2 op copies the request's metadata into every leaf's sample: its size times the leaves must fit the heap.
import { recordPromptLength } from "./record-ids";
import { cannotNestPast, MAX_JSON_DEPTH } from "../wire/json-depth";
import { PyBigInt, PyFloat } from "../wire/py-json";
import type { JsonObject } from "../wire/sample";
import { SAMPLES_META_TENSOR } from "../wire/samples-codec";
import type { AnyTrajectoryPolicy } from "./policy";
import { formatMiB } from "./session-store";
import { type SamplesFootprint, SessionHttpError } from "./types";

/** Levels `_samples_meta` wraps a sample's metadata in: the reply object, its `samples` array, the sample object. */
const META_WRAP_LEVELS = 3;

/** Deepest request `metadata` a samples reply can carry: deeper, `_samples_meta` passes the JSON depth limit. */
export const MAX_SAMPLES_METADATA_DEPTH = MAX_JSON_DEPTH - META_WRAP_LEVELS;

/**
 * Heap bytes one token of one sample takes while the reply is built and sent: its entry in the sample's token list
 * and the `accumulated_token_ids` copy (8 bytes each as numbers), on the wire (8 bytes), in the metadata text (about 7
 * characters, then as UTF-8); the loss mask and log-probs cover the response only, the rest of the path once.
 */
const BYTES_PER_SAMPLE_TOKEN = 40;
/** Heap bytes of a sample besides its tokens and the request's metadata: the Sample, its metadata, its leaf. */
const SAMPLE_OVERHEAD_BYTES = 4096;
/** Heap bytes per token the session metadata repeats (the view's ids as numbers, then as text). */
const BYTES_PER_VIEW_TOKEN = 16;

/**
 * Share of the heap limit a samples reply may take the projected live heap to: past the heap guard's 90% for growth,
 * into half of the headroom it keeps back, so that reading a stored session still works on a full store.
 */
export const SAMPLES_HEAP_SHARE = 0.95;

/**
 * Share of the session budget what one samples request adds (its metadata in every sample) may take: a reply that
 * would need more is a 413, and at most a few such replies are ever in flight at once.
 */
export const SAMPLES_REQUEST_BUDGET_SHARE = 0.25;

/** A samples reply's projected heap bytes and how a refusal names them. */
export interface SamplesReplySize {
  bytes: number;
  /** The part the request adds: its metadata once per sample that carries it, and once in the session metadata. */
  requestBytes: number;
  /** e.g. `this samples reply (12 samples x 5.0 MiB of request metadata + 3.1 MiB of samples)` */
  what: string;
}

/**
 * What a policy without {@link AnyTrajectoryPolicy.samplesFootprint} may assemble: each stored record a sample of its
 * own tokens (an upper bound for the built-in layouts) carrying the request's metadata.
 */
function recordsFootprint(policy: AnyTrajectoryPolicy, state: unknown): SamplesFootprint {
  const records = policy.storedRecords?.(state) ?? [];
  let tokens = 0;
  for (const record of records) {
    tokens += recordPromptLength(record) ?? 0; // a shared record's count, without making its list
  }
  return { samples: records.length, sampleTokens: tokens, viewTokens: tokens, carriesRequestMetadata: true };
}

/**
 * The projected heap size of one samples reply: the request's metadata once per sample that carries it plus once in
 * the session metadata (`metadataBytes`: the request body's length, the metadata's spelling and a little more), the
 * samples' tokens, and the view the session metadata repeats. O(stored nodes): no sample is assembled.
 */
export function samplesReplySize(policy: AnyTrajectoryPolicy, state: unknown, metadataBytes: number): SamplesReplySize {
  const footprint = policy.samplesFootprint?.(state) ?? recordsFootprint(policy, state);
  const perSampleMetadata = footprint.carriesRequestMetadata ? metadataBytes : 0;
  const sampleBytes = footprint.samples * SAMPLE_OVERHEAD_BYTES + footprint.sampleTokens * BYTES_PER_SAMPLE_TOKEN;
  const bytes = footprint.samples * perSampleMetadata + metadataBytes + sampleBytes + footprint.viewTokens * BYTES_PER_VIEW_TOKEN;
  const parts =
    perSampleMetadata > 0
      ? `${footprint.samples} samples x ${formatMiB(perSampleMetadata)} of request metadata + ${formatMiB(sampleBytes)} of samples`
      : `${footprint.samples} samples, ${formatMiB(sampleBytes)}`;
  return { bytes, requestBytes: footprint.samples * perSampleMetadata + metadataBytes, what: `this samples reply (${parts})` };
}

/** Nesting depth of a parsed JSON value (a scalar 0, `{}` 1), counted up to `stop + 1` at most. */
function depthOf(value: unknown, stop: number): number {
  if (value === null || typeof value !== "object" || value instanceof PyFloat || value instanceof PyBigInt) return 0;
  if (stop <= 0) return 1;
  let deepest = 0;
  const children: unknown[] = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
  for (const child of children) {
    const depth = depthOf(child, stop - 1);
    if (depth > deepest) deepest = depth;
    if (deepest >= stop) break;
  }
  return 1 + deepest;
}

/**
 * Refuses (400) request metadata nested deeper than a samples reply can carry: `_samples_meta` wraps it
 * {@link META_WRAP_LEVELS} levels down, and a reply past {@link MAX_JSON_DEPTH} levels is one the decoder refuses.
 * A body with few brackets cannot nest that deep: only then is the metadata walked.
 */
export function assertMetadataFitsReply(metadata: JsonObject, body: Uint8Array): void {
  if (cannotNestPast(body, MAX_SAMPLES_METADATA_DEPTH)) return;
  const depth = depthOf(metadata, MAX_SAMPLES_METADATA_DEPTH);
  if (depth <= MAX_SAMPLES_METADATA_DEPTH) return;
  throw new SessionHttpError(
    400,
    `metadata nests more than ${MAX_SAMPLES_METADATA_DEPTH} levels deep: the samples reply carries it ${META_WRAP_LEVELS} levels down in ` +
      `${SAMPLES_META_TENSOR}, whose JSON may nest at most ${MAX_JSON_DEPTH} levels (the samples decoder's limit); send metadata of at most ` +
      `${MAX_SAMPLES_METADATA_DEPTH} levels`,
  );
}
