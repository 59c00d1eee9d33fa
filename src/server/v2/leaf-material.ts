// The raw material of the v2 samples op: one assembled sample per leaf, tagged with its leaf and snapshot.
// Uses the v1 assembly on each root -> leaf record chain, sharing merged root-side turns and decoded texts between leaves; leaves truncated away are skipped.
import type { Sample } from "../../wire/sample";
import type { PolicyContext } from "../policy";
import { assembleTrajectorySample, PathPrefixMemo, SampleAssemblyError } from "../samples";
import { decodeByContent } from "../samples/decode-memo";
import type { TrajectoryForest } from "./forest";
import { pathMismatch, type MismatchCache } from "./session-view";
import { leafDescriptor } from "./tree-metadata";

/**
 * Assembles each leaf's path (in leaf commit order) into one raw sample whose metadata carries
 * `accumulated_token_ids` (the leaf snapshot), `leaf` and, when computable, `tito_session_mismatch`.
 * @throws SampleAssemblyError naming the leaf when its records cannot form a sample
 */
export function buildLeafMaterial(forest: TrajectoryForest, maxSeqLen: number | null, ctx: PolicyContext, cache?: MismatchCache): Sample[] {
  const material: Sample[] = [];
  // one decode per distinct id list of the op: retried siblings share outputs and observations
  const decode = decodeByContent((ids) => ctx.tokenizer.decode(ids));
  const prefixMemo = new PathPrefixMemo(); // leaves of one tree share their root-side turns
  for (const leaf of forest.leaves()) {
    const path = leaf.pathNodes();
    let sample: Sample | null;
    try {
      sample = assembleTrajectorySample(
        path.map((node) => node.record),
        leaf.tokenIds,
        { decode, maxTrimTokens: ctx.tito.maxTrimTokens, maxSeqLen, prefixMemo, replay: ctx.replay },
      ).sample;
    } catch (error) {
      // The 422 body is the assembly text alone, as in Python; which leaf failed goes to the server log.
      if (error instanceof SampleAssemblyError)
        ctx.logger.warn(`samples op: leaf ${leaf.id} (path ${path.map((node) => node.id).join(",")}) cannot be assembled`);
      throw error;
    }
    if (sample === null) continue;
    sample.metadata.accumulated_token_ids = [...leaf.tokenIds];
    sample.metadata.leaf = leafDescriptor(leaf);
    const mismatch = pathMismatch(leaf, ctx, cache);
    if (mismatch !== null) sample.metadata.tito_session_mismatch = mismatch;
    material.push(sample);
  }
  return material;
}
