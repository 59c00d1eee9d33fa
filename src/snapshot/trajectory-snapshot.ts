// The fixture-level pin: everything a trainer receives from a runAgenticRetryTrajectories run, as one bit tree.
// Run-time values (lifecycle times, v2 tree commit times and response ids) become placeholders so a snapshot stays stable.
import type { SessionParityRun } from "../fixture/types";
import { RUNTIME_PLACEHOLDER } from "../matchers/training-metadata-projection";
import type { JsonObject, JsonValue, Sample } from "../wire/sample";
import { isJsonObject } from "../wire/wire-json";

/** Keys of the v2 tree's `nodes[]` that differ from run to run: the commit clock reading and the backend's random response id. */
const RUNTIME_TREE_NODE_KEYS: readonly string[] = ["committed_at", "response_id"];

/** One run as {@link trajectoryPayload} pins it. */
export interface PinnedTrajectory {
  /** `"v1"` or `"v2"`. */
  version: string;
  /** The decoded samples (metadata projected by the snapshot matcher's `metadataProjection`). */
  samples: Sample[];
  /** The samples reply's session metadata, tree commit times and response ids replaced by `"<runtime>"`. */
  sessionMetadata: JsonObject;
  /** Why the reply held no sample, or null. */
  emptyReason: string | null;
  /** What went wrong, or null when nothing did. */
  failure: string | null;
}

/**
 * The training payload of one run or a list of runs (samples, session metadata, empty reason, failure), ready for
 * `expect(trajectoryPayload(runs)).toMatchBitwiseSnapshot()`. The `preCollect` records are left out: they carry
 * request timestamps and are the server's bookkeeping, not the trainer's input.
 */
export function trajectoryPayload(runs: SessionParityRun | readonly SessionParityRun[]): PinnedTrajectory[] {
  const list: readonly SessionParityRun[] = Array.isArray(runs) ? runs : [runs as SessionParityRun];
  return list.map((run) => ({
    version: run.version,
    samples: run.samples,
    sessionMetadata: projectSessionMetadata(run.sessionMetadata),
    emptyReason: run.emptyReason,
    failure: run.failure ?? null,
  }));
}

/** Session metadata with the v2 tree nodes' {@link RUNTIME_TREE_NODE_KEYS} replaced by `"<runtime>"` (input unchanged). */
export function projectSessionMetadata(metadata: JsonObject): JsonObject {
  const tree = metadata.tree;
  if (!isJsonObject(tree) || !Array.isArray(tree.nodes)) return metadata;
  const nodes: JsonValue[] = tree.nodes.map((node) => {
    if (!isJsonObject(node)) return node;
    const copy: JsonObject = { ...node };
    for (const key of RUNTIME_TREE_NODE_KEYS) if (copy[key] !== undefined && copy[key] !== null) copy[key] = RUNTIME_PLACEHOLDER;
    return copy;
  });
  return { ...metadata, tree: { ...tree, nodes } };
}
