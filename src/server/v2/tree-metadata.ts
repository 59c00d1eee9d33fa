// The structural tables of a v2 session (`metadata.tree`) and the per-sample `leaf` descriptor.
// Hooks read only these wire-shaped tables, so custom pickers never depend on server internals.
import type { JsonObject } from "../../wire/sample";
import { isJsonObject } from "../../wire/wire-json";
import type { TrajectoryForest, TrajectoryNode } from "./forest";

/** One row of `metadata.tree.nodes` (wire snake_case). */
export type TreeNodeRow = {
  id: number;
  parent: number | null;
  seq: number;
  truncated: boolean;
  committed_at: number;
  completion_span: [number, number];
  num_tokens: number;
  response_id: string;
};

/** One row of `metadata.tree.leaves`: a childless node and its root -> leaf node ids. */
export type TreeLeafRow = {
  node_id: number;
  path_node_ids: number[];
};

/** `metadata.tree`: nodes in commit order, leaves in commit order. */
export type TreeMetadata = {
  nodes: TreeNodeRow[];
  leaves: TreeLeafRow[];
};

/** `sample.metadata.leaf`: which leaf a raw sample was assembled from. */
export type LeafDescriptor = {
  node_id: number;
  parent: number | null;
  path_node_ids: number[];
  response_id: string;
};

/** Session metadata handed to the hooks (and sent in the samples payload). */
export type V2SessionMetadata = JsonObject & {
  tree: TreeMetadata;
  accumulated_token_ids: number[];
  max_trim_tokens: number;
  /** The request body's `metadata` (the agent's), when the samples op received one. */
  agent?: JsonObject;
};

/** Builds `metadata.tree` for a forest. */
export function buildTreeMetadata(forest: TrajectoryForest): TreeMetadata {
  const nodes: TreeNodeRow[] = forest.nodes.map((node) => ({
    id: node.id,
    parent: node.parent === null ? null : node.parent.id,
    seq: node.seq,
    truncated: node.truncated,
    committed_at: node.committedAt,
    completion_span: [node.completionSpan[0], node.completionSpan[1]],
    num_tokens: node.tokenCount,
    response_id: node.responseId,
  }));
  const leaves: TreeLeafRow[] = forest.leaves().map((leaf) => ({ node_id: leaf.id, path_node_ids: leaf.pathIds() }));
  return { nodes, leaves };
}

/** The `leaf` descriptor of a leaf node. */
export function leafDescriptor(leaf: TrajectoryNode): LeafDescriptor {
  return {
    node_id: leaf.id,
    parent: leaf.parent === null ? null : leaf.parent.id,
    path_node_ids: leaf.pathIds(),
    response_id: leaf.responseId,
  };
}

/**
 * Reads and checks `metadata.leaf` of a sample given to a hook.
 * @throws Error naming the problem when the descriptor is missing or malformed.
 */
export function readLeafDescriptor(metadata: JsonObject): LeafDescriptor {
  const leaf = metadata.leaf;
  if (!isJsonObject(leaf)) {
    throw new Error("sample.metadata.leaf is missing: hooks only accept the raw leaf samples of the samples op");
  }
  const { node_id: nodeId, parent, path_node_ids: pathIds, response_id: responseId } = leaf;
  const isId = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0;
  if (!isId(nodeId) || !(parent === null || isId(parent)) || !Array.isArray(pathIds) || !pathIds.every(isId) || typeof responseId !== "string") {
    throw new Error(`sample.metadata.leaf is malformed: ${JSON.stringify(leaf)}`);
  }
  return { node_id: nodeId, parent, path_node_ids: pathIds, response_id: responseId };
}
