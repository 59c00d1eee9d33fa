// Cuts a list of per-turn samples to a total token budget at turn boundaries (runs before merging).
// The first overflowing turn keeps only the output that fits and is marked truncated; later turns are dropped.
import type { DecodeFn, Sample } from "../../wire/sample";

/**
 * Keeps turns while `tokens.length <= maxSeqLen`; the first turn over the budget keeps the output tokens that
 * fit (status `truncated`) and ends the list; a turn that cannot keep one output token ends it too.
 * Mutates the overflowing sample in place.
 */
export function truncateTurnSamples(samples: readonly Sample[], maxSeqLen: number, decode: DecodeFn): Sample[] {
  const kept: Sample[] = [];
  for (const sample of samples) {
    const total = sample.tokens.length;
    if (total <= maxSeqLen) {
      kept.push(sample);
      continue;
    }
    const overshoot = total - maxSeqLen;
    if (sample.response_length - overshoot <= 0) break;
    sample.stripLastOutputTokens(overshoot, decode);
    sample.status = "truncated";
    kept.push(sample);
    break;
  }
  return kept;
}
