// The read side of a v2 session: the `GET` view (active path records + metadata) and per-path mismatch reports.
// Read-only over the forest; tokenization failures in the optional report are logged, never fatal.
import type { JsonObject } from "../../wire/sample";
import type { PolicyContext, SessionView } from "../policy";
import { computeSessionMismatch, MismatchMemo, recordTools, trajectoryMetadataWithReport } from "../session-metadata";
import type { TrajectoryNode } from "./forest";
import { pathInputsName } from "./path-keys";
import type { V2SessionState } from "./serving";
import { buildTreeMetadata, type V2SessionMetadata } from "./tree-metadata";

/** Mismatch reports already computed during one operation, by node id (the render is the costly part). */
export type MismatchCache = Map<number, JsonObject[] | null>;

/** Reports per node across operations: a committed node and its path never change, so neither does its report. */
const nodeReports = new MismatchMemo<TrajectoryNode>();

/**
 * `tito_session_mismatch` for the path root -> `leaf`: the canonical render of the path messages compared
 * with the leaf's snapshot (server default kwargs, tools of the leaf's request). Null when it cannot run.
 * Computed once per node and server context; `cache` additionally shares one copy within an operation. The render
 * memo keys the path by its nodes' ids ({@link pathInputsName}): each node's messages are serialized once, ever.
 */
export function pathMismatch(leaf: TrajectoryNode, ctx: PolicyContext, cache?: MismatchCache): JsonObject[] | null {
  const known = cache?.get(leaf.id);
  if (known !== undefined) return known;
  const report = nodeReports.report(leaf, [ctx], () => {
    const tools = recordTools(leaf.record);
    return computeSessionMismatch(ctx, leaf.pathMessages(), leaf.tokenIds, tools, pathInputsName(leaf, tools));
  });
  cache?.set(leaf.id, report);
  return report;
}

/** Session metadata of the active path: mismatch (when computable), token ids, trim allowance and the tree. */
export function v2SessionMetadata(state: V2SessionState, ctx: PolicyContext, cache?: MismatchCache): V2SessionMetadata {
  const leaf = state.activeLeaf;
  const mismatch = leaf === null ? null : pathMismatch(leaf, ctx, cache);
  const head = trajectoryMetadataWithReport(ctx, mismatch, leaf === null ? [] : leaf.tokenIds);
  return { ...head, tree: buildTreeMetadata(state.forest) } as V2SessionMetadata;
}

/** The `GET /sessions/{id}` view: the active path's records and the session metadata. */
export function viewV2(state: V2SessionState, ctx: PolicyContext): SessionView {
  const records = state.activeLeaf === null ? [] : state.activeLeaf.pathNodes().map((node) => node.record);
  return { records, metadata: v2SessionMetadata(state, ctx) };
}
