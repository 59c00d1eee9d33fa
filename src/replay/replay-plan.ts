// A recorded conversation as the calls an agent makes to replay it: the history edits before each call and the
// completion the mock plays for it (the recorded reply, or an injected first attempt of a retry). Pure.
import { TOOL_CALL_FAILURE_TEXT } from "../agent/texts";
import type { PlannedReply } from "../backend/reply-plans";
import { writeRecordedReply } from "../backend/recorded-reply";
import type { MockFormats } from "../backend/mock-model";
import { FUZZ_TEXTS, pick } from "../fuzz/schedule";
import type { ChatMessage } from "../tokenizer/types";
import { asSent, callArguments, contentText, replyTurns, toolCallsOf } from "./conversation-check";
import { drawRetries, RETRY_KINDS, type RetryInjection, type RetryKind, type RetrySettings } from "./retry-injection";
import type { RecordedConversation } from "./types";

/** A change to the agent's history before a call. */
export type HistoryEdit =
  /** Appends messages the agent writes (recorded inputs, or a failure notice). */
  | { op: "append"; messages: ChatMessage[] }
  /** Drops the last generated reply and everything after it (a retry resends the request before it). */
  | { op: "rewind" }
  /** Replaces the history's last message (a divergent retry's rephrasing, and its undoing). */
  | { op: "replace_last"; message: ChatMessage };

/** One chat call of the replay. */
interface ReplayCall {
  /** The call's index (the mock plays plan entry `call`). */
  call: number;
  /** Message index of the recorded reply this call leads up to. */
  turn: number;
  /** The retry whose first attempt this call is, or null for the call that gets the recorded reply. */
  injected: RetryKind | null;
  /** Applied to the history, in order, before the call. */
  edits: HistoryEdit[];
}

/** Everything a driver needs to replay one conversation. */
export interface ReplayPlan {
  /** The conversation's index in the corpus (refusals name it beside the message). */
  conversation: number;
  calls: ReplayCall[];
  /** The mock's reply to each call, by call index. */
  replies: PlannedReply[];
  /** The retries drawn (empty without retry settings). */
  retries: RetryInjection[];
}

/** The recorded message's reply text in the family's wire format. */
function recordedText(message: ChatMessage, formats: MockFormats): string {
  const reasoning = typeof message.reasoning_content === "string" ? message.reasoning_content : null;
  const calls = toolCallsOf(message).map((call) => ({
    name: (call as { function: { name: string } }).function.name,
    arguments: callArguments(call) ?? {},
  }));
  return writeRecordedReply({ content: contentText(message.content) ?? "", reasoning, calls }, formats);
}

/** The rephrased copy of a request's last message for a divergent retry (same role, another text from the fuzz pools). */
function rephrased(message: ChatMessage, variant: number): ChatMessage {
  const pool = message.role === "tool" ? FUZZ_TEXTS.toolResults : message.role === "system" ? FUZZ_TEXTS.systems : FUZZ_TEXTS.rephrased;
  let content: string = pick(pool, variant);
  if (content === contentText(message.content)) content = pick(pool, variant + 1);
  return { ...message, content };
}

/**
 * The plan of a conversation (checked renderable first): before each recorded reply the agent appends the recorded
 * messages since the previous one; a drawn retry adds a first call answered by an injected reply (plain text for
 * the pure and divergent retries, a malformed tool call for the failure modes) and the edits that undo or answer it.
 * `kinds` limits the schedules drawn to those the family can replay (`retryKindsFor`).
 */
export function buildReplayPlan(
  conversation: RecordedConversation,
  formats: MockFormats,
  retries?: RetrySettings,
  kinds: readonly RetryKind[] = RETRY_KINDS,
): ReplayPlan {
  const turns = replyTurns(conversation);
  const injections = retries === undefined ? [] : drawRetries(conversation, turns, retries, kinds);
  const byTurn = new Map(injections.map((injection) => [injection.turn, injection]));
  const calls: ReplayCall[] = [];
  const replies: PlannedReply[] = [];
  const salt = (conversation.index % 100_000) * 1000;
  const add = (turn: number, injected: RetryKind | null, edits: HistoryEdit[], text: string): void => {
    const call = calls.length;
    calls.push({ call, turn, injected, edits });
    replies.push({ text, weight_version: `w${call}`, logprob_seed: salt + call * 37 + 11 });
  };
  let cursor = 0;
  for (const turn of turns) {
    const messages = conversation.messages;
    const inputs: HistoryEdit = { op: "append", messages: messages.slice(cursor, turn).map(asSent) };
    const recorded = recordedText(messages[turn], formats);
    const injection = byTurn.get(turn);
    const plain = (variant: number): string => writeRecordedReply({ content: pick(FUZZ_TEXTS.replies, variant), reasoning: null, calls: [] }, formats);
    const malformed = (variant: number): string => writeRecordedReply({ content: pick(FUZZ_TEXTS.malformed, variant), reasoning: null, calls: [] }, formats);
    switch (injection?.kind) {
      case undefined:
        add(turn, null, [inputs], recorded);
        break;
      case "pure_retry":
        add(turn, injection.kind, [inputs], plain(injection.variant));
        add(turn, null, [{ op: "rewind" }], recorded);
        break;
      case "divergent_retry": {
        const last = asSent(messages[turn - 1]);
        add(turn, injection.kind, [inputs, { op: "replace_last", message: rephrased(last, injection.variant) }], plain(injection.variant));
        add(turn, null, [{ op: "rewind" }, { op: "replace_last", message: last }], recorded);
        break;
      }
      case "tool_call_failure_rollback":
        add(turn, injection.kind, [inputs], malformed(injection.variant));
        add(turn, null, [{ op: "rewind" }], recorded);
        break;
      case "tool_call_failure_append_tool":
        add(turn, injection.kind, [inputs], malformed(injection.variant));
        add(turn, null, [{ op: "append", messages: [{ role: "tool", tool_call_id: "none", content: TOOL_CALL_FAILURE_TEXT }] }], recorded);
        break;
      case "tool_call_failure_append_user":
        add(turn, injection.kind, [inputs], malformed(injection.variant));
        add(turn, null, [{ op: "append", messages: [{ role: "user", content: TOOL_CALL_FAILURE_TEXT }] }], recorded);
        break;
    }
    cursor = turn + 1;
  }
  return { conversation: conversation.index, calls, replies, retries: injections };
}

/** One history entry of a replaying agent: a message and whether the model generated it (a reply it got back). */
export interface ReplayHistoryEntry {
  message: ChatMessage;
  generated: boolean;
}

/** The history after `edits` (a new array). */
export function applyEdits(history: readonly ReplayHistoryEntry[], edits: readonly HistoryEdit[]): ReplayHistoryEntry[] {
  let out = [...history];
  for (const edit of edits) {
    if (edit.op === "append") out.push(...edit.messages.map((message) => ({ message, generated: false })));
    else if (edit.op === "rewind") {
      let at = out.length - 1;
      while (at >= 0 && !out[at].generated) at -= 1;
      if (at >= 0) out = out.slice(0, at);
    } else if (out.length > 0) out[out.length - 1] = { message: edit.message, generated: false };
  }
  return out;
}
