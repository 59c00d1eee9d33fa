// Reference paths of the samples op, as they were written before the speed paths: the pairwise assembly, the post-
// processor with spreads, the map + writeSafetensorsChunks encoder. Tests compare the server's bytes with these.
import { mergeTurnSamples, truncateTurnSamples, turnSamplesFromRecords, applyAdditionR3, type TrajectoryAssemblyOptions } from "../../../src/server";
import type { PolicyContext } from "../../../src/server/policy";
import { asAssemblyError } from "../../../src/server/samples/assembly-error";
import type { SamplesRequestBody, SessionRecord } from "../../../src/server/types";
import { currentTokenIds, type LinearTrajectory } from "../../../src/server/v1/linear-trajectory";
import { SERVER_OWNED_METADATA_KEYS } from "../../../src/server/v2/default-postprocess";
import type { SamplePicker, SamplePostprocessor } from "../../../src/server/v2/hook-types";
import type { V2SessionState } from "../../../src/server/v2/serving";
import { pathMismatch, v2SessionMetadata, type MismatchCache } from "../../../src/server/v2/session-view";
import { leafDescriptor, readLeafDescriptor, type TreeNodeRow, type V2SessionMetadata } from "../../../src/server/v2/tree-metadata";
import { WIRE_FIELDS_V1, WIRE_FIELDS_V2 } from "../../../src/wire";
import type { JsonObject, JsonValue, Sample } from "../../../src/wire/sample";
import { referenceEncode } from "../../wire/wire-test-helpers";

/**
 * One trajectory's sample by the pairwise pipeline (miles/rollout/session/samples/merge.py: per-record samples,
 * truncate_samples_by_total_tokens, merge_samples; additional R3 after the merge), or null when all truncated.
 */
export function referenceAssembly(records: readonly SessionRecord[], accumulated: readonly number[] | null, options: TrajectoryAssemblyOptions): Sample | null {
  if (records.length === 0) return null;
  return asAssemblyError(() => {
    let turns = turnSamplesFromRecords(records, accumulated, options);
    if (options.maxSeqLen !== null) turns = truncateTurnSamples(turns, options.maxSeqLen, options.decode);
    if (turns.length === 0) return null;
    const sample = mergeTurnSamples(turns, options.decode);
    if (options.replay?.additionR3) applyAdditionR3(sample, records, options.replay);
    return sample;
  });
}

/** The post-processor as it was written with spreads (the reference). */
export function referencePostprocess(samples: Sample[], sessionMetadata: V2SessionMetadata): Sample[] {
  const rowById = new Map<number, TreeNodeRow>(sessionMetadata.tree.nodes.map((row) => [row.id, row]));
  const agent: JsonObject = sessionMetadata.agent ?? {};
  const reward = agent.reward;
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
}

function assemblyOptions(ctx: PolicyContext, body: SamplesRequestBody): TrajectoryAssemblyOptions {
  return { decode: (ids) => ctx.tokenizer.decode(ids), maxTrimTokens: ctx.tito.maxTrimTokens, maxSeqLen: body.max_seq_len, replay: ctx.replay };
}

/** The v1 samples reply as the reference path writes it. */
export function referenceV1Reply(state: LinearTrajectory, body: SamplesRequestBody, ctx: PolicyContext, sessionMetadata: JsonObject): Uint8Array {
  if (state.records.length === 0) return referenceEncode([], sessionMetadata, WIRE_FIELDS_V1, "no_records");
  const sample = referenceAssembly(state.records, currentTokenIds(state), assemblyOptions(ctx, body));
  return referenceEncode(sample === null ? [] : [sample], sessionMetadata, WIRE_FIELDS_V1, sample === null ? "all_truncated" : null);
}

/**
 * The v2 samples reply as the reference path writes it: every leaf assembled alone, tagged, handed to `picker`, then
 * to the spread-built default post-processor (or `postprocessor`).
 */
export function referenceV2Reply(
  state: V2SessionState,
  body: SamplesRequestBody,
  ctx: PolicyContext,
  picker: SamplePicker,
  postprocessor: SamplePostprocessor | null = null,
): Uint8Array {
  const mismatches: MismatchCache = new Map();
  const sessionMetadata = v2SessionMetadata(state, ctx, mismatches);
  if (body.metadata !== undefined && body.metadata !== null) sessionMetadata.agent = body.metadata;
  if (state.forest.nodes.length === 0) return referenceEncode([], sessionMetadata, WIRE_FIELDS_V2, "no_records");
  const material: Sample[] = [];
  for (const leaf of state.forest.leaves()) {
    const sample = referenceAssembly(
      leaf.pathNodes().map((node) => node.record),
      leaf.tokenIds,
      assemblyOptions(ctx, body),
    );
    if (sample === null) continue;
    sample.metadata.accumulated_token_ids = [...leaf.tokenIds];
    sample.metadata.leaf = leafDescriptor(leaf);
    const mismatch = pathMismatch(leaf, ctx, mismatches);
    if (mismatch !== null) sample.metadata.tito_session_mismatch = mismatch;
    material.push(sample);
  }
  if (material.length === 0) return referenceEncode([], sessionMetadata, WIRE_FIELDS_V2, "all_truncated");
  const logger = { logger: ctx.logger };
  const picked = picker([...material], sessionMetadata, logger);
  const samples = postprocessor === null ? referencePostprocess(picked, sessionMetadata) : postprocessor(picked, sessionMetadata, logger);
  return referenceEncode(samples, sessionMetadata, WIRE_FIELDS_V2, samples.length === 0 ? "all_truncated" : null);
}
