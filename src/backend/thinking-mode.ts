// The mock thinks when the template thinks: a prompt whose generation prompt leaves the reasoning block to the model
// (Qwen3 with thinking on) gets a reply that opens with a short, fixed reasoning block in the family's format.
import type { MockFormats } from "./mock-model";
import type { ProcessResult } from "./types";

/** The reasoning a thinking model writes before each scripted or planned reply (fixed, so runs stay deterministic). */
export const MOCK_REASONING_TEXT = "The user wants the weather; I follow the script.";

/** Qwen3's generation prompt when thinking is on: the assistant turn opened, the reasoning block left to the model. */
const OPEN_ASSISTANT_TURN = "<|im_start|>assistant\n";

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
