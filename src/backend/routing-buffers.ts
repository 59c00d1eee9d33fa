// The mock engine's routing decisions: deterministic int32 buffers, base64-encoded like SGLang's, for
// `return_routed_experts` and `return_indexer_topk`. Pure functions of token ids and positions.

/** Shape of the mock's routed-experts buffers (`meta_info.routed_experts`). */
export interface MockRoutedExpertsConfig {
  /** MoE layers per token row. */
  numLayers: number;
  /** Experts per token and layer (top-k). */
  topk: number;
  /** Experts per layer; every id is in `[0, numExperts)` and the k ids of a slot row are distinct. */
  numExperts: number;
}

/** Shape of the mock's indexer top-k buffers (`meta_info.indexer_topk`, with `indexer_topk_num_layers`). */
export interface MockIndexerTopkConfig {
  /** Indexer layers per token row. */
  numLayers: number;
  /** Attended positions per token and layer. */
  topk: number;
}

/** A 32-bit mix of (token id, position, layer): equal inputs give equal routing, a shifted row gives another. */
function mix(tokenId: number, position: number, layer: number, salt: number): number {
  let h = Math.imul(tokenId ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(position + 1, 0xc2b2ae35) ^ Math.imul(layer + salt, 0x27d4eb2f);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h >>> 0;
}

function toBase64(values: Int32Array): string {
  // The mock serves little-endian hosts only (as SGLang's numpy buffers are native little-endian).
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString("base64");
}

/**
 * Routed experts of rows `[startRow, ids.length - 1)` (SGLang: the last token is never fed through the model),
 * laid out `(rows, numLayers, topk)`: row `r`, layer `l`, slot `s` holds `(mix(ids[r], r, l) + s) % numExperts`.
 */
export function routedExpertsBuffer(ids: readonly number[], startRow: number, config: MockRoutedExpertsConfig): Int32Array {
  const rows = Math.max(0, ids.length - 1 - startRow);
  const { numLayers, topk, numExperts } = config;
  const out = new Int32Array(rows * numLayers * topk);
  let at = 0;
  for (let r = startRow; r < startRow + rows; r++) {
    for (let l = 0; l < numLayers; l++) {
      const base = mix(ids[r], r, l, 1) % numExperts;
      for (let s = 0; s < topk; s++) out[at++] = (base + s) % numExperts;
    }
  }
  return out;
}

/** Indexer top-k of rows `[0, ids.length - 1)`: row `r`, layer `l`, slot `s` holds a position in `[0, r]`. */
export function indexerTopkBuffer(ids: readonly number[], config: MockIndexerTopkConfig): Int32Array {
  const rows = Math.max(0, ids.length - 1);
  const { numLayers, topk } = config;
  const out = new Int32Array(rows * numLayers * topk);
  let at = 0;
  for (let r = 0; r < rows; r++) {
    for (let l = 0; l < numLayers; l++) {
      const base = mix(ids[r], r, l, 7);
      for (let s = 0; s < topk; s++) out[at++] = (base + s) % (r + 1);
    }
  }
  return out;
}

/** The routing options of the mock engine. */
export interface MockRoutingOptions {
  routedExperts?: MockRoutedExpertsConfig;
  indexerTopk?: MockIndexerTopkConfig;
}

/** What one request asked for, validated against the prompt. */
export interface RoutingRequest {
  routedExperts: boolean;
  startRow: number;
  indexerTopk: boolean;
}

/**
 * Reads `return_routed_experts`, `routed_experts_start_len` (SGLang: within `[0, prompt_tokens]`, default 0) and
 * `return_indexer_topk` from a request body. Flags for a buffer the mock was not configured with are ignored.
 * @throws Error with the message for a 400 when the start row is not an integer in range
 */
export function readRoutingRequest(body: Record<string, unknown>, promptTokens: number, options: MockRoutingOptions): RoutingRequest {
  const routedExperts = body.return_routed_experts === true && options.routedExperts !== undefined;
  const start = body.routed_experts_start_len ?? 0;
  if (!Number.isSafeInteger(start) || (start as number) < 0 || (start as number) > promptTokens) {
    throw new Error(`routed_experts_start_len must be an integer in [0, ${promptTokens}] (the prompt length), got ${JSON.stringify(start)}`);
  }
  return { routedExperts, startRow: start as number, indexerTopk: body.return_indexer_topk === true && options.indexerTopk !== undefined };
}

/** The `meta_info` keys a request's routing flags add, for the full sequence `prompt + output`. */
export function routingMetaInfo(request: RoutingRequest, ids: readonly number[], options: MockRoutingOptions): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  if (request.routedExperts && options.routedExperts) meta.routed_experts = toBase64(routedExpertsBuffer(ids, request.startRow, options.routedExperts));
  if (request.indexerTopk && options.indexerTopk) {
    meta.indexer_topk = toBase64(indexerTopkBuffer(ids, options.indexerTopk));
    meta.indexer_topk_num_layers = options.indexerTopk.numLayers;
  }
  return meta;
}

/** @throws Error naming the option when a routing config is not made of positive integers (or top-k exceeds the experts) */
export function checkRoutingOptions(options: MockRoutingOptions): void {
  const positive = (value: unknown, name: string): void => {
    if (!Number.isSafeInteger(value) || (value as number) <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(value)}`);
  };
  if (options.routedExperts !== undefined) {
    const { numLayers, topk, numExperts } = options.routedExperts;
    positive(numLayers, "routedExperts.numLayers");
    positive(topk, "routedExperts.topk");
    positive(numExperts, "routedExperts.numExperts");
    if (topk > numExperts) throw new Error(`routedExperts.topk (${topk}) cannot exceed routedExperts.numExperts (${numExperts})`);
  }
  if (options.indexerTopk !== undefined) {
    positive(options.indexerTopk.numLayers, "indexerTopk.numLayers");
    positive(options.indexerTopk.topk, "indexerTopk.topk");
  }
}
