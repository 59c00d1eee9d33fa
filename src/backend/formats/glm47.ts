// SGLang's `glm47` tool-call format: `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>`
// (GLM-4.7, GLM-5, GLM-5.3). The writer and parser live in ../glm47-tool-calls.ts.
import { parseGlm47ToolCalls, writeGlm47ToolCalls } from "../glm47-tool-calls";
import type { ToolCallFormat } from "./types";

/** The `glm47` format: unknown tools are dropped and a call's index is its tool's position, as with `qwen25`. */
export const GLM47_TOOL_CALLS: ToolCallFormat = Object.freeze({
  name: "glm47",
  write: writeGlm47ToolCalls,
  parse: parseGlm47ToolCalls,
});
