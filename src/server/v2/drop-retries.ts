// The default v2 picker: a leaf that a later sibling superseded is a retry left behind, not a sample.
// Decisions use commit order only; wall-clock and length oddities are reported as warnings.
import type { Sample } from "../../wire/sample";
import type { TrajectoryNode } from "./forest";
import type { SamplePicker } from "./hook-types";
import { readLeafDescriptor, type TreeNodeRow } from "./tree-metadata";

/**
 * Default picker. A leaf whose parent has a child committed after it (higher id) is a superseded retry
 * and is dropped; every other leaf, roots included, is kept. A warning is logged when a dropped leaf has
 * more tokens than every later sibling's deepest leaf, or when a later sibling carries an earlier wall
 * clock; commit order still decides. Survivors are ordered by path length, then leaf id, both descending.
 */
export const dropRetries: SamplePicker = function dropRetries(samples, sessionMetadata, context) {
  const { nodes, leaves } = sessionMetadata.tree;
  const rowById = new Map<number, TreeNodeRow>(nodes.map((row) => [row.id, row]));
  const childrenOf = new Map<number, number[]>();
  for (const row of nodes) {
    if (row.parent === null) continue;
    const siblings = childrenOf.get(row.parent);
    if (siblings === undefined) childrenOf.set(row.parent, [row.id]);
    else siblings.push(row.id);
  }
  const rowOf = (id: number): TreeNodeRow => {
    const row = rowById.get(id);
    if (row === undefined) throw new Error(`dropRetries: node ${id} is not in session_metadata.tree.nodes`);
    return row;
  };

  const kept: Array<{ sample: Sample; depth: number; id: number }> = [];
  for (const sample of samples) {
    const leaf = readLeafDescriptor(sample.metadata);
    const later = leaf.parent === null ? [] : (childrenOf.get(leaf.parent) ?? []).filter((id) => id > leaf.node_id);
    if (later.length === 0) {
      kept.push({ sample, depth: leaf.path_node_ids.length, id: leaf.node_id });
      continue;
    }
    const own = rowOf(leaf.node_id);
    const earlierClock = later.filter((id) => rowOf(id).committed_at < own.committed_at);
    if (earlierClock.length > 0) {
      context.logger.warn(
        `dropRetries: superseded leaf ${leaf.node_id} (response_id ${JSON.stringify(leaf.response_id)}, committed_at ` +
          `${own.committed_at}) has later sibling(s) ${earlierClock.join(", ")} with an earlier wall clock; ` +
          `commit order decides, dropping the leaf`,
      );
    }
    const laterSet = new Set(later);
    let survivorTokens = -Infinity;
    for (const row of leaves) {
      if (row.path_node_ids.some((id) => laterSet.has(id))) survivorTokens = Math.max(survivorTokens, rowOf(row.node_id).num_tokens);
    }
    if (own.num_tokens > survivorTokens) {
      context.logger.warn(
        `dropRetries: dropping superseded leaf ${leaf.node_id} (response_id ${JSON.stringify(leaf.response_id)}) ` +
          `although it is longer than every later sibling's deepest leaf (${own.num_tokens} > ${survivorTokens} tokens); ` +
          `commit order decides; use a custom picker to keep it`,
      );
    }
  }
  kept.sort((a, b) => b.depth - a.depth || b.id - a.id);
  return kept.map((entry) => entry.sample);
};

/**
 * Whether {@link dropRetries} drops `leaf`'s sample, read from the forest instead of the tree metadata: the leaf's
 * parent has a child committed after it. The samples op leaves such a leaf's sample unwritten until it is picked.
 */
export function isSupersededLeaf(leaf: TrajectoryNode): boolean {
  const parent = leaf.parent;
  if (parent === null) return false;
  for (const child of parent.children) if (child.id > leaf.id) return true;
  return false;
}
