// Checks a session server's routing-replay options once at start-up and splits them into what the chat proxy
// asks the backend for and what the samples op needs to read the replies (a bad combination never starts).
import type { ReplayRequestOptions } from "./replay-request";
import type { ReplayAssemblyOptions } from "./samples/replay";

/** The routing-replay options of a session server, named like miles' arguments. */
export interface RoutingReplayServerOptions {
  /** `--use-rollout-routing-replay`: ask for `return_routed_experts` and carry `rollout_routed_experts`. */
  useRoutingReplay?: boolean;
  /** `--use-rollout-indexer-replay`: ask for `return_indexer_topk` and carry `rollout_indexer_topk`. */
  useIndexerReplay?: boolean;
  /** `--use-addition-r3`: ask only for rows the session lacks (`routed_experts_start_len`) and rebuild the tensor from patches. */
  useAdditionR3?: boolean;
  /** `--num-layers`: MoE layers in a routed-experts buffer; required with `useRoutingReplay`. */
  numLayers?: number;
  /** `--lora-rank`: above 0, every upstream body names the adapter (`lora_path: "miles_lora"`). */
  loraRank?: number;
  /** `--lora-adapter-path`: set, every upstream body names the adapter (`lora_path: "miles_lora"`). */
  loraAdapterPath?: string;
}

/** miles' `LORA_ADAPTER_NAME` (miles/utils/lora.py): the name SGLang serves the trained adapter under. */
const LORA_ADAPTER_NAME = "miles_lora";

/** Validated routing-replay settings. */
export interface ResolvedReplayOptions {
  request: ReplayRequestOptions;
  assembly: ReplayAssemblyOptions;
}

/** @throws Error naming the option when `numLayers` is missing under routing replay or is not a positive integer */
export function resolveReplayOptions(options: RoutingReplayServerOptions): ResolvedReplayOptions {
  const { numLayers } = options;
  if (numLayers !== undefined && !(Number.isSafeInteger(numLayers) && numLayers > 0)) {
    throw new Error(`numLayers (--num-layers) must be a positive integer, got ${JSON.stringify(numLayers)}`);
  }
  if (options.useRoutingReplay && numLayers === undefined) {
    throw new Error("useRoutingReplay (--use-rollout-routing-replay) needs numLayers (--num-layers): routed-experts buffers are (tokens, num_layers, topk)");
  }
  const { loraRank, loraAdapterPath } = options;
  if (loraRank !== undefined && !(Number.isSafeInteger(loraRank) && loraRank >= 0)) {
    throw new Error(`loraRank (--lora-rank) must be a non-negative integer, got ${JSON.stringify(loraRank)}`);
  }
  // is_lora_enabled: `lora_rank > 0 or lora_adapter_path is not None`
  const lora = (loraRank ?? 0) > 0 || (loraAdapterPath !== undefined && loraAdapterPath !== null);
  return {
    request: {
      routedExperts: options.useRoutingReplay === true,
      indexerTopk: options.useIndexerReplay === true,
      additionR3: options.useAdditionR3 === true,
      ...(lora ? { loraPath: LORA_ADAPTER_NAME } : {}),
    },
    assembly: { numLayers: numLayers ?? null, additionR3: options.useAdditionR3 === true },
  };
}
