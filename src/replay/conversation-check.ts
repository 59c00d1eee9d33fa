// Decides whether a recorded conversation can be replayed, and which of its messages are model replies.
// Pure: a refusal names the message index and the reason, so the row says exactly what the family cannot render.
import type { ChatMessage } from "../tokenizer/types";
import { parsePyJson, PyBigInt, PyFloat } from "../wire/py-json";
import type { RecordedConversation } from "./types";

/** Roles the chat templates of every family render. */
const RENDERED_ROLES: readonly string[] = ["system", "user", "assistant", "tool"];

/** Why a conversation cannot be replayed, at which message. */
export interface Unrenderable {
  /** Index of the offending message in `messages` (the last index + 1 when the problem is a missing message). */
  messageIndex: number;
  reason: string;
}

/**
 * The text of a message's content: a string, null/absent (""), or a list of text parts joined by one space, as SGLang
 * flattens a part list for a template that reads content as a string (Qwen3's and the families' here: sglang
 * `srt/parser/jinja_template_utils.py::process_content_for_template_format`, its "string" branch); null for anything else.
 */
export function contentText(content: unknown): string | null {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const texts: string[] = [];
  for (const part of content) {
    if (part === null || typeof part !== "object" || (part as { type?: unknown }).type !== "text") return null;
    const value = (part as { text?: unknown }).text;
    if (typeof value !== "string") return null;
    texts.push(value);
  }
  return texts.join(" ");
}

/**
 * A recorded input message as the replaying agent sends it: a list of text parts becomes the one string the model saw
 * through SGLang ({@link contentText}); the session servers render only string contents (miles' Qwen3 template drops
 * a list to "", ours refuses it). Every other message is sent as recorded.
 */
export function asSent(message: ChatMessage): ChatMessage {
  if (!Array.isArray(message.content)) return message;
  return { ...message, content: contentText(message.content) ?? "" };
}

/** The non-text part of a content list (its `type`), or null. */
function nonTextPart(content: unknown): string | null {
  if (!Array.isArray(content)) return null;
  for (const part of content) {
    const type = part !== null && typeof part === "object" ? (part as { type?: unknown }).type : undefined;
    if (type !== "text") return typeof type === "string" ? type : typeof part;
  }
  return null;
}

/**
 * A tool call's arguments as an object: parsed from its JSON string as Python's json.loads reads it (an integer
 * beyond 2^53 kept exactly, `1.0` kept a float, so the mock writes them back as written), or given as an object;
 * null when neither.
 */
export function callArguments(call: unknown): Record<string, unknown> | null {
  const fn = call !== null && typeof call === "object" ? (call as { function?: unknown }).function : undefined;
  if (fn === null || typeof fn !== "object") return null;
  const raw = (fn as { arguments?: unknown }).arguments;
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = parsePyJson(raw);
    } catch {
      return null;
    }
  }
  const isObject = value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof PyFloat) && !(value instanceof PyBigInt);
  return isObject ? (value as Record<string, unknown>) : null;
}

/** The calls of an assistant message (empty when none). */
export function toolCallsOf(message: ChatMessage): unknown[] {
  return Array.isArray(message.tool_calls) ? message.tool_calls : [];
}

/** Indices of the recorded model replies: every assistant message after the initial prompt. */
export function replyTurns(conversation: RecordedConversation): number[] {
  const turns: number[] = [];
  conversation.messages.forEach((message, i) => {
    if (i >= conversation.promptLength && message.role === "assistant") turns.push(i);
  });
  return turns;
}

/**
 * Why the family cannot replay the conversation, or null: a role no template renders, a content part that is not
 * text (an image, audio), a tool call whose function or arguments are unreadable, a tool call followed by another
 * turn without a tool result for it, or a last message that is not an assistant reply.
 */
export function unrenderableReason(conversation: RecordedConversation): Unrenderable | null {
  const messages = conversation.messages;
  if (messages.length === 0) return { messageIndex: 0, reason: "the conversation has no messages" };
  for (const [i, message] of messages.entries()) {
    if (!RENDERED_ROLES.includes(message.role)) {
      return { messageIndex: i, reason: `role ${JSON.stringify(message.role)} is not one the chat template renders (${RENDERED_ROLES.join(", ")})` };
    }
    const part = nonTextPart(message.content);
    if (part !== null) return { messageIndex: i, reason: `content part of type ${JSON.stringify(part)} (only text parts can be rendered)` };
    if (contentText(message.content) === null) return { messageIndex: i, reason: `content is neither a string, null nor a list of text parts` };
    if (message.reasoning_content !== undefined && message.reasoning_content !== null && typeof message.reasoning_content !== "string") {
      return { messageIndex: i, reason: "reasoning_content is not a string" };
    }
    const calls = toolCallsOf(message);
    for (const [c, call] of calls.entries()) {
      const name = (call as { function?: { name?: unknown } } | null)?.function?.name;
      if (typeof name !== "string" || name === "") return { messageIndex: i, reason: `tool call ${c} has no function name` };
      if (callArguments(call) === null) return { messageIndex: i, reason: `tool call ${c} (${name}) has arguments that are not a JSON object` };
    }
    if (calls.length > 0 && message.role === "assistant" && i < messages.length - 1) {
      let results = 0;
      for (let j = i + 1; j < messages.length && messages[j].role === "tool"; j += 1) results += 1;
      if (results < calls.length) {
        return {
          messageIndex: i,
          reason: `${calls.length} tool call${calls.length === 1 ? "" : "s"} followed by ${results} tool result${results === 1 ? "" : "s"} (a tool call without a result)`,
        };
      }
    }
  }
  const last = messages[messages.length - 1];
  if (last.role !== "assistant")
    return { messageIndex: messages.length - 1, reason: `the conversation ends in a ${last.role} message, not an assistant reply` };
  if (replyTurns(conversation).length === 0) return { messageIndex: messages.length - 1, reason: "no assistant message after the initial prompt" };
  return null;
}
