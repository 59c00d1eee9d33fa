// The raw material of the v2 samples op: one assembled sample per leaf, tagged with its leaf and snapshot.
// Uses the v1 assembly on each root -> leaf record chain, sharing merged root-side turns and decoded texts between leaves; leaves truncated away are skipped.
import { Sample } from "../../wire/sample";
import type { PolicyContext } from "../policy";
import { assembleTrajectorySample, foldTrajectorySample, PathPrefixMemo, SampleAssemblyError } from "../samples";
import { decodeByContent } from "../samples/decode-memo";
import type { TrajectoryForest, TrajectoryNode } from "./forest";
import { pathMismatch, type MismatchCache } from "./session-view";
import { leafDescriptor } from "./tree-metadata";

/** The raw leaf samples of one samples op, some of which may stand in for samples not written yet. */
export interface LeafMaterial {
  /** One sample per leaf not truncated away, in leaf commit order. */
  readonly samples: Sample[];
  /**
   * `picked` (a subset of {@link samples}) with each stand-in replaced by the sample it stands for, written now:
   * what `samples` would have held in its place had no leaf been deferred.
   */
  readonly complete: (picked: readonly Sample[]) => Sample[];
}

/**
 * Assembles each leaf's path (in leaf commit order) into one raw sample whose metadata carries
 * `accumulated_token_ids` (the leaf snapshot), `leaf` and, when computable, `tito_session_mismatch`.
 *
 * `defer` names leaves whose sample the caller will most likely never read but `metadata.leaf` of (the leaves the
 * default picker drops). Without `maxSeqLen` and additional-R3 patches, such a leaf's records are still read,
 * aligned and merged here (every check, in leaf order: a broken record fails the op as it would otherwise), but its
 * sample stands as a bare Sample whose metadata holds only `leaf` until {@link LeafMaterial.complete} writes it: the
 * merged arrays, the snapshot copy and the mismatch report (the costly canonical render's name and comparison).
 * @throws SampleAssemblyError naming the leaf when its records cannot form a sample
 */
export function buildLeafMaterial(
  forest: TrajectoryForest,
  maxSeqLen: number | null,
  ctx: PolicyContext,
  cache?: MismatchCache,
  defer?: (leaf: TrajectoryNode) => boolean,
): LeafMaterial {
  const samples: Sample[] = [];
  const deferred = new Map<Sample, () => Sample>();
  // one decode per distinct id list of the op: retried siblings share outputs and observations
  const decode = decodeByContent((ids) => ctx.tokenizer.decode(ids));
  const prefixMemo = new PathPrefixMemo(); // leaves of one tree share their root-side turns
  const mayDefer = defer !== undefined && maxSeqLen === null && ctx.replay?.additionR3 !== true;
  const options = { decode, maxTrimTokens: ctx.tito.maxTrimTokens, maxSeqLen, prefixMemo, replay: ctx.replay, extras: ctx.sampleExtras };
  for (const leaf of forest.leaves()) {
    const path = leaf.pathNodes();
    const records = path.map((node) => node.record);
    let sample: Sample | null;
    try {
      if (mayDefer && defer(leaf)) {
        const write = foldTrajectorySample(records, leaf.tokenIds, options);
        if (write !== null) {
          const standIn = new Sample();
          standIn.metadata = { leaf: leafDescriptor(leaf) };
          deferred.set(standIn, () => finishLeafSample(write(), leaf, ctx, cache));
          samples.push(standIn);
        }
        continue;
      }
      sample = assembleTrajectorySample(records, leaf.tokenIds, options).sample;
    } catch (error) {
      // The 422 body is the assembly text alone, as in Python; which leaf failed goes to the server log.
      if (error instanceof SampleAssemblyError)
        ctx.logger.warn(`samples op: leaf ${leaf.id} (path ${path.map((node) => node.id).join(",")}) cannot be assembled`);
      throw error;
    }
    if (sample !== null) samples.push(finishLeafSample(sample, leaf, ctx, cache));
  }
  return {
    samples,
    complete: (picked) =>
      picked.map((sample) => {
        const write = deferred.get(sample);
        return write === undefined ? sample : write();
      }),
  };
}

/** The leaf's keys added to its assembled sample's metadata, in wire order: snapshot, descriptor, mismatch report. */
function finishLeafSample(sample: Sample, leaf: TrajectoryNode, ctx: PolicyContext, cache: MismatchCache | undefined): Sample {
  sample.metadata.accumulated_token_ids = [...leaf.tokenIds];
  sample.metadata.leaf = leafDescriptor(leaf);
  const mismatch = pathMismatch(leaf, ctx, cache);
  if (mismatch !== null) sample.metadata.tito_session_mismatch = mismatch;
  return sample;
}
