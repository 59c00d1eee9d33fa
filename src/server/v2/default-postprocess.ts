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
  const agentMetadata: JsonObject = Object.fromEntries(Object.entries(agent).filter(([key]) => !SERVER_OWNED_METADATA_KEYS.includes(key)));

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
    const serverOwned: JsonObject = Object.fromEntries(
      SERVER_OWNED_METADATA_KEYS.filter((key) => Object.prototype.hasOwnProperty.call(sample.metadata, key)).map((key): [string, JsonValue] => [
        key,
        sample.metadata[key],
      ]),
    );
    sample.metadata = { ...sample.metadata, ...agentMetadata, ...serverOwned };
    if (reward !== undefined && reward !== null) sample.reward = reward;
  });
  return samples;
};
