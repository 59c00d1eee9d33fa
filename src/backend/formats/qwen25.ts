// SGLang's `qwen25` tool-call format: `<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>` blocks (Qwen3, Qwen3-Next).
// The parser is the package's existing Qwen2.5 parser; the writer spells calls as the Qwen3 model does.
import { parseQwen25ToolCalls } from "../tool-call-parser";
import { dumpsPy, PY_TOJSON } from "../../wire/py-json";
import type { ScriptedToolCall, ToolCallFormat } from "./types";

function writeCall(call: ScriptedToolCall): string {
  return `<tool_call>\n${dumpsPy({ name: call.name, arguments: call.arguments }, PY_TOJSON)}\n</tool_call>`;
}

/** The `qwen25` format: a lead line, then one `<tool_call>` block per call. */
export const QWEN25_TOOL_CALLS: ToolCallFormat = Object.freeze({
  name: "qwen25",
  write: (lead: string, calls: readonly ScriptedToolCall[]) => [lead, ...calls.map(writeCall)].filter((part) => part.length > 0).join("\n"),
  parse: parseQwen25ToolCalls,
});
