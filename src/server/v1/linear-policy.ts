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
import { checkMilesRevision } from "../miles-revision";
import type { CompletedTurn, MilesRevision, NormalizedChatRequest, SamplesRequestBody, SamplesResult } from "../types";
import {
  applyRollback,
  appendTurn,
  createLinearTrajectory,
  currentTokenIds,
  findRollback,
  LinearTrajectory,
  rollbackBase,
  type RollbackBase,
  type RollbackTarget,
} from "./linear-trajectory";

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
 * on a rollback; `matched` is the rollback search's matched prefix, so the pairs before it are not compared again
 * (under `ctx.messagesMatch` they matched, so its spelling-tolerant widening matches them too).
 */
function warnIfOnlySpelling(state: LinearTrajectory, request: NormalizedChatRequest, ctx: PolicyContext, matched: number): void {
  const split = firstSplitTurnBreak(state.messages, request.messages, ctx.messagesMatch, matched);
  if (split !== null) {
    ctx.logger.warn(
      `v1 rollback: ${describeSplitTurnBreak(split.index, split.form)}. The session discards the stored turn and ` +
        `re-renders the pieces, so the trajectory no longer holds the model's own tokens for it`,
    );
    return;
  }
  if (matchedPrefixLength(state.messages, request.messages, spellingTolerant(ctx.messagesMatch), matched) < state.messages.length) return;
  const found = firstSpellingBreak(state.messages, request.messages, ctx.messagesMatch, matched);
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

/**
 * The prompt ids of a request built on `base` (the stored history, or what a rollback keeps of it). `matched` is the
 * rollback search's matched prefix of the stored history (which `base` keeps at most), so the append-only check
 * compares no pair again. Pure.
 */
function promptOn(base: RollbackBase, request: NormalizedChatRequest, ctx: PolicyContext, matched: number): number[] {
  if (base.turns === 0) {
    return titoStep("render", () => ctx.tito.renderPromptIds(request.messages, request.tools, request.chatTemplateKwargs));
  }
  assertAppendOnly(base.messages, request.messages, ctx.tito.allowedAppendRoles, ctx.messagesMatch, matched);
  const effective = [...base.messages, ...request.messages.slice(base.messages.length)];
  return titoStep("merge", () => ctx.tito.mergeTokens(base.messages, effective, base.tokenIds, request.tools, request.chatTemplateKwargs));
}

/** Options of {@link createV1Policy}. */
export interface V1PolicyOptions {
  /**
   * Which miles revision a refused retry follows (default `"3311"`: validated and rendered on the rolled-back view
   * first, so a refusal keeps the history; `"31f1ca96"`: the rollback is applied first and a refusal keeps it).
   */
  milesRevision?: MilesRevision;
}

function prepareLinear(revision: MilesRevision) {
  return (state: LinearTrajectory, request: NormalizedChatRequest, ctx: PolicyContext): PreparedTurn<LinearPlan> => {
    // The deep-rollback refusal (more than one generated turn) throws here and changes nothing in either revision.
    const rollback = findRollback(state, request.messages, ctx.messagesMatch);
    // Deviation (docs/PROTOCOL.md): assistant content parts are refused before anything changes, in either revision.
    const renderFrom = rollback !== null ? rollback.keepMessages : state.checkpoints.length === 0 ? 0 : state.messages.length;
    assertRenderableAssistantContent(request.messages, renderFrom, () => splitTurnAdvice(state, request, ctx));
    // The rollback search compared the stored history with the request: none of its matched pairs is compared again.
    const matched = rollback !== null ? rollback.matchedMessages : state.checkpoints.length === 0 ? 0 : state.messages.length;
    if (rollback !== null) warnIfOnlySpelling(state, request, ctx, matched);
    const logRollback = (target: RollbackTarget): void =>
      ctx.logger.info?.(`rolling back: ${state.checkpoints.length} -> ${target.keepCheckpoints} checkpoints, messages[:${target.keepMessages}]`);
    if (revision === "31f1ca96" && rollback !== null) {
      // The snapshot's order: the rollback is applied first and stays applied when the request is refused afterwards
      // (a disallowed appended role, a tokenizer failure); mirrors test_sessions_v1_pins.py at 31f1ca96.
      logRollback(rollback);
      applyRollback(state, rollback);
    }
    // miles PR #3311: select the checkpoint without mutation, validate and render on what it keeps, then roll back.
    const base = rollbackBase(state, revision === "31f1ca96" ? null : rollback);
    const promptIds = promptOn(base, request, ctx, matched);
    if (revision !== "31f1ca96" && rollback !== null) {
      logRollback(rollback);
      applyRollback(state, rollback);
    }
    const baseRecord = state.records.length > 0 ? state.records[state.records.length - 1] : null;
    return { promptIds, plan: { expectedTurns: state.checkpoints.length }, checkpointIds: currentTokenIds(state), baseRecord };
  };
}

function buildLinearPolicy(revision: MilesRevision): TrajectoryPolicy<LinearTrajectory, LinearPlan> {
  return { ...linearPolicy, prepare: prepareLinear(revision) };
}

/** The v1 policy (SPEC §7.1), following miles with PR #3311 (see {@link V1PolicyOptions}). */
export const linearPolicy: TrajectoryPolicy<LinearTrajectory, LinearPlan> = {
  version: "v1",
  wireFields: WIRE_FIELDS_V1,
  createState: createLinearTrajectory,

  prepare: prepareLinear("3311"),

  commit(state, plan, request, turn: CompletedTurn, ctx): boolean {
    if (state.checkpoints.length !== plan.expectedTurns) {
      ctx.logger.warn(
        `session state changed during the upstream call (expected ${plan.expectedTurns} generated turns, found ${state.checkpoints.length}); skipping the state update`,
      );
      return false;
    }
    const tokenIds = turn.promptIds.concat(turn.completionIds); // concat sizes the array exactly (a spread leaves growth slack)
    assertStoredPrefix(currentTokenIds(state), tokenIds, ctx.tito.maxTrimTokens);
    appendTurn(state, request.messages, turn.assistantMessage, tokenIds, turn.record);
    return true;
  },

  view,

  storedRecords: (state) => state.records,

  samplesFootprint(state) {
    const tokens = currentTokenIds(state).length;
    return { samples: state.records.length > 0 ? 1 : 0, sampleTokens: tokens, viewTokens: tokens, carriesRequestMetadata: false };
  },

  collectSamples(state, body: SamplesRequestBody, ctx): SamplesResult {
    const sessionMetadata = view(state, ctx).metadata;
    const { sample, emptyReason } = assembleTrajectorySample(state.records, currentTokenIds(state), {
      decode: (ids) => ctx.tokenizer.decode(ids),
      maxTrimTokens: ctx.tito.maxTrimTokens,
      maxSeqLen: body.max_seq_len,
      replay: ctx.replay,
      extras: ctx.sampleExtras,
    });
    return { samples: sample ? [sample] : [], sessionMetadata, emptyReason };
  },
};

/** A v1 policy instance (stateless; state lives per session) following `options.milesRevision` (default `"3311"`). */
export function createV1Policy(options: V1PolicyOptions = {}): TrajectoryPolicy<LinearTrajectory, LinearPlan> {
  const revision = checkMilesRevision(options.milesRevision);
  return revision === "3311" ? linearPolicy : buildLinearPolicy(revision);
}
