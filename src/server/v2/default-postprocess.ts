// The default v2 post-processor: each shared completion trains once, agent metadata and reward reach every sample.
// Ownership is decided over the picked set only, so a dropped leaf never owns anything.
import type { JsonObject, JsonValue } from "../../wire/sample";
import type { SamplePostprocessor } from "./hook-types";
import { readLeafDescriptor, type TreeNodeRow } from "./tree-metadata";

/** Metadata keys the server writes on every raw sample; agent metadata can neither set nor overwrite them. */
export const SERVER_OWNED_METADATA_KEYS: readonly string[] = ["accumulated_token_ids", "tito_session_mismatch", "leaf"];

/**
 * Default post-processor. Each node belongs to the kept leaf with the smallest id whose path contains it;
 * every other kept sample gets a zero loss mask over that node's completion span (clamped to its response
 * window). The agent metadata (`sessionMetadata.agent`) is merged into each sample's metadata except the
 * server-owned keys; an agent `reward` is assigned to every sample. Edits samples in place, keeps the order.
 */
export const defaultPostprocess: SamplePostprocessor = function defaultPostprocess(samples, sessionMetadata) {
  const rowById = new Map<number, TreeNodeRow>(sessionMetadata.tree.nodes.map((row) => [row.id, row]));
  const agent: JsonObject = sessionMetadata.agent ?? {};
  const reward = agent.reward;
  // Any non-null reward is assigned as is, whatever its type (Python's default_postprocess does not check it).
  // `Object.fromEntries(Object.entries(agent).filter(...))`: the agent's own enumerable string keys, in order.
  const agentMetadata: JsonObject = {};
  for (const key of Object.keys(agent)) if (!SERVER_OWNED_METADATA_KEYS.includes(key)) putData(agentMetadata, key, agent[key]);

  const leaves = samples.map((sample) => readLeafDescriptor(sample.metadata));
  const owner = new Map<number, number>();
  for (const leaf of leaves) {
    for (const id of leaf.path_node_ids) {
      const current = owner.get(id);
      if (current === undefined || leaf.node_id < current) owner.set(id, leaf.node_id);
    }
  }

  samples.forEach((sample, i) => {
    const leaf = leaves[i];
    const responseStart = sample.tokens.length - sample.response_length;
    if (sample.loss_mask !== null) {
      const mask = [...sample.loss_mask];
      for (const id of leaf.path_node_ids) {
        if (owner.get(id) === leaf.node_id) continue;
        const row = rowById.get(id);
        if (row === undefined) throw new Error(`defaultPostprocess: node ${id} is not in session_metadata.tree.nodes`);
        const start = Math.max(row.completion_span[0] - responseStart, 0);
        const end = Math.min(row.completion_span[1] - responseStart, sample.response_length);
        for (let p = start; p < end; p += 1) mask[p] = 0;
      }
      sample.loss_mask = mask;
    }
    sample.metadata = mergedMetadata(sample.metadata, agentMetadata);
    if (reward !== undefined && reward !== null) sample.reward = reward;
  });
  return samples;
};

/**
 * `{ ...metadata, ...agentMetadata, ...serverOwned }`, `serverOwned` holding the server-owned keys `metadata` has as
 * its own (read first, as the spread of that object did): the same keys in the same order, the same values, built
 * from an empty object. (Keys added to a spread's copy take V8's slow path: about a microsecond each.)
 */
function mergedMetadata(metadata: JsonObject, agentMetadata: JsonObject): JsonObject {
  const owned: Array<[string, JsonValue]> = [];
  for (const key of SERVER_OWNED_METADATA_KEYS) if (Object.prototype.hasOwnProperty.call(metadata, key)) owned.push([key, metadata[key]]);
  const merged: JsonObject = {};
  copyOwnEnumerable(merged, metadata);
  copyOwnEnumerable(merged, agentMetadata);
  for (const [key, value] of owned) putData(merged, key, value);
  return merged;
}

/** What a spread copies: own enumerable string keys in key order, then own enumerable symbols (the Python key order). */
function copyOwnEnumerable(target: JsonObject, source: JsonObject): void {
  for (const key of Object.keys(source)) putData(target, key, source[key]);
  for (const symbol of Object.getOwnPropertySymbols(source)) {
    if (Object.prototype.propertyIsEnumerable.call(source, symbol)) putData(target, symbol, (source as Record<symbol, JsonValue>)[symbol]);
  }
}

/**
 * Defines `key` as an own data property, as a spread does. A plain assignment keeps the object fast; a key the
 * prototype chain holds (`__proto__`, `toString`, an inherited setter) is defined instead, so it stays a key of its own.
 */
function putData(target: JsonObject, key: PropertyKey, value: JsonValue): void {
  const record = target as Record<PropertyKey, JsonValue>;
  if (key in target && !Object.prototype.hasOwnProperty.call(target, key)) {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else record[key] = value;
}
