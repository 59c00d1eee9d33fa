// SGLang's `qwen3_coder` tool-call format: XML `<function=NAME><parameter=KEY>value</parameter></function>` blocks
// (Qwen3-Coder, Qwen3.5, Nemotron 3). The writer and parser live in ../qwen3-coder-tool-calls.ts.
import { parseQwen3CoderToolCalls, writeQwen3CoderToolCalls } from "../qwen3-coder-tool-calls";
import type { ToolCallFormat } from "./types";

/**
 * The `qwen3_coder` format. Unlike `qwen25`, the detector does not check names against the tools and numbers the
 * calls in text order, so a parsed call's `toolIndex` is its position among the calls.
 */
export const QWEN3_CODER_TOOL_CALLS: ToolCallFormat = Object.freeze({
  name: "qwen3_coder",
  write: writeQwen3CoderToolCalls,
  parse: parseQwen3CoderToolCalls,
});
