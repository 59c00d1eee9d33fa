// What routing replay adds to the upstream chat request: the SGLang return flags and, under additional R3,
// `routed_experts_start_len`, the first row the session does not hold yet. Pure; the shell calls it.
import { SessionHttpError } from "./types";

/** The server's routing-replay switches (miles' `--use-rollout-routing-replay`, `--use-rollout-indexer-replay`, `--use-addition-r3`). */
export interface ReplayRequestOptions {
  /** Ask the backend for `return_routed_experts`. */
  routedExperts: boolean;
  /** Ask the backend for `return_indexer_topk`. */
  indexerTopk: boolean;
  /** Ask only for the rows the session does not hold (`routed_experts_start_len`). */
  additionR3: boolean;
  /**
   * The adapter every upstream body names as `lora_path` (miles' `LORA_ADAPTER_NAME`, `"miles_lora"`, when
   * `--lora-rank` > 0 or `--lora-adapter-path` is set: core.py:189-191 at 31f1ca96), or absent for the base weights.
   */
  loraPath?: string;
}

/** Sets `lora_path` when an adapter is on (in place, after `no_stop_trim` like the original). */
export function addLoraPath(body: Record<string, unknown>, options: ReplayRequestOptions): void {
  if (options.loraPath !== undefined) body.lora_path = options.loraPath;
}

/** Sets the return flags the options ask for (in place, after `return_meta_info` like the original). */
export function addReplayFlags(body: Record<string, unknown>, options: ReplayRequestOptions): void {
  if (options.routedExperts) body.return_routed_experts = true;
  if (options.indexerTopk) body.return_indexer_topk = true;
}

function commonPrefixLength(a: readonly number[], b: readonly number[]): number {
  const limit = Math.min(a.length, b.length);
  let i = 0;
  while (i < limit && a[i] === b[i]) i++;
  return i;
}

/**
 * Under additional R3, when the body asks for routed experts, sets `routed_experts_start_len` to the rows the
 * checkpoint already holds (`len(checkpoint) - 1`). Those rows must stay a causal prefix of the new prompt.
 * @throws SessionHttpError 500 when the prompt does not keep the checkpoint's rows (the original fails an assertion)
 */
export function addAdditionR3Offset(
  body: Record<string, unknown>,
  options: ReplayRequestOptions,
  checkpointIds: readonly number[] | undefined,
  promptIds: readonly number[],
): void {
  if (!options.additionR3 || !body.return_routed_experts) return;
  if (checkpointIds === undefined) {
    throw new SessionHttpError(500, "additional R3 needs the policy's checkpoint ids (PreparedTurn.checkpointIds), and this policy gives none");
  }
  const previousRows = Math.max(0, checkpointIds.length - 1);
  const stable = commonPrefixLength(checkpointIds, promptIds);
  if (stable < previousRows) throw new SessionHttpError(500, `additional R3 requires ${previousRows} stable prefix tokens, got ${stable}`);
  body.routed_experts_start_len = previousRows;
}
