// Test helper: plays a conversation turn by turn the way a session server stores it (prompt ids + completion ids).
// The "model" replies with exactly what the template renders for its message, ending in <|im_end|> (no newline).
import type { ChatMessage, ChatTemplateKwargs, Qwen3Tito, Qwen3Tokenizer, ToolSpec } from "../../src/tokenizer";

/** Stored session state after each turn: messages and accumulated ids. */
export interface StoredTurn {
  messages: ChatMessage[];
  ids: number[];
}

/** Ids the model would emit for `reply` after `prompt`: the template's render of the turn minus its closing "\n". */
export function completionIds(
  tokenizer: Qwen3Tokenizer,
  history: readonly ChatMessage[],
  reply: ChatMessage,
  tools: readonly ToolSpec[] | null,
  kwargs: ChatTemplateKwargs,
): number[] {
  const prompt = tokenizer.renderChatTemplate(history, { tools, addGenerationPrompt: true, kwargs });
  const full = tokenizer.renderChatTemplate([...history, reply], { tools, addGenerationPrompt: false, kwargs });
  if (!full.startsWith(prompt)) throw new Error("the reply does not extend the generation prompt");
  const turn = full.slice(prompt.length);
  if (!turn.endsWith("<|im_end|>\n")) throw new Error(`unexpected turn ending: ${JSON.stringify(turn.slice(-20))}`);
  return tokenizer.encode(turn.slice(0, -1));
}

/** First turn: prompt rendered from scratch plus the reply's completion ids. */
export function firstTurn(
  tito: Qwen3Tito,
  tokenizer: Qwen3Tokenizer,
  messages: readonly ChatMessage[],
  reply: ChatMessage,
  tools: readonly ToolSpec[] | null,
  kwargs: ChatTemplateKwargs,
): StoredTurn {
  const prompt = tito.renderPromptIds(messages, tools, kwargs);
  const merged = tito.mergeKwargs(kwargs);
  return { messages: [...messages, reply], ids: [...prompt, ...completionIds(tokenizer, messages, reply, tools, merged)] };
}
