// SGLang's MiniMax-M2 formats: `minimax-m2` tool calls (`<minimax:tool_call>` blocks of `<invoke name="...">` with
// `<parameter name="...">` values typed by the tool's schema) and `minimax-append-think` reasoning.
import type { ToolSpec } from "../../tokenizer/types";
import { dumpsPy, parsePyJson, PY_TOJSON, pyIntValue, pyObjectFromEntries, type PyJson } from "../../wire/py-json";
import type { ParsedToolCall, ReasoningFormat, ScriptedToolCall, ToolCallFormat, ToolCallParse } from "./types";

const START = "<minimax:tool_call>";
const END = "</minimax:tool_call>";
/** MinimaxM2Detector.tool_call_function_regex / tool_call_parameter_regex (DOTALL): complete, or open to the end. */
const INVOKE = /<invoke name="([\s\S]*?)<\/invoke>|<invoke name="([\s\S]*)$/g;
const PARAMETER = /<parameter name="([\s\S]*?)<\/parameter>|<parameter name="([\s\S]*?)$/g;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** `_extract_types_from_schema`: `type` (string or list), the types of `enum` values, anyOf/oneOf/allOf; else string. */
function schemaTypes(schema: unknown): string[] {
  if (!isRecord(schema)) return ["string"];
  const types = new Set<string>();
  const type = schema["type"];
  if (typeof type === "string") types.add(type);
  else if (Array.isArray(type)) for (const name of type) if (typeof name === "string") types.add(name);
  const values = schema["enum"];
  if (Array.isArray(values)) {
    for (const value of values) {
      if (value === null) types.add("null");
      else if (typeof value === "boolean") types.add("boolean");
      else if (typeof value === "number") types.add(Number.isInteger(value) ? "integer" : "number");
      else if (typeof value === "string") types.add("string");
      else types.add(Array.isArray(value) ? "array" : "object");
    }
  }
  for (const keyword of ["anyOf", "oneOf", "allOf"]) {
    const branches = schema[keyword];
    if (Array.isArray(branches)) for (const branch of branches) for (const name of schemaTypes(branch)) types.add(name);
  }
  return types.size === 0 ? ["string"] : [...types];
}

/** The types of parameter `name` of tool `fname` (`_parse_parameter`): its property schema's, else string. */
function parameterTypes(fname: string, name: string, tools: readonly ToolSpec[]): string[] {
  for (const tool of tools) {
    const fn = tool["function"];
    if (!isRecord(fn) || fn["name"] !== fname || !isRecord(fn["parameters"])) continue;
    const properties = fn["parameters"]["properties"];
    if (!isRecord(properties) || !Object.prototype.hasOwnProperty.call(properties, name)) return ["string"];
    return schemaTypes(properties[name]);
  }
  return ["string"];
}

function jsonOrUndefined(text: string): PyJson | undefined {
  try {
    return parsePyJson(text);
  } catch {
    return undefined;
  }
}

const PRIORITY = ["integer", "int", "number", "float", "boolean", "bool", "object", "array", "string", "str", "text"];

/** `_convert_param_value_with_types`: null spellings → None; then the first admitted type in priority order that parses. */
function convertValue(value: string, types: readonly string[]): PyJson {
  const lower = value.toLowerCase();
  const normalized = types.map((type) => type.toLowerCase());
  if (lower === "null" || normalized.includes("null") || lower === "none" || lower === "nil") return null;
  for (const type of PRIORITY) {
    if (!normalized.includes(type)) continue;
    if (type === "string" || type === "str" || type === "text") return value;
    if (type === "integer" || type === "int") {
      // Python's int(): optional sign, digits (underscores between), surrounding whitespace
      const match = /^\s*([+-]?\d+(?:_\d+)*)\s*$/.exec(value);
      if (match !== null) return pyIntValue(BigInt(match[1].replace(/_/g, "")));
    } else if (type === "number" || type === "float") {
      const number = /^\s*[+-]?(?:\d+(?:_\d+)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/.test(value) ? Number(value.replace(/_/g, "")) : NaN;
      // `val if val != int(val) else int(val)`: an integral float becomes an int
      if (Number.isFinite(number)) return Number.isInteger(number) ? pyIntValue(BigInt(number)) : number;
    } else if (type === "boolean" || type === "bool") {
      const word = lower.trim();
      if (["true", "1", "yes", "on"].includes(word)) return true;
      if (["false", "0", "no", "off"].includes(word)) return false;
    } else {
      const parsed = jsonOrUndefined(value);
      if (parsed !== undefined) return parsed;
    }
  }
  return jsonOrUndefined(value) ?? value;
}

function toolIndices(tools: readonly ToolSpec[]): Map<string, number> {
  const indices = new Map<string, number>();
  tools.forEach((tool, index) => {
    const fn = tool["function"];
    if (isRecord(fn) && typeof fn["name"] === "string" && !indices.has(fn["name"])) indices.set(fn["name"], index);
  });
  return indices;
}

/** `_parse_block`: each `<invoke>` holding `">` gives a name and typed parameters; calls to unknown tools are dropped. */
function parseBlock(block: string, tools: readonly ToolSpec[], indices: Map<string, number>): ParsedToolCall[] {
  const calls: ParsedToolCall[] = [];
  for (const invoke of block.matchAll(INVOKE)) {
    const text = invoke[1] ?? invoke[2] ?? "";
    const cut = text.indexOf('">');
    if (cut === -1) continue;
    const name = text.slice(0, cut).trim();
    const parameters = new Map<string, PyJson>();
    for (const parameter of text.slice(cut + 2).matchAll(PARAMETER)) {
      const raw = parameter[1] ?? parameter[2] ?? "";
      const at = raw.indexOf('">');
      if (at === -1) continue;
      const key = raw.slice(0, at).trim();
      const value = raw
        .slice(at + 2)
        .replace(/^\n+/, "")
        .replace(/\n+$/, "");
      parameters.set(key, convertValue(value, parameterTypes(name, key, tools)));
    }
    // parse_base_json: a call to a tool the request does not declare is dropped
    const toolIndex = indices.get(name);
    if (toolIndex === undefined) continue;
    calls.push({ toolIndex, name, arguments: dumpsPy(pyObjectFromEntries(parameters), PY_TOJSON) });
  }
  return calls;
}

/**
 * `MinimaxM2Detector.detect_and_parse` (`_extract`): the content is the text outside complete
 * `<minimax:tool_call>...</minimax:tool_call>` blocks (an unclosed block stays content), unstripped.
 */
function parseMinimaxM2(text: string, tools: readonly ToolSpec[]): ToolCallParse {
  const indices = toolIndices(tools);
  const normal: string[] = [];
  const calls: ParsedToolCall[] = [];
  let cursor = 0;
  for (;;) {
    const start = text.indexOf(START, cursor);
    if (start === -1) {
      normal.push(text.slice(cursor));
      break;
    }
    normal.push(text.slice(cursor, start));
    const end = text.indexOf(END, start);
    if (end === -1) {
      normal.push(text.slice(start));
      break;
    }
    calls.push(...parseBlock(text.slice(start, end + END.length), tools, indices));
    cursor = end + END.length;
  }
  return { content: normal.join(""), calls };
}

/**
 * What a MiniMax-M2 model writes after `lead`, as the fixed template renders a turn's calls: a newline, the block
 * opener, per call an `<invoke>` line, one `<parameter>` line per argument (strings as they are, anything else as
 * `tojson(ensure_ascii=False)`), `</invoke>`, then the closer.
 */
function writeMinimaxM2(lead: string, calls: readonly ScriptedToolCall[]): string {
  if (calls.length === 0) return lead;
  const invokes = calls.map((call) => {
    const parameters = Object.entries(call.arguments).map(
      ([key, value]) => `<parameter name="${key}">${typeof value === "string" ? value : dumpsPy(value, PY_TOJSON)}</parameter>\n`,
    );
    return `<invoke name="${call.name}">\n${parameters.join("")}</invoke>\n`;
  });
  return `${lead}\n${START}\n${invokes.join("")}${END}`;
}

/** SGLang's `minimax-m2` tool-call parser (MinimaxM2Detector). */
export const MINIMAX_M2_TOOL_CALLS: ToolCallFormat = Object.freeze({ name: "minimax-m2", write: writeMinimaxM2, parse: parseMinimaxM2 });

/**
 * SGLang's `minimax-append-think` reasoning parser (MiniMaxAppendThinkDetector): it separates nothing and puts the
 * `<think>` the generation prompt opened back in front of the text, so the reasoning stays in the content (the
 * template splits it out again when the turn comes back). The model writes the reasoning, a newline, `</think>`, two
 * newlines, then its answer, as the template renders a turn after the prompt's `<think>\n`.
 */
export const MINIMAX_APPEND_THINK_REASONING: ReasoningFormat = Object.freeze({
  name: "minimax-append-think",
  write: (reasoning: string, content: string, openedByPrompt: boolean) => `${openedByPrompt ? "" : "<think>\n"}${reasoning}\n</think>\n\n${content}`,
  parse: (text: string) => ({ reasoning: null, content: `<think>${text}` }),
});
