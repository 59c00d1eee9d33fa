// The mock's wire formats by SGLang parser name; a family's `wire` names them (src/tokenizer/families).
// Add a format by writing its file here and listing it below.
import { DEEPSEEK_V3_REASONING, DEEPSEEK_V4_REASONING, DEEPSEEKV32_TOOL_CALLS, DEEPSEEKV4_TOOL_CALLS } from "./deepseek";
import { GLM47_TOOL_CALLS } from "./glm47";
import { INKLING_REASONING, INKLING_TOOL_CALLS } from "./inkling";
import { KIMI_K2_RAW_ID_TOOL_CALLS, KIMI_K2_REASONING, KIMI_K2_TOOL_CALLS } from "./kimi-k2";
import { MINIMAX_APPEND_THINK_REASONING, MINIMAX_M2_TOOL_CALLS } from "./minimax-m2";
import { QWEN25_TOOL_CALLS } from "./qwen25";
import { QWEN3_CODER_TOOL_CALLS } from "./qwen3-coder";
import { QWEN3_REASONING } from "./qwen3-reasoning";
import { GLM45_REASONING, NEMOTRON3_REASONING } from "./think-reasoning";
import type { ReasoningFormat, ToolCallFormat } from "./types";

/** The tool-call parser the mock uses when neither the family nor the user names one (miles' default family binds none). */
export const FALLBACK_TOOL_CALL_PARSER = "qwen25";

const TOOL_CALL_FORMATS: ReadonlyMap<string, ToolCallFormat> = new Map(
  [
    QWEN25_TOOL_CALLS,
    QWEN3_CODER_TOOL_CALLS,
    GLM47_TOOL_CALLS,
    DEEPSEEKV32_TOOL_CALLS,
    DEEPSEEKV4_TOOL_CALLS,
    KIMI_K2_TOOL_CALLS,
    KIMI_K2_RAW_ID_TOOL_CALLS,
    MINIMAX_M2_TOOL_CALLS,
    INKLING_TOOL_CALLS,
  ].map((format) => [format.name, format]),
);

const REASONING_FORMATS: ReadonlyMap<string, ReasoningFormat> = new Map(
  [
    QWEN3_REASONING,
    GLM45_REASONING,
    NEMOTRON3_REASONING,
    DEEPSEEK_V3_REASONING,
    DEEPSEEK_V4_REASONING,
    KIMI_K2_REASONING,
    MINIMAX_APPEND_THINK_REASONING,
    INKLING_REASONING,
  ].map((format) => [format.name, format]),
);

/** Names of the tool-call formats the mock implements. */
export function toolCallFormatNames(): string[] {
  return [...TOOL_CALL_FORMATS.keys()];
}

/** Names of the reasoning formats the mock implements. */
export function reasoningFormatNames(): string[] {
  return [...REASONING_FORMATS.keys()];
}

/** The tool-call format of that SGLang parser name. @throws Error naming the known formats */
export function toolCallFormat(name: string): ToolCallFormat {
  const format = TOOL_CALL_FORMATS.get(name);
  if (format === undefined) throw new Error(`unknown tool-call parser ${JSON.stringify(name)}; the mock implements: ${toolCallFormatNames().join(", ")}`);
  return format;
}

/** The reasoning format of that SGLang parser name. @throws Error naming the known formats */
export function reasoningFormat(name: string): ReasoningFormat {
  const format = REASONING_FORMATS.get(name);
  if (format === undefined) throw new Error(`unknown reasoning parser ${JSON.stringify(name)}; the mock implements: ${reasoningFormatNames().join(", ")}`);
  return format;
}
