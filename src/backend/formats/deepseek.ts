// SGLang's DeepSeek formats: the `deepseekv32` / `deepseekv4` DSML tool-call detectors and the `deepseek-v3` /
// `deepseek-v4` reasoning detectors (forced into reasoning by the request's `thinking` kwarg, as SGLang does).
import { parseDsmlToolCalls, writeDsmlToolCalls } from "../dsml-tool-calls";
import type { ReasoningFormat, ReasoningParse, ToolCallFormat } from "./types";

/** `deepseekv32`: calls in a `<｜DSML｜function_calls>` block. */
export const DEEPSEEKV32_TOOL_CALLS: ToolCallFormat = Object.freeze({
  name: "deepseekv32",
  write: (lead: string, calls: Parameters<ToolCallFormat["write"]>[1]) => writeDsmlToolCalls("function_calls", lead, calls),
  parse: (text: string, tools: Parameters<ToolCallFormat["parse"]>[1]) => parseDsmlToolCalls("function_calls", text, tools),
});

/** `deepseekv4` (DeepSeekV4Detector): the same invokes in a `<｜DSML｜tool_calls>` block. */
export const DEEPSEEKV4_TOOL_CALLS: ToolCallFormat = Object.freeze({
  name: "deepseekv4",
  write: (lead: string, calls: Parameters<ToolCallFormat["write"]>[1]) => writeDsmlToolCalls("tool_calls", lead, calls),
  parse: (text: string, tools: Parameters<ToolCallFormat["parse"]>[1]) => parseDsmlToolCalls("tool_calls", text, tools),
});

const OPEN = "<think>";
const CLOSE = "</think>";

/**
 * `BaseReasoningFormatDetector.detect_and_parse` with `<think>` / `</think>` (nothing stripped): reasoning only when
 * forced or the text holds `<think>`; leading `<think>` tags dropped; no `</think>` means the turn ended inside the
 * block (a `toolStart` there ends the reasoning instead, the rest kept as content); else split at the first `</think>`.
 */
function parseThink(text: string, forced: boolean, toolStart: string | null): ReasoningParse {
  if (!forced && !text.includes(OPEN)) return { reasoning: null, content: text };
  let body = text;
  while (body.startsWith(OPEN)) body = body.slice(OPEN.length);
  const end = body.indexOf(CLOSE);
  if (end === -1) {
    const tool = toolStart === null ? -1 : body.indexOf(toolStart);
    if (tool !== -1) return { reasoning: body.slice(0, tool), content: body.slice(tool) };
    return { reasoning: body, content: "" };
  }
  return { reasoning: body.slice(0, end), content: body.slice(end + CLOSE.length) };
}

/** What the model writes after a prompt ending in `<think>`: the reasoning, `</think>`, the content (no newlines). */
function writeThink(reasoning: string, content: string, openedByPrompt: boolean): string {
  return `${openedByPrompt ? "" : OPEN}${reasoning}${CLOSE}${content}`;
}

/** `deepseek-v3` (`_DeepSeekV3Detector`, Qwen3's detector: a `<tool_call>` also ends the reasoning). */
export const DEEPSEEK_V3_REASONING: ReasoningFormat = Object.freeze({
  name: "deepseek-v3",
  write: writeThink,
  parse: (text: string, forced: boolean) => parseThink(text, forced, "<tool_call>"),
});

/** `deepseek-v4` (`DeepSeekV4Detector`): the base detector on V4's think tokens. */
export const DEEPSEEK_V4_REASONING: ReasoningFormat = Object.freeze({
  name: "deepseek-v4",
  write: writeThink,
  parse: (text: string, forced: boolean) => parseThink(text, forced, null),
});
