// The v1 trajectory policy: linear history, rollback by at most one generated turn, one sample per session.
// Plugs the pure LinearTrajectory into the shell's prepare/commit/view/collectSamples seam.
import { WIRE_FIELDS_V1 } from "../../wire/samples-codec";
import { assertAppendOnly, matchedPrefixLength } from "../append-only";
import type { PolicyContext, PreparedTurn, SessionView, TrajectoryPolicy } from "../policy";
import { assembleTrajectorySample } from "../samples";
import { describeSpellingBreak, describeSplitTurnBreak, firstSpellingBreak, firstSplitTurnBreak, spellingTolerant } from "../replay-diagnosis";
import { computeSessionMismatch, MismatchMemo, recordTools, trajectoryMetadataWithReport } from "../session-metadata";
import { assertRenderableAssistantContent } from "../chat-request";
import { titoStep } from "../tito-step";
import { assertStoredPrefix } from "../token-prefix";
import type { CompletedTurn, NormalizedChatRequest, SamplesRequestBody, SamplesResult } from "../types";
import { applyRollback, appendTurn, createLinearTrajectory, currentTokenIds, findRollback, LinearTrajectory } from "./linear-trajectory";

/** What v1 remembers between prepare and commit: the turn count the prompt was built on. */
export interface LinearPlan {
  expectedTurns: number;
}

/**
 * Mismatch reports per session state, valid while the history, the token checkpoint and the tools are the very
 * arrays (and lengths) they were computed from: every turn or rollback replaces them, so the preCollect GET and
 * the samples op render the history once, and a report never outlives the trajectory it describes.
 */
const mismatchReports = new MismatchMemo<LinearTrajectory>();

function view(state: LinearTrajectory, ctx: PolicyContext): SessionView {
  const tokenIds = currentTokenIds(state);
  const messages = state.messages;
  const tools = recordTools(state.records[state.records.length - 1]);
  const mismatch = mismatchReports.report(state, [ctx, messages, messages.length, tokenIds, tokenIds.length, tools], () =>
    computeSessionMismatch(ctx, messages, tokenIds, tools),
  );
  return { records: [...state.records], metadata: trajectoryMetadataWithReport(ctx, mismatch, tokenIds) };
}

/**
 * Warns when a rollback happens only because the client re-spelled a replayed assistant tool call or re-sent the
 * turn in pieces: with that message accepted, the request would have extended the whole stored history. Runs only
 * on a rollback.
 */
function warnIfOnlySpelling(state: LinearTrajectory, request: NormalizedChatRequest, ctx: PolicyContext): void {
  const split = firstSplitTurnBreak(state.messages, request.messages, ctx.messagesMatch);
  if (split !== null) {
    ctx.logger.warn(
      `v1 rollback: ${describeSplitTurnBreak(split.index, split.form)}. The session discards the stored turn and ` +
        `re-renders the pieces, so the trajectory no longer holds the model's own tokens for it`,
    );
    return;
  }
  if (matchedPrefixLength(state.messages, request.messages, spellingTolerant(ctx.messagesMatch)) < state.messages.length) return;
  const found = firstSpellingBreak(state.messages, request.messages, ctx.messagesMatch);
  if (found === null) return;
  ctx.logger.warn(
    `v1 rollback: ${describeSpellingBreak(found.index, found.difference)}. The session discards the stored turn and ` +
      `re-renders it, so the trajectory no longer holds the model's own tokens for it`,
  );
}

/**
 * When a request about to be refused for assistant content parts re-sends a stored turn in pieces that the
 * `split_assistant_turn` matcher would read as that turn: the sentence naming it (also logged at warn level).
 */
function splitTurnAdvice(state: LinearTrajectory, request: NormalizedChatRequest, ctx: PolicyContext): string | null {
  const split = firstSplitTurnBreak(state.messages, request.messages, ctx.messagesMatch);
  if (split === null) return null;
  const advice = describeSplitTurnBreak(split.index, split.form);
  ctx.logger.warn(`v1 refused the request (400): ${advice}. The stored history is kept as it was`);
  return advice;
}

/** The v1 policy (SPEC §7.1). */
export const linearPolicy: TrajectoryPolicy<LinearTrajectory, LinearPlan> = {
  version: "v1",
  wireFields: WIRE_FIELDS_V1,
  createState: createLinearTrajectory,

  prepare(state, request: NormalizedChatRequest, ctx): PreparedTurn<LinearPlan> {
    // The retry rollback is applied first and stays applied: a request refused afterwards (a disallowed appended
    // role, a tokenizer failure) leaves the session rolled back, as the Python server does (its v1 pins characterize
    // this order), so a later resend trains what Python trains. Only the deep-rollback refusal and the content-parts
    // refusal change nothing.
    const rollback = findRollback(state, request.messages, ctx.messagesMatch);
    // Deviation (docs/PROTOCOL.md): assistant content parts are refused before the rollback, so nothing stored is lost.
    const renderFrom = rollback !== null ? rollback.keepMessages : state.checkpoints.length === 0 ? 0 : state.messages.length;
    assertRenderableAssistantContent(request.messages, renderFrom, () => splitTurnAdvice(state, request, ctx));
    if (rollback !== null) {
      warnIfOnlySpelling(state, request, ctx);
      ctx.logger.info?.(`rolling back: ${state.checkpoints.length} -> ${rollback.keepCheckpoints} checkpoints, messages[:${rollback.keepMessages}]`);
      applyRollback(state, rollback);
    }
    let promptIds: number[];
    if (state.checkpoints.length === 0) {
      promptIds = titoStep("render", () => ctx.tito.renderPromptIds(request.messages, request.tools, request.chatTemplateKwargs));
    } else {
      assertAppendOnly(state.messages, request.messages, ctx.tito.allowedAppendRoles, ctx.messagesMatch);
      const effective = [...state.messages, ...request.messages.slice(state.messages.length)];
      promptIds = titoStep("merge", () => ctx.tito.mergeTokens(state.messages, effective, currentTokenIds(state), request.tools, request.chatTemplateKwargs));
    }
    return { promptIds, plan: { expectedTurns: state.checkpoints.length }, checkpointIds: currentTokenIds(state) };
  },

  commit(state, plan, request, turn: CompletedTurn, ctx): boolean {
    if (state.checkpoints.length !== plan.expectedTurns) {
      ctx.logger.warn(
        `session state changed during the upstream call (expected ${plan.expectedTurns} generated turns, found ${state.checkpoints.length}); skipping the state update`,
      );
      return false;
    }
    const tokenIds = [...turn.promptIds, ...turn.completionIds];
    assertStoredPrefix(currentTokenIds(state), tokenIds, ctx.tito.maxTrimTokens);
    appendTurn(state, request.messages, turn.assistantMessage, tokenIds, turn.record);
    return true;
  },

  view,

  collectSamples(state, body: SamplesRequestBody, ctx): SamplesResult {
    const sessionMetadata = view(state, ctx).metadata;
    const { sample, emptyReason } = assembleTrajectorySample(state.records, currentTokenIds(state), {
      decode: (ids) => ctx.tokenizer.decode(ids),
      maxTrimTokens: ctx.tito.maxTrimTokens,
      maxSeqLen: body.max_seq_len,
      replay: ctx.replay,
    });
    return { samples: sample ? [sample] : [], sessionMetadata, emptyReason };
  },
};

/** A v1 policy instance (stateless; state lives per session). */
export function createV1Policy(): TrajectoryPolicy<LinearTrajectory, LinearPlan> {
  return linearPolicy;
}
