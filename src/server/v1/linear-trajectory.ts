// v1 session state as pure data: one linear trajectory with a token checkpoint per generated turn (SPEC §7.1).
// Rollback discards at most one generated turn; anything further is a 400 that leaves the state untouched.
import type { ChatMessage } from "../../tokenizer/types";
import type { MessageMatcher } from "../policy";
import { matchedPrefixLength } from "../append-only";
import { SessionHttpError, SessionRecord } from "../types";
import { shareRecordIds } from "../record-ids";
import { TokenRun } from "../token-run";

/**
 * One checkpoint's ids: the newest checkpoint is a plain array (what the next turn merges onto); each older one is a
 * {@link TokenRun} sharing its prefix with the checkpoint before it, so the session holds each id once.
 */
type CheckpointIds = readonly number[] | TokenRun;

/** How many generated turns a retry may discard. */
export const MAX_ROLLBACK_TURNS = 1;

/** One session's linear trajectory. Mutated only under the session lock. */
export interface LinearTrajectory {
  /** The effective history: stored prefixes, request tails and generated assistant messages. */
  messages: ChatMessage[];
  /** One record per generated turn, aligned with `checkpoints`. */
  records: SessionRecord[];
  /** Prompt + completion ids after each generated turn (see {@link CheckpointIds}). */
  checkpoints: CheckpointIds[];
  /** For each checkpoint, the message count it ends at. */
  checkpointMessageEnds: number[];
}

/** An empty trajectory. */
export function createLinearTrajectory(): LinearTrajectory {
  return { messages: [], records: [], checkpoints: [], checkpointMessageEnds: [] };
}

/** The ids of the current trajectory (the last checkpoint), or []. */
export function currentTokenIds(state: LinearTrajectory): readonly number[] {
  return state.checkpoints.length > 0 ? checkpointArray(state.checkpoints[state.checkpoints.length - 1]) : [];
}

/** A checkpoint's ids as an array (a fresh one for a run). */
function checkpointArray(ids: CheckpointIds): readonly number[] {
  return ids instanceof TokenRun ? ids.toArray() : ids;
}

/** A checkpoint as a run, sharing its prefix with `base` (a run already is one). */
function checkpointRun(ids: CheckpointIds, base: CheckpointIds | undefined): TokenRun {
  if (ids instanceof TokenRun) return ids;
  return TokenRun.of(ids, base === undefined ? null : base instanceof TokenRun ? base : TokenRun.of(base), true);
}

/** Where a rollback lands, or null when the request extends the whole stored history. */
export interface RollbackTarget {
  /** Checkpoints kept (0 = back to empty). */
  keepCheckpoints: number;
  /** Messages kept. */
  keepMessages: number;
  /** Generated turns discarded. */
  discarded: number;
  /** Leading request messages that matched the stored ones (at least `keepMessages`, less than the stored count). */
  matchedMessages: number;
}

/**
 * Finds the rollback a request implies: the longest matching message prefix decides the last checkpoint
 * kept. Throws SessionHttpError(400) when more than {@link MAX_ROLLBACK_TURNS} generated turns would go.
 */
export function findRollback(state: LinearTrajectory, request: readonly ChatMessage[], matcher: MessageMatcher): RollbackTarget | null {
  if (state.messages.length === 0 || state.checkpoints.length === 0) return null;
  const matched = matchedPrefixLength(state.messages, request, matcher);
  if (matched >= state.messages.length) return null;
  let checkpoint = -1;
  for (let i = state.checkpointMessageEnds.length - 1; i >= 0; i -= 1) {
    if (state.checkpointMessageEnds[i] <= matched) {
      checkpoint = i;
      break;
    }
  }
  const discarded = state.checkpoints.length - (checkpoint + 1);
  if (discarded > MAX_ROLLBACK_TURNS) {
    // Python's text, byte for byte (mirrors tests/fast/router/test_sessions_v1_pins.py::test_deep_rollback_400_byte_exact_and_state_unchanged).
    throw new SessionHttpError(
      400,
      `rollback failed: discard_count=${discarded} exceeds max_assistant_rollback_steps=${MAX_ROLLBACK_TURNS} ` +
        `(stored has ${state.messages.length} messages, request has ${request.length} messages)`,
    );
  }
  return { keepCheckpoints: checkpoint + 1, keepMessages: checkpoint >= 0 ? state.checkpointMessageEnds[checkpoint] : 0, discarded, matchedMessages: matched };
}

/** What a request builds on: the stored history, or what a rollback target keeps of it (read without mutating). */
export interface RollbackBase {
  /** Messages kept. */
  readonly messages: readonly ChatMessage[];
  /** The token ids of the last checkpoint kept ([] when none). */
  readonly tokenIds: readonly number[];
  /** Generated turns kept. */
  readonly turns: number;
}

/** The history a request builds on after `target` (null: the whole stored history), without changing `state`. */
export function rollbackBase(state: LinearTrajectory, target: RollbackTarget | null): RollbackBase {
  if (target === null) return { messages: state.messages, tokenIds: currentTokenIds(state), turns: state.checkpoints.length };
  return {
    messages: state.messages.slice(0, target.keepMessages),
    tokenIds: target.keepCheckpoints > 0 ? checkpointArray(state.checkpoints[target.keepCheckpoints - 1]) : [],
    turns: target.keepCheckpoints,
  };
}

/** Truncates messages, checkpoints and records to a rollback target. */
export function applyRollback(state: LinearTrajectory, target: Omit<RollbackTarget, "matchedMessages">): void {
  state.messages = state.messages.slice(0, target.keepMessages);
  state.checkpoints = state.checkpoints.slice(0, target.keepCheckpoints);
  // the checkpoint kept last is the newest again: an array, as the next turn merges onto it (the same array each read)
  const last = state.checkpoints.length - 1;
  if (last >= 0) state.checkpoints[last] = checkpointArray(state.checkpoints[last]);
  state.records = state.records.slice(0, target.keepCheckpoints);
  state.checkpointMessageEnds = state.checkpointMessageEnds.slice(0, target.keepCheckpoints);
}

/**
 * Appends a generated turn: effective history (stored prefix + request tail + assistant), checkpoint, record. The
 * checkpoint before it becomes a run sharing its prefix with the one before that, and its record's prompt ids read
 * from that run (see record-ids.ts): only the newest turn keeps arrays of its own.
 */
export function appendTurn(state: LinearTrajectory, request: readonly ChatMessage[], assistant: ChatMessage, tokenIds: number[], record: SessionRecord): void {
  state.messages = [...state.messages, ...request.slice(state.messages.length), assistant];
  const last = state.checkpoints.length - 1;
  if (last >= 0) {
    const run = checkpointRun(state.checkpoints[last], state.checkpoints[last - 1]);
    state.checkpoints[last] = run;
    const previous = state.records[last];
    const promptLength = (previous?.request as { input_ids?: unknown } | undefined)?.input_ids;
    if (previous !== undefined && Array.isArray(promptLength)) shareRecordIds(previous, run.prefix(promptLength.length));
  }
  state.checkpoints.push(tokenIds);
  state.checkpointMessageEnds.push(request.length + 1);
  state.records.push(record);
}
