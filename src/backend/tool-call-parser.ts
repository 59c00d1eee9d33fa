// Splits a completion into content and tool calls the way SGLang's `qwen25` function-call parser does.
// Pure text logic: the chat handler decides when to call it and how to shape the reply.
import type { ToolSpec } from "../tokenizer/types";
import { dumpsPy, isPyTruthy, parsePyJson, PY_TOJSON, PyBigInt, PyFloat, type PyJson } from "../wire/py-json";
import { isJsonObject } from "../wire/wire-json";
import type { ParsedToolCall, ToolCallParse } from "./formats/types";

export type { ToolCallParse } from "./formats/types";

const OPEN_TAG = "<tool_call>\n";
const BLOCK_PATTERN = /<tool_call>\n([\s\S]*?)\n<\/tool_call>/g;

/**
 * Parses Qwen2.5-style `<tool_call>\n{json}\n</tool_call>` blocks. Blocks with malformed JSON, calls to
 * tools not in `tools`, and non-object entries are skipped; when nothing survives the text stays content.
 */
export function parseQwen25ToolCalls(text: string, tools: readonly ToolSpec[]): ToolCallParse {
  const start = text.indexOf(OPEN_TAG);
  if (start === -1) return { content: text, calls: [] };
  const toolIndices = indexToolsByName(tools);
  const calls: ParsedToolCall[] = [];
  for (const match of text.matchAll(BLOCK_PATTERN)) {
    let parsed: PyJson;
    try {
      parsed = parsePyJson(match[1].trim());
    } catch {
      continue;
    }
    const actions = Array.isArray(parsed) ? parsed : [parsed];
    for (const action of actions) {
      const call = toToolCall(action, toolIndices);
      if (call) calls.push(call);
    }
  }
  if (calls.length === 0) return { content: text, calls };
  return { content: text.slice(0, start).trim(), calls };
}

function toToolCall(action: PyJson, toolIndices: Map<string, number>): ParsedToolCall | undefined {
  if (!isJsonObject(action) || action instanceof PyFloat || action instanceof PyBigInt) return undefined;
  const name = own(action, "name");
  if (typeof name !== "string") return undefined;
  const toolIndex = toolIndices.get(name);
  if (toolIndex === undefined) return undefined;
  const parameters = own(action, "parameters");
  const argumentsValue = isPyTruthy(parameters) ? parameters : Object.prototype.hasOwnProperty.call(action, "arguments") ? action.arguments : {};
  return { toolIndex, name, arguments: dumpsPy(argumentsValue, PY_TOJSON) || "{}" };
}

/** `dict.get(key)` on a parsed object: own keys only (a `"__proto__"` or `"toString"` key is data, not a lookup). */
function own(object: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined;
}

function indexToolsByName(tools: readonly ToolSpec[]): Map<string, number> {
  const indices = new Map<string, number>();
  tools.forEach((tool, index) => {
    const fn = tool["function"];
    if (fn !== null && typeof fn === "object") {
      const name = (fn as Record<string, unknown>)["name"];
      if (typeof name === "string" && name.length > 0) indices.set(name, index);
    }
  });
  return indices;
}
