// The v2 trajectory policy: tree serving plus the per-leaf samples op with picker and post-processor hooks.
// Plugs the pure forest, serving and hook modules into the shell's prepare/commit/view/collectSamples seam.
import { WIRE_FIELDS_V2 } from "../../wire/samples-codec";
import type { TrajectoryPolicy } from "../policy";
import { checkMilesRevision } from "../miles-revision";
import type { MilesRevision, SamplesResult } from "../types";
import type { JsonObject } from "../../wire/sample";
import type { HookSpec, SamplePicker, SamplePostprocessor } from "./hook-types";
import { dropRetries, isSupersededLeaf } from "./drop-retries";
import { loadSampleHooks, runSampleHooks } from "./hooks";
import { buildLeafMaterial } from "./leaf-material";
import { commitV2Turn, createV2State, prepareV2Turn, type V2Plan, type V2SessionState } from "./serving";
import { type MismatchCache, v2SessionMetadata, viewV2 } from "./session-view";
import type { V2SessionMetadata } from "./tree-metadata";

/** Options of {@link createV2Policy}. */
export interface V2PolicyOptions {
  /** Picker (default `dropRetries`): a function or a `"module/path#exportName"` string. */
  samplePicker?: HookSpec<SamplePicker>;
  /** Post-processor (default `defaultPostprocess`): a function or a `"module/path#exportName"` string. */
  samplePostprocessor?: HookSpec<SamplePostprocessor>;
  /**
   * Which miles revision the view follows (default `"3311"`: the last committed node, PR #3258; `"31f1ca96"`: a
   * request moves the view to its attach point when positioned, and a refusal afterwards leaves it there).
   */
  milesRevision?: MilesRevision;
}

/**
 * Builds the v2 (tree) policy. Hooks are resolved now, so an async, missing or non-function hook is
 * refused when the server starts.
 * @throws Error naming the hook that cannot be loaded
 */
export function createV2Policy(options: V2PolicyOptions = {}): TrajectoryPolicy<V2SessionState, V2Plan> {
  const hooks = loadSampleHooks(options);
  const moveView = checkMilesRevision(options.milesRevision) === "31f1ca96";
  // The default picker reads only `metadata.leaf` and the tree: the leaves it drops are checked, never written.
  const deferLeaf = hooks.picker.fn === dropRetries ? isSupersededLeaf : undefined;
  return {
    version: "v2",
    wireFields: WIRE_FIELDS_V2,
    createState: () => createV2State(),
    prepare: (state, request, ctx) => prepareV2Turn(state, request, ctx, moveView),
    commit(state, plan, request, turn, ctx) {
      commitV2Turn(state, plan, request, turn, ctx);
      return true;
    },
    view: viewV2,
    storedRecords: (state) => state.forest.nodes.map((node) => node.record),
    samplesFootprint(state) {
      let samples = 0;
      let sampleTokens = 0;
      for (const node of state.forest.nodes) {
        if (node.children.length > 0) continue;
        samples += 1;
        sampleTokens += node.tokenCount;
      }
      return { samples, sampleTokens, viewTokens: state.activeLeaf?.tokenCount ?? 0, carriesRequestMetadata: true };
    },
    collectSamples(state, body, ctx): SamplesResult {
      const mismatches: MismatchCache = new Map(); // the active leaf's report serves both the session and its sample
      const sessionMetadata = withAgent(v2SessionMetadata(state, ctx, mismatches), body.metadata);
      if (state.forest.nodes.length === 0) return { samples: [], sessionMetadata, emptyReason: "no_records" };
      const material = buildLeafMaterial(state.forest, body.max_seq_len, ctx, mismatches, deferLeaf);
      if (material.samples.length === 0) return { samples: [], sessionMetadata, emptyReason: "all_truncated" };
      const samples = runSampleHooks(material.samples, sessionMetadata, hooks, { logger: ctx.logger }, material.complete);
      return { samples, sessionMetadata, emptyReason: samples.length === 0 ? "all_truncated" : null };
    },
  };
}

/**
 * The session metadata with the agent's `metadata` as `agent` (when given): the keys it has, in order, then `agent`,
 * in a fresh object. (Adding a key to the object a spread built, as the session metadata is, costs V8 about a
 * microsecond; writing the few keys into an empty object costs a tenth of that.)
 */
function withAgent(metadata: V2SessionMetadata, agent: JsonObject | null | undefined): V2SessionMetadata {
  if (agent === undefined || agent === null) return metadata;
  const out: Record<PropertyKey, unknown> = {};
  for (const key of Object.keys(metadata)) {
    if (key === "__proto__") Object.defineProperty(out, key, { value: metadata[key], writable: true, enumerable: true, configurable: true });
    else out[key] = metadata[key];
  }
  for (const symbol of Object.getOwnPropertySymbols(metadata)) {
    if (Object.prototype.propertyIsEnumerable.call(metadata, symbol)) out[symbol] = (metadata as Record<symbol, unknown>)[symbol];
  }
  out.agent = agent;
  return out as V2SessionMetadata;
}
