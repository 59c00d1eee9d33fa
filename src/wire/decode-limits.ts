// Caps on what one samples reply may make the decoder do, checked before the work, and counters of the work done.
// A hostile or broken server must not stall the test run: every cap is a count read from bytes that are already there.

/** Caps of {@link decodeSamplesReply} (see `DecodeSamplesOptions.limits`). */
export interface SamplesDecodeLimits {
  /** Most samples a reply may declare (default 10,000: a v2 session holds at most 1024 leaves). */
  maxSamples: number;
  /** Most tensors the container may declare (default: 5 per sample allowed plus `_samples_meta`). */
  maxTensors: number;
  /**
   * Most elements of one sample's tensor (tokens, loss mask, log-probs, replay rows × columns; default 2^26, a
   * 64M-token sample). Each is converted to a number list per sample, so this bounds the per-sample work.
   */
  maxTensorElements: number;
  /**
   * Most JSON objects and arrays `_samples_meta` may hold (default 2^21, about 120 MB once parsed). Counted on the
   * bytes before parsing: a reply of millions of empty objects is refused before it costs memory.
   */
  maxJsonContainers: number;
}

/** The default caps. */
export const DEFAULT_SAMPLES_DECODE_LIMITS: Readonly<SamplesDecodeLimits> = Object.freeze({
  maxSamples: 10_000,
  maxTensors: 5 * 10_000 + 1,
  maxTensorElements: 2 ** 26,
  maxJsonContainers: 2 ** 21,
});

/** The caps with `overrides` applied (a custom `maxSamples` moves the default `maxTensors` with it). */
export function resolveDecodeLimits(overrides: Partial<SamplesDecodeLimits> | undefined, fail: (message: string) => never): SamplesDecodeLimits {
  const pick = (name: keyof SamplesDecodeLimits, fallback: number): number => {
    const value = overrides?.[name];
    if (value === undefined) return fallback;
    if (!Number.isSafeInteger(value) || value < 0) fail(`samples codec: limits.${name} must be a non-negative integer, got ${String(value)}`);
    return value;
  };
  const maxSamples = pick("maxSamples", DEFAULT_SAMPLES_DECODE_LIMITS.maxSamples);
  return {
    maxSamples,
    maxTensors: pick("maxTensors", 5 * maxSamples + 1),
    maxTensorElements: pick("maxTensorElements", DEFAULT_SAMPLES_DECODE_LIMITS.maxTensorElements),
    maxJsonContainers: pick("maxJsonContainers", DEFAULT_SAMPLES_DECODE_LIMITS.maxJsonContainers),
  };
}

/**
 * Deterministic counters of a decode's work, for tests and benchmarks that bound it by the payload size without a
 * clock: bytes each pass reads, bytes copied, number-list elements built, input-sample copies made.
 */
export class DecodeWork {
  /** Bytes read by scanning passes (counting, nesting check, UTF-8 decoding, JSON parsing), summed over passes. */
  scannedBytes = 0;
  /** Tensor bytes copied (misaligned tensors; aligned ones are views). */
  copiedBytes = 0;
  /** Elements of the number lists built from tensors (8 heap bytes each). */
  listElements = 0;
  /** Deep copies of the input sample (one per decoded sample). */
  sampleCopies = 0;
}

/**
 * Counts occurrences of `needle` in `haystack` up to `stop` (returns early once reached), in one pass over the bytes.
 * A JSON key spelled with escapes is not counted, so callers use this to refuse early and re-check after parsing.
 * Occurrences do not overlap: each search resumes after the previous match, as a left-to-right scan finds them.
 */
export function countOccurrences(haystack: Uint8Array, needle: Uint8Array, stop: number, work?: DecodeWork): number {
  if (needle.length === 0) return countByLoop(haystack, needle, stop, work);
  // the native search (memchr and friends) on a view of the same bytes, no copy: a fraction of a byte loop's time
  // over long stretches without a match; the few bytes after each match go through a loop first, so a reply packed
  // with matches (a million samples of a few bytes each) is not one native call per match
  const bytes = Buffer.from(haystack.buffer, haystack.byteOffset, haystack.length);
  const last = haystack.length - needle.length;
  let count = 0;
  let at = 0;
  while (count < stop) {
    const windowEnd = Math.min(at + DENSE_MATCH_WINDOW, last + 1);
    let found = matchIn(haystack, needle, at, windowEnd);
    if (found === -1 && windowEnd <= last) found = bytes.indexOf(needle, windowEnd);
    if (found === -1) {
      // where the byte loop's cursor ends without a further match: past the last place a match could start
      if (last >= 0) at = Math.max(at, last + 1);
      break;
    }
    count += 1;
    at = found + needle.length;
  }
  if (work) work.scannedBytes += Math.min(at, haystack.length);
  return count;
}

/** Bytes after a match (or the start) that {@link countOccurrences} searches by a loop before the native search. */
const DENSE_MATCH_WINDOW = 64;

/** The first place in `from..before-1` where `needle` starts in `haystack`, or -1. */
function matchIn(haystack: Uint8Array, needle: Uint8Array, from: number, before: number): number {
  const first = needle[0];
  scan: for (let at = from; at < before; at += 1) {
    if (haystack[at] !== first) continue;
    for (let k = 1; k < needle.length; k += 1) if (haystack[at + k] !== needle[k]) continue scan;
    return at;
  }
  return -1;
}

/** {@link countOccurrences} as a byte loop: the reference the native search is held to (and the empty needle's case). */
export function countByLoop(haystack: Uint8Array, needle: Uint8Array, stop: number, work?: DecodeWork): number {
  const first = needle[0];
  const last = haystack.length - needle.length;
  let count = 0;
  let at = 0;
  scan: for (; at <= last && count < stop; at += 1) {
    if (haystack[at] !== first) continue;
    for (let k = 1; k < needle.length; k += 1) if (haystack[at + k] !== needle[k]) continue scan;
    count += 1;
    at += needle.length - 1;
  }
  if (work) work.scannedBytes += Math.min(at, haystack.length);
  return count;
}
