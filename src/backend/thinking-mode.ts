// The mock thinks when the template thinks: a prompt whose generation prompt leaves the reasoning block to the model
// (Qwen3 with thinking on) gets a reply that opens with a short, fixed reasoning block in the family's format, and a
// planned reply under DeepSeek's thinking mode starts inside the block the prompt opened, as that model writes it.
import type { MockFormats } from "./mock-model";
import type { ProcessResult } from "./types";

/** The reasoning a thinking model writes before each scripted or planned reply (fixed, so runs stay deterministic). */
export const MOCK_REASONING_TEXT = "The user wants the weather; I follow the script.";

/** Qwen3's generation prompt when thinking is on: the assistant turn opened, the reasoning block left to the model. */
const OPEN_ASSISTANT_TURN = "<|im_start|>assistant\n";

/**
 * True when a DeepSeek prompt is in thinking mode but its tail opened no reasoning block: its last turn opener (after a
 * user turn or a tool-result block) was `<think>`, and the prompt ends in neither opener.
 */
export function thinkingAfterUnopenedTail(prompt: string): boolean {
  if (prompt.endsWith("<think>") || prompt.endsWith("</think>")) return false;
  const opened = Math.max(prompt.lastIndexOf("<｜Assistant｜><think>"), prompt.lastIndexOf("</function_results>\n\n<think>"));
  const closed = Math.max(prompt.lastIndexOf("<｜Assistant｜></think>"), prompt.lastIndexOf("</function_results>\n\n</think>"));
  return opened > closed;
}

/**
 * Whether the model writes its own reasoning block under `prompt`: the mock binds the `qwen3` reasoning parser for a
 * family whose prompt does not open the block itself, and the prompt ends with the bare generation prompt (with
 * `enable_thinking: false` it ends with an empty block, `<think>\n\n</think>\n\n`, and the model writes none).
 */
function modelThinks(prompt: string, formats: MockFormats | undefined): boolean {
  if (formats === undefined || formats.reasoning === null || formats.reasoningOpenedByPrompt) return false;
  return formats.reasoning.name === "qwen3" && prompt.endsWith(OPEN_ASSISTANT_TURN);
}

/** `result` with {@link MOCK_REASONING_TEXT} in a reasoning block first when the model thinks under `prompt`. */
export function thinkingAsThePromptAsks(result: ProcessResult, prompt: string, formats: MockFormats | undefined): ProcessResult {
  if (!modelThinks(prompt, formats) || formats?.reasoning == null || result.text.startsWith("<think>")) return result;
  return { ...result, text: formats.reasoning.write(MOCK_REASONING_TEXT, result.text, false) };
}

/** Opening tag of a planned reply's reasoning block in DeepSeek's syntax (`deepseek-v3`, as Qwen3's). */
const THINK_OPEN = "<think>";

/**
 * A planned reply (written as for a prompt that opened no block) as the model writes it under `prompt`. DeepSeek in
 * thinking mode (the request kwarg forcing SGLang's reasoning parser; the prompt ends in `<think>`, or its last turn
 * opener was `<think>`): the model is inside the block, so a reply whose reasoning opens with `<think>` loses that
 * opener, and a reply without reasoning closes an empty block first, as the model must for its content to be content.
 * Every other family: {@link thinkingAsThePromptAsks}.
 */
export function plannedReplyAsThePromptAsks(result: ProcessResult, prompt: string, formats: MockFormats | undefined): ProcessResult {
  if (formats?.reasoning == null || formats.reasoningForcedByKwarg === undefined) return thinkingAsThePromptAsks(result, prompt, formats);
  if (!prompt.endsWith(THINK_OPEN) && !thinkingAfterUnopenedTail(prompt)) return result;
  const text = result.text.startsWith(THINK_OPEN) ? result.text.slice(THINK_OPEN.length) : formats.reasoning.write("", result.text, true);
  return { ...result, text };
}
