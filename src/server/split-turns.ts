// Reads an assistant turn that a client re-sent in pieces (its text, then its tool calls) as the one message it was.
// Used by the split_assistant_turn matcher before matching; a pure rewrite of the request's message list.
import type { ChatMessage } from "../tokenizer/types";
import { assistantText, normalizeEmpty, splitAssistantTurnMessageMatches } from "./message-matchers";
import type { MessageMatcher } from "./policy";

function isAssistant(message: unknown): message is ChatMessage {
  return message !== null && typeof message === "object" && !Array.isArray(message) && (message as ChatMessage).role === "assistant";
}

function hasCalls(message: ChatMessage): boolean {
  return Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
}

/**
 * The one message that `text` (an assistant message without tool calls) and `calls` (an assistant message with
 * tool calls and no content) stand for, or null when they are not the two halves of one turn: the first must carry
 * non-empty text (a string or text parts whose copied `tool_calls`, if any, equal the second's calls), and at
 * most one of them may carry reasoning.
 */
export function joinedAssistantTurn(text: ChatMessage, calls: ChatMessage): ChatMessage | null {
  if (hasCalls(text) || !hasCalls(calls) || normalizeEmpty(calls.content) !== null) return null;
  const content = assistantText(text.content, calls.tool_calls);
  if (content === null || content === "") return null;
  const reasoning = [text.reasoning_content, calls.reasoning_content].filter((r) => normalizeEmpty(r) !== null);
  if (reasoning.length > 1) return null;
  const joined: ChatMessage = { ...calls, content };
  if (reasoning.length === 1) joined.reasoning_content = reasoning[0];
  return joined;
}

/**
 * The request's messages with every split assistant turn read as one message: an assistant message holding only
 * text followed by one holding only the tool calls become one message (the calls message's keys, the text as
 * content), and an assistant message whose content is a list of text parts gets their concatenation as its
 * content. Anything else, including messages that are not objects, is left as it is (validation reports those).
 * Returns the same array when nothing changed.
 */
export function joinSplitAssistantTurns<T>(messages: readonly T[]): readonly T[] {
  let out: T[] | null = null;
  for (let i = 0; i < messages.length; i += 1) {
    const message = messages[i];
    let replacement: ChatMessage | null = null;
    let consumed = 1;
    if (isAssistant(message)) {
      const next = messages[i + 1];
      const joined = isAssistant(next) ? joinedAssistantTurn(message, next) : null;
      if (joined !== null) {
        replacement = joined;
        consumed = 2;
      } else if (Array.isArray(message.content)) {
        const text = assistantText(message.content, message.tool_calls);
        if (text !== null) replacement = { ...message, content: text };
      }
    }
    if (replacement !== null && out === null) out = messages.slice(0, i);
    if (out !== null) out.push(replacement === null ? message : (replacement as T));
    i += consumed - 1;
  }
  return out ?? messages;
}

/**
 * A parsed chat request body with its split assistant turns joined when the server's matcher is the built-in
 * `split_assistant_turn` (the only matcher that reads them so); any other body or matcher is returned unchanged.
 */
export function readSplitTurns(body: unknown, matcher: MessageMatcher): unknown {
  if (matcher !== splitAssistantTurnMessageMatches) return body;
  if (body === null || typeof body !== "object" || Array.isArray(body)) return body;
  const messages = (body as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return body;
  const joined = joinSplitAssistantTurns(messages as unknown[]);
  return joined === messages ? body : { ...body, messages: [...joined] };
}
