// Splits a completion into content and tool calls the way SGLang's `qwen25` function-call parser does.
// Pure text logic: the chat handler decides when to call it and how to shape the reply.
import type { ToolSpec } from "../tokenizer/types";
import { dumpPyJson, isPyTruthy, parsePyJson, type PyJsonValue } from "./python-json";

/** One tool call recovered from completion text. */
export interface ParsedToolCall {
  /** Position of the called tool in the request's `tools` list. */
  toolIndex: number;
  name: string;
  /** Arguments re-serialized as Python's `json.dumps` would print them. */
  arguments: string;
}

/** What {@link parseQwen25ToolCalls} found. */
export interface ToolCallParse {
  /** Text before the first `<tool_call>` (trimmed) when calls were found; the whole text otherwise. */
  content: string;
  /** Calls in text order; empty when none parsed. */
  calls: ParsedToolCall[];
}

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
    let parsed: PyJsonValue;
    try {
      parsed = parsePyJson(match[1].trim());
    } catch {
      continue;
    }
    const actions = parsed.kind === "array" ? parsed.items : [parsed];
    for (const action of actions) {
      const call = toToolCall(action, toolIndices);
      if (call) calls.push(call);
    }
  }
  if (calls.length === 0) return { content: text, calls };
  return { content: text.slice(0, start).trim(), calls };
}

function toToolCall(action: PyJsonValue, toolIndices: Map<string, number>): ParsedToolCall | undefined {
  if (action.kind !== "object") return undefined;
  const name = action.entries.get("name");
  if (name?.kind !== "string") return undefined;
  const toolIndex = toolIndices.get(name.value);
  if (toolIndex === undefined) return undefined;
  const parameters = action.entries.get("parameters");
  const argumentsValue: PyJsonValue = isPyTruthy(parameters)
    ? (parameters as PyJsonValue)
    : (action.entries.get("arguments") ?? { kind: "object", entries: new Map() });
  return { toolIndex, name: name.value, arguments: dumpPyJson(argumentsValue) || "{}" };
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
