// A recorded assistant message written back as the completion text the family's model would have produced:
// reasoning in the family's reasoning syntax, tool calls (parallel ones too) in its tool-call syntax, content as is.
import { QWEN3_REASONING } from "./formats/qwen3-reasoning";
import type { ScriptedToolCall } from "./formats/types";
import type { MockFormats } from "./mock-model";

/** The parts of an assistant message the writer reads. */
export interface RecordedAssistantParts {
  /** The visible content (text parts already joined; "" when absent). */
  content: string;
  /** The reasoning, or null when the message carries none. */
  reasoning: string | null;
  /** Tool calls with their arguments as objects, in message order. */
  calls: readonly ScriptedToolCall[];
}

/**
 * The completion text whose SGLang parse gives back `parts`: the tool calls written after the content by the family's
 * tool-call format (a plain answer as its model writes one: Inkling's text block), then the reasoning put before it by
 * the family's reasoning format. When the generation prompt
 * already opened the reasoning block (qwennext, GLM-5.3) the text starts inside it, closed even when the message has
 * no reasoning. A family without a reasoning parser gets Qwen3's `<think>` block, which SGLang then leaves in the
 * content, as it would the model's own. DeepSeek's thinking mode (the parser forced by a request kwarg, the prompt
 * ending in `<think>`) is known only when the mock sees the prompt: it then starts the text inside the block
 * (thinking-mode.ts, `plannedReplyAsThePromptAsks`).
 */
export function writeRecordedReply(parts: RecordedAssistantParts, formats: MockFormats): string {
  const plain = formats.toolCalls.writeText === undefined ? parts.content : formats.toolCalls.writeText(parts.content);
  const text = parts.calls.length > 0 ? formats.toolCalls.write(parts.content, parts.calls) : plain;
  const opened = formats.reasoning !== null && formats.reasoningOpenedByPrompt;
  if (parts.reasoning === null && !opened) return text;
  return (formats.reasoning ?? QWEN3_REASONING).write(parts.reasoning ?? "", text, opened);
}
