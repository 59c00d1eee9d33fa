// Always-branch serving over the forest: position a request, build its TITO prompt, commit the generation.
// Runs under the session lock held by the shell; a request never destroys stored history, it only adds nodes.
import type { ChatMessage } from "../../tokenizer/types";
import type { PolicyContext } from "../policy";
import { assertAllowedSuffixRoles, matchedPrefixLength } from "../append-only";
import { assertRenderableAssistantContent } from "../chat-request";
import { splitAssistantTurnMessageMatches } from "../message-matchers";
import {
  describeSpellingBreak,
  describeSplitTurnBreak,
  firstSpellingBreak,
  firstSplitTurnBreak,
  spellingTolerant,
  type SplitTurnForm,
  toolCallSpellingDifference,
} from "../replay-diagnosis";
import { joinSplitAssistantTurns } from "../split-turns";
import { titoStep } from "../tito-step";
import { assertStoredPrefix } from "../token-prefix";
import { type CompletedTurn, type NormalizedChatRequest, SessionHttpError, type SessionRecord } from "../types";
import { type AttachPoint, ForestCapacityError, TrajectoryForest, type TrajectoryNode } from "./forest";

/** One v2 session: its forest and the head of the view that `GET` and the mismatch report show. */
export interface V2SessionState {
  readonly forest: TrajectoryForest;
  /**
   * The head of the view; the active path is root -> activeLeaf. Following miles PR #3258 (the default) it is the
   * last committed node, null before the first commit. Under `milesRevision: "31f1ca96"` a request also moves it to
   * its attach point as soon as it is positioned (null for a request that opens a new root).
   */
  activeLeaf: TrajectoryNode | null;
}

/** What `prepare` hands to `commit`: the parent captured before the upstream call. */
export interface V2Plan {
  /** The attach node (null: the generation becomes a new root). */
  readonly parent: TrajectoryNode | null;
  /** Request messages covered by the parent's path; the rest plus the reply form the new node's delta. */
  readonly matchedMessages: number;
}

/** A fresh, empty session state. */
export function createV2State(cap?: number): V2SessionState {
  return { forest: new TrajectoryForest(cap), activeLeaf: null };
}

/**
 * Positions a request and returns its prompt ids. Nothing in the state changes (miles PR #3258: the view follows the
 * last committed node, so a request refused here or upstream leaves GET and the samples op where they were).
 * With `moveView` (`milesRevision: "31f1ca96"`) the view moves to the attach point as soon as the request is
 * positioned, as the snapshot's Python server does: a request refused afterwards (a disallowed role, a tokenizer
 * failure, a failed upstream call) leaves GET and the samples op on the attach node (mirrors
 * tests/fast/router/test_sessions_v2.py::test_disallowed_append_role_400_with_rollback_side_effect at 31f1ca96).
 * The 409 for a truncated node, the 422 at the node cap and the 400 for assistant content parts come first and
 * change nothing in either revision.
 * @throws SessionHttpError 422 (node cap), 409 (extending a truncated generation), 400 (assistant content parts,
 *   disallowed role), 500 (tokenizer failure).
 */
export function prepareV2Turn(
  state: V2SessionState,
  request: NormalizedChatRequest,
  ctx: PolicyContext,
  moveView = false,
): { promptIds: number[]; plan: V2Plan; checkpointIds: readonly number[]; baseRecord: SessionRecord | null } {
  // Deviation (docs/PROTOCOL.md): refused before the upstream call; Python calls the backend, then fails the commit.
  if (state.forest.full) throw new SessionHttpError(422, new ForestCapacityError(state.forest.cap).message);
  const refused: Array<[ChatMessage, ChatMessage]> = [];
  const point = state.forest.findAttachPoint(request.messages, ctx.messagesMatch, refused);
  if (point.node !== null && point.node.truncated) {
    throw new SessionHttpError(
      409,
      "truncated generation cannot be extended: the matched node ended with finish_reason='length' and truncation " +
        "closes that path for good; branch before the cut instead",
    );
  }
  if (point.node !== state.activeLeaf && ctx.logger.info) {
    ctx.logger.info(
      `v2 branching: request of ${request.messages.length} messages attaches at ${point.node === null ? "a new root" : `node ${point.node.id}`} ` +
        `(matched ${point.matchedMessages}, best overlap ${point.bestOverlap}, ${state.forest.nodes.length} nodes)`,
    );
  }
  // Deviation (docs/PROTOCOL.md): assistant content parts are refused before the view moves, so the session is as it was.
  assertRenderableAssistantContent(request.messages, point.node === null ? 0 : point.matchedMessages, () => splitTurnAdvice(state, point, request, ctx));
  if (point.node !== state.activeLeaf) warnIfOnlySpelling(state, point, request, ctx, refused);
  if (moveView) state.activeLeaf = point.node;
  const plan: V2Plan = { parent: point.node, matchedMessages: point.matchedMessages };
  const promptIds = promptFor(point.node, point.matchedMessages, request, ctx);
  return { promptIds, plan, checkpointIds: point.node === null ? [] : point.node.tokenIds, baseRecord: point.node === null ? null : point.node.record };
}

/**
 * Warns when a request lands at a new root (or a shallower node) only because the client re-spelled a replayed
 * assistant tool call: the spelling-tolerant matcher would have attached it deeper. Runs only when branching.
 * `refused` holds the pairs the positioning search refused: when the spelling-tolerant widening accepts none of
 * them, its search would walk the very same pairs to the very same attach point, so it is not run.
 */
function warnIfOnlySpelling(
  state: V2SessionState,
  point: AttachPoint,
  request: NormalizedChatRequest,
  ctx: PolicyContext,
  refused: ReadonlyArray<readonly [ChatMessage, ChatMessage]>,
): void {
  if (state.forest.nodes.length === 0) return;
  if (warnIfSplitTurn(state, point, request, ctx)) return;
  if (!refused.some(([stored, incoming]) => toolCallSpellingDifference(stored, incoming) !== null)) return;
  const tolerant = state.forest.findAttachPoint(request.messages, spellingTolerant(ctx.messagesMatch));
  if (tolerant.node === null || tolerant.matchedMessages <= point.matchedMessages) return;
  const path = tolerant.node.pathMessages();
  if (matchedPrefixLength(path, request.messages, spellingTolerant(ctx.messagesMatch)) < path.length) return;
  const found = firstSpellingBreak(path, request.messages, ctx.messagesMatch);
  if (found === null) return;
  const landing = point.node === null ? "starts a new root" : `attaches at node ${point.node.id}`;
  ctx.logger.warn(
    `v2 ${landing} instead of extending node ${tolerant.node.id}: ${describeSpellingBreak(found.index, found.difference)}. ` +
      `The new branch re-renders that turn, so it does not hold the model's own tokens for it`,
  );
}

/**
 * The node a request would extend were its split assistant turns read as `split_assistant_turn` reads them, and
 * where the first piece is; null when that matcher is in use or would attach the request no deeper than `point`.
 */
function splitTurnReading(
  state: V2SessionState,
  point: AttachPoint,
  request: NormalizedChatRequest,
  ctx: PolicyContext,
): { node: TrajectoryNode; index: number; form: SplitTurnForm } | null {
  if (ctx.messagesMatch === splitAssistantTurnMessageMatches) return null;
  const joined = joinSplitAssistantTurns(request.messages);
  if (joined === request.messages) return null;
  const reading = state.forest.findAttachPoint(joined, splitAssistantTurnMessageMatches);
  const depth = (node: AttachPoint["node"]): number => (node === null ? 0 : node.pathMessages().length);
  if (reading.node === null || depth(reading.node) <= depth(point.node)) return null;
  const found = firstSplitTurnBreak(reading.node.pathMessages(), request.messages, ctx.messagesMatch);
  return found === null ? null : { node: reading.node, ...found };
}

/** The split-turn half of {@link warnIfOnlySpelling}: true when it warned. */
function warnIfSplitTurn(state: V2SessionState, point: AttachPoint, request: NormalizedChatRequest, ctx: PolicyContext): boolean {
  const found = splitTurnReading(state, point, request, ctx);
  if (found === null) return false;
  const landing = point.node === null ? "starts a new root" : `attaches at node ${point.node.id}`;
  ctx.logger.warn(
    `v2 ${landing} instead of extending node ${found.node.id}: ${describeSplitTurnBreak(found.index, found.form)}. ` +
      `The new branch re-renders the pieces, so it does not hold the model's own tokens for that turn`,
  );
  return true;
}

/**
 * When a request about to be refused for assistant content parts re-sends a stored turn in pieces that the
 * `split_assistant_turn` matcher would read as that turn: the sentence naming it (also logged at warn level).
 */
function splitTurnAdvice(state: V2SessionState, point: AttachPoint, request: NormalizedChatRequest, ctx: PolicyContext): string | null {
  const found = splitTurnReading(state, point, request, ctx);
  if (found === null) return null;
  const advice = describeSplitTurnBreak(found.index, found.form);
  ctx.logger.warn(`v2 refused the request (400) instead of extending node ${found.node.id}: ${advice}. The tree and the view are unchanged`);
  return advice;
}

/** The TITO prompt for a request attached at `attach` (null: a new root rendered from scratch). Pure. */
function promptFor(attach: TrajectoryNode | null, matchedMessages: number, request: NormalizedChatRequest, ctx: PolicyContext): number[] {
  if (attach === null) {
    return titoStep("render", () => ctx.tito.renderPromptIds(request.messages, request.tools, request.chatTemplateKwargs));
  }
  const stored = attach.pathMessages();
  const suffix = request.messages.slice(matchedMessages);
  assertAllowedSuffixRoles(request.messages, matchedMessages, ctx.tito.allowedAppendRoles);
  return titoStep("merge", () => ctx.tito.mergeTokens(stored, [...stored, ...suffix], attach.tokenIds, request.tools, request.chatTemplateKwargs));
}

/**
 * Appends the generation under the parent captured by `prepareV2Turn` (concurrent requests from one spot
 * become siblings) and moves the view to it.
 * @throws SessionHttpError 500 when the parent's snapshot is not a prefix of prompt + completion, 422 at the node cap.
 */
export function commitV2Turn(state: V2SessionState, plan: V2Plan, request: NormalizedChatRequest, turn: CompletedTurn, ctx: PolicyContext): TrajectoryNode {
  const allIds = turn.promptIds.concat(turn.completionIds); // sized exactly: the node keeps it for good (adopted, not copied)
  if (plan.parent !== null) assertStoredPrefix(plan.parent.tokenIds, allIds, ctx.tito.maxTrimTokens);
  const delta: ChatMessage[] = [...request.messages.slice(plan.matchedMessages), turn.assistantMessage];
  let node: TrajectoryNode;
  try {
    node = state.forest.createNode(
      plan.parent,
      {
        deltaMessages: delta,
        tokenIds: allIds,
        completionSpan: [turn.promptIds.length, allIds.length],
        committedAt: turn.record.timestamp,
        responseId: turn.responseId ?? "",
        record: turn.record,
        finishReason: turn.finishReason ?? "",
      },
      true,
    );
  } catch (error) {
    if (error instanceof ForestCapacityError) throw new SessionHttpError(422, error.message);
    throw error;
  }
  state.activeLeaf = node;
  return node;
}
