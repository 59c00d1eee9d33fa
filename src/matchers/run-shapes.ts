// Defensive readers for what the parity matchers receive: runs, GET snapshots and v2 tree tables.
// Matchers get `unknown` from Jest; these turn it into typed views or a sentence saying what is missing.
import type { SessionParityRun, SessionSnapshot } from "../fixture/types";
import type { SessionRecord } from "../server/types";
import { Sample } from "../wire/sample";

/** A plain (non-array) object. */
export type PlainRecord = Record<string, unknown>;

/** True for a non-null, non-array object. */
export function isPlainRecord(value: unknown): value is PlainRecord {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Reads `value` as a {@link SessionParityRun}, or returns why it is not one. */
export function readRun(value: unknown, what: string): { run: SessionParityRun } | { problem: string } {
  if (!isPlainRecord(value)) return { problem: `${what} is not a SessionParityRun (got ${shortType(value)})` };
  const missing: string[] = [];
  if (value.version !== "v1" && value.version !== "v2") missing.push('version "v1" or "v2"');
  if (!Array.isArray(value.samples) || !value.samples.every((sample) => sample instanceof Sample)) missing.push("samples (an array of Sample)");
  if (!isPlainRecord(value.sessionMetadata)) missing.push("sessionMetadata (an object)");
  if (!isPlainRecord(value.preCollect) || !Array.isArray(value.preCollect.records)) missing.push("preCollect.records (an array)");
  if (missing.length > 0) return { problem: `${what} is not a SessionParityRun: it lacks ${missing.join(", ")}` };
  return { run: value as unknown as SessionParityRun };
}

/** The records of a run's `preCollect` snapshot or of a snapshot itself, or why there are none. */
export function readRecords(value: unknown, what: string): { records: SessionRecord[] } | { problem: string } {
  if (isPlainRecord(value) && isPlainRecord(value.preCollect) && Array.isArray(value.preCollect.records)) {
    return { records: value.preCollect.records as SessionRecord[] };
  }
  if (isPlainRecord(value) && Array.isArray(value.records)) return { records: (value as unknown as SessionSnapshot).records };
  return { problem: `${what} is neither a SessionParityRun nor a GET /sessions/{id} snapshot with records (got ${shortType(value)})` };
}

/** A tree node reduced to what topology compares. */
export interface TopologyNode {
  /** The node id. */
  id: unknown;
  /** The parent's id, or null for a root. */
  parent: unknown;
}

/** A tree leaf reduced to what topology compares. */
export interface TopologyLeaf {
  /** The leaf's node id. */
  node_id: unknown;
  /** Node ids from the root to the leaf. */
  path_node_ids: unknown;
}

/** A v2 `metadata.tree` as the topology check reads it (rows keep their other fields). */
export interface TreeView {
  /** The node rows in seq order. */
  nodes: PlainRecord[];
  /** The leaf rows in seq order. */
  leaves: PlainRecord[];
}

/**
 * Reads `tree.nodes` / `tree.leaves` from a tree object or a v2 run (its `preCollect`, else its session metadata).
 * A problem is a usage error (`usage: true`) when `value` is neither a run nor a tree; a run without a tree is not.
 */
export function readTree(
  value: unknown,
  what: string,
): { tree: TreeView; run: SessionParityRun | null; selectedLeaf?: unknown } | { problem: string; usage: boolean } {
  if (isTupleTree(value)) {
    return {
      tree: {
        nodes: value.nodes.map(([id, parent]) => ({ id, parent })),
        leaves: value.leaves.map(([nodeId, path]) => ({ node_id: nodeId, path_node_ids: path })),
      },
      run: null,
      ...(value.selectedLeaf !== undefined ? { selectedLeaf: value.selectedLeaf } : {}),
    };
  }
  if (isTree(value)) return { tree: value, run: null };
  const read = readRun(value, what);
  if ("problem" in read) {
    return {
      problem: `${what} is neither a v2 SessionParityRun, a tree {nodes, leaves} nor a tuple tree {nodes: [id, parent][], leaves: [nodeId, path][]} (got ${shortType(value)})`,
      usage: true,
    };
  }
  const { run } = read;
  const tree = run.preCollect.metadata?.tree ?? run.sessionMetadata.tree;
  if (!isTree(tree)) {
    return { problem: `${what} is a ${run.version} run without metadata.tree${run.version === "v1" ? " (only v2 servers keep a tree)" : ""}`, usage: false };
  }
  return { tree, run };
}

/** A hand-built tree in the expected topology's own shape: `{nodes: [id, parent][], leaves: [nodeId, path][], selectedLeaf?}`. */
function isTupleTree(value: unknown): value is { nodes: [unknown, unknown][]; leaves: [unknown, unknown][]; selectedLeaf?: unknown } {
  const pair = (row: unknown): boolean => Array.isArray(row) && row.length === 2;
  return (
    isPlainRecord(value) &&
    Array.isArray(value.nodes) &&
    Array.isArray(value.leaves) &&
    value.nodes.length + value.leaves.length > 0 &&
    value.nodes.every(pair) &&
    value.leaves.every(pair)
  );
}

function isTree(value: unknown): value is TreeView {
  return (
    isPlainRecord(value) && Array.isArray(value.nodes) && Array.isArray(value.leaves) && value.nodes.every(isPlainRecord) && value.leaves.every(isPlainRecord)
  );
}

/** A short description of a value's type for usage messages. */
function shortType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value instanceof Sample) return "a Sample";
  if (typeof value === "object") {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
    return name && name !== "Object" ? `a ${name}` : "an object";
  }
  return typeof value;
}

/** `sample i (rollout_id r)`: how messages name a run's sample. */
export function sampleLabel(sample: Sample, index: number): string {
  const id = sample.rollout_id ?? sample.index;
  return id === null ? `sample ${index}` : `sample ${index} (rollout_id ${id})`;
}
