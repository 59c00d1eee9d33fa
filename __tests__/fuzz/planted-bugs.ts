// Bugs planted into the reference servers through their public options, for proving the fuzzer finds and shrinks them.
// Each is a realistic mistake in a rewritten session server: picker, attach search, rollback bound, loss mask.
import {
  applyRollback,
  createV2Policy,
  defaultPostprocess,
  linearPolicy,
  SessionHttpError,
  type AnyTrajectoryPolicy,
  type LinearTrajectory,
  type SamplePicker,
  type SamplePostprocessor,
  type TrajectoryPolicy,
  type V2SessionState,
  type V2Plan,
  type LinearPlan,
} from "../../src/server";
import type { FuzzEnvironmentOptions } from "../../src/fuzz";

/** v2 picker that keeps every leaf, superseded retries included. */
export const keepSupersededLeaves: SamplePicker = (samples) => samples;

/** v2 policy whose attach search lands one node above the right one (the found node's last message never matches). */
function shallowAttachPolicy(): AnyTrajectoryPolicy {
  const base = createV2Policy();
  const planted: TrajectoryPolicy<V2SessionState, V2Plan> = {
    ...base,
    prepare(state, request, ctx) {
      const point = state.forest.findAttachPoint(request.messages, ctx.messagesMatch);
      if (point.node === null) return base.prepare(state, request, ctx);
      const skipped = point.node.deltaMessages[point.node.deltaMessages.length - 1];
      return base.prepare(state, request, { ...ctx, messagesMatch: (stored, incoming) => stored !== skipped && ctx.messagesMatch(stored, incoming) });
    },
  };
  return planted;
}

/** v1 policy that accepts rewinds of two (or more) generated turns by dropping turns until the rollback fits. */
function deepRollbackV1Policy(): AnyTrajectoryPolicy {
  const planted: TrajectoryPolicy<LinearTrajectory, LinearPlan> = {
    ...linearPolicy,
    prepare(state, request, ctx) {
      for (;;) {
        try {
          return linearPolicy.prepare(state, request, ctx);
        } catch (error) {
          const n = state.checkpoints.length;
          if (!(error instanceof SessionHttpError) || error.status !== 400 || !error.message.startsWith("rollback failed") || n === 0) throw error;
          applyRollback(state, { keepCheckpoints: n - 1, keepMessages: n > 1 ? state.checkpointMessageEnds[n - 2] : 0, discarded: 1 });
        }
      }
    },
  };
  return planted;
}

const IM_START = 151644;
const IM_END = 151645;
const ASSISTANT = 77091;
const NEWLINE = 198;
const THINK = 151667;

/**
 * v2 post-processor that loses the loss mask of client-injected assistant turns: after the default post-processing,
 * an assistant turn inside the observation tokens (header masked, content masked) gets loss 1, as if generated.
 */
const dropInjectedAssistantMask: SamplePostprocessor = (samples, sessionMetadata, context) => {
  const out = defaultPostprocess(samples, sessionMetadata, context);
  for (const sample of out) {
    if (sample.loss_mask === null) continue;
    const mask = [...sample.loss_mask];
    const start = sample.tokens.length - sample.response_length;
    for (let i = start; i + 3 < sample.tokens.length; i += 1) {
      const header = sample.tokens[i] === IM_START && sample.tokens[i + 1] === ASSISTANT && sample.tokens[i + 2] === NEWLINE;
      // Both kinds of turn open with an empty think block; a generated one continues with loss-1 tokens.
      const content = sample.tokens[i + 3] === THINK ? i + 7 : i + 3;
      if (!header || content >= sample.tokens.length || mask[content - start] !== 0) continue;
      let end = content;
      while (end < sample.tokens.length && sample.tokens[end] !== IM_END && mask[end - start] === 0) end += 1;
      if (sample.tokens[end] !== IM_END) continue;
      for (let j = content; j <= end; j += 1) mask[j - start] = 1;
    }
    sample.loss_mask = mask;
  }
  return out;
};

/** The four planted bugs as fuzz environment options. */
export const PLANTED_BUGS: ReadonlyArray<{ name: string; options: () => FuzzEnvironmentOptions }> = [
  { name: "a v2 picker that keeps superseded retry leaves", options: () => ({ v2Server: { samplePicker: keepSupersededLeaves } }) },
  { name: "a v2 policy that attaches one node too shallow", options: () => ({ v2Server: { policy: shallowAttachPolicy() } }) },
  { name: "a v1 that accepts a two-step rewind", options: () => ({ v1Server: { policy: deepRollbackV1Policy() } }) },
  {
    name: "an assembly that drops the loss mask of an injected assistant turn",
    options: () => ({ v2Server: { samplePostprocessor: dropInjectedAssistantMask } }),
  },
];
