// Writes and parses Qwen3-Coder / Qwen3.5 XML tool calls (`<function=...><parameter=...>`), as SGLang's
// `qwen3_coder` detector reads them in one shot (non-streaming `detect_and_parse`). Pure text logic.
import type { ToolSpec } from "../tokenizer/types";
import { dumpsPy, parsePyJson, PY_TOJSON, pyFloatValue, pyIntValue, pyObjectFromEntries, pythonFloatRepr, type PyJson } from "../wire/py-json";
import { literalEvalToJson, PyLiteralError, PyLiteralNotJsonError } from "./python-literal";
import type { ScriptedToolCall, ToolCallParse } from "./formats/types";

const TOOL_CALL_START = "<tool_call>";
const FUNCTION_PREFIX = "<function=";
const BLOCK_PATTERN = /<tool_call>([\s\S]*?)<\/tool_call>/g;
/** A function body runs to `</function>`, or to the end of the text when it is never closed. */
const FUNCTION_PATTERN = /<function=([\s\S]*?)<\/function>|<function=([\s\S]*)$/g;
/**
 * A parameter value ends at `</parameter>`, at the next `<parameter=`, at `</function>`, or at the end (Python's
 * `$`, which also matches before one final newline: hence `(?=\n?$)`).
 */
const PARAMETER_PATTERN = /<parameter=([\s\S]*?)(?:<\/parameter>|(?=<parameter=)|(?=<\/function>)|(?=\n?$))/g;

const STRING_TYPES = new Set(["string", "str", "text", "varchar", "char", "enum"]);
const INTEGER_PREFIXES = ["int", "uint", "long", "short", "unsigned"];
const BOOLEAN_TYPES = new Set(["boolean", "bool", "binary"]);
const JSON_TYPES = new Set(["object", "array", "arr"]);

/** Python's `str.strip()` whitespace (what `int()` / `float()` ignore around a number). */
const PY_SPACE = "\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, "g");
const PY_INT = /^[-+]?\d(?:_?\d)*$/;
const PY_FLOAT = /^[-+]?(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*(?:[eE][-+]?\d(?:_?\d)*)?|\d(?:_?\d)*\.?(?:[eE][-+]?\d(?:_?\d)*)?|inf|infinity|nan)$/i;

/**
 * The `properties` of the tool named `name` in `tools` (the parameters object itself when it has none, `{}` for an
 * unknown tool). SGLang's request model gives every tool the type "function", so the type is not looked at.
 */
function argumentsConfig(name: string, tools: readonly ToolSpec[]): Record<string, unknown> {
  for (const tool of tools) {
    const fn = tool["function"];
    if (fn === null || typeof fn !== "object") continue;
    if ((fn as Record<string, unknown>)["name"] !== name) continue;
    const parameters = (fn as Record<string, unknown>)["parameters"];
    if (parameters === null || typeof parameters !== "object" || Array.isArray(parameters)) return {};
    const properties = (parameters as Record<string, unknown>)["properties"];
    if ("properties" in parameters) {
      return properties !== null && typeof properties === "object" && !Array.isArray(properties) ? (properties as Record<string, unknown>) : {};
    }
    return parameters as Record<string, unknown>;
  }
  return {};
}

/** The schema type of one parameter as the detector spells it (`str(type).strip().lower()`), "string" when absent. */
function parameterType(config: Record<string, unknown>, name: string): string {
  const schema = config[name];
  if (schema === null || typeof schema !== "object" || Array.isArray(schema) || !("type" in schema)) return "string";
  const type = (schema as Record<string, unknown>)["type"];
  // str() of a list or dict starts with a bracket: no branch below matches it, so it ends in literal_eval
  return typeof type === "string" ? type.replace(PY_STRIP, "").toLowerCase() : `[${typeof type}]`;
}

/** Python's `int(text)`, or undefined when it raises. */
function pythonInt(text: string): PyJson | undefined {
  const stripped = text.replace(PY_STRIP, "");
  if (!PY_INT.test(stripped)) return undefined;
  return pyIntValue(BigInt(stripped.replace(/_/g, "")));
}

/** Python's `float(text)`, or undefined when it raises. */
function pythonFloat(text: string): number | undefined {
  const stripped = text.replace(PY_STRIP, "");
  if (!PY_FLOAT.test(stripped)) return undefined;
  const body = stripped.replace(/_/g, "").toLowerCase();
  const sign = body.startsWith("-") ? -1 : 1;
  const unsigned = body.replace(/^[-+]/, "");
  if (unsigned === "inf" || unsigned === "infinity") return sign * Number.POSITIVE_INFINITY;
  if (unsigned === "nan") return Number.NaN;
  return Number(body);
}

/**
 * One parameter value converted by its schema type, as the detector's `_convert_param_value` does: "null" is
 * None; unknown parameters and string types stay text; integer and number types parse (falling back to text);
 * booleans are `== "true"` after lowering; object/array types try json.loads, then everything else
 * ast.literal_eval, and text when that fails too.
 * @throws PyLiteralNotJsonError when literal_eval yields a value json.dumps cannot write
 */
function convertParameter(value: string, name: string, config: Record<string, unknown>): PyJson {
  if (value.toLowerCase() === "null") return null;
  if (!(name in config)) return value;
  const type = parameterType(config, name);
  if (STRING_TYPES.has(type)) return value;
  if (INTEGER_PREFIXES.some((prefix) => type.startsWith(prefix))) return pythonInt(value) ?? value;
  if (type.startsWith("num") || type.startsWith("float")) {
    const parsed = pythonFloat(value);
    if (parsed === undefined) return value;
    const mayBeInt = !(value.includes(".") || value.toLowerCase().includes("e"));
    if (mayBeInt && Number.isInteger(parsed)) return pyIntValue(BigInt(parsed));
    return pyFloatValue(parsed);
  }
  if (BOOLEAN_TYPES.has(type)) return value.toLowerCase() === "true";
  if (JSON_TYPES.has(type) || type.startsWith("dict") || type.startsWith("list")) {
    try {
      return parsePyJson(value);
    } catch {
      // falls through to literal_eval, as the detector does
    }
  }
  try {
    return literalEvalToJson(value);
  } catch (error) {
    if (error instanceof PyLiteralError) return value;
    throw error;
  }
}

/** Removes one leading and one trailing newline (the detector's value cleanup). */
function trimOneNewline(value: string): string {
  const start = value.startsWith("\n") ? 1 : 0;
  const end = value.length > start && value.endsWith("\n") ? value.length - 1 : value.length;
  return value.slice(start, end);
}

/** Calls of one `<tool_call>` block's text, appended to `calls`. */
function parseBlock(content: string, tools: readonly ToolSpec[], calls: ToolCallParse["calls"]): void {
  for (const match of content.matchAll(FUNCTION_PATTERN)) {
    const body = match[1] || match[2] || "";
    const nameEnd = body.indexOf(">");
    if (nameEnd === -1) continue;
    const name = body.slice(0, nameEnd);
    const config = argumentsConfig(name, tools);
    const parameters = new Map<string, PyJson>();
    for (const parameter of body.slice(nameEnd + 1).matchAll(PARAMETER_PATTERN)) {
      const raw = parameter[1];
      const keyEnd = raw.indexOf(">");
      if (keyEnd === -1) continue;
      const key = raw.slice(0, keyEnd);
      // a repeated name replaces the value and keeps its first place, as a Python dict does
      parameters.set(key, convertParameter(trimOneNewline(raw.slice(keyEnd + 1)), key, config));
    }
    calls.push({ toolIndex: calls.length, name, arguments: dumpsPy(pyObjectFromEntries(parameters), PY_TOJSON) });
  }
}

/**
 * Parses Qwen3-Coder XML tool calls the way SGLang's `qwen3_coder` detector does without streaming, through
 * `FunctionCallParser.parse_non_stream`: each `<tool_call>...</tool_call>` block (the whole text when none is
 * closed but a `<function=` appears) yields one call per `<function=NAME>` with its `<parameter=KEY>` values
 * converted by the tool's schema and written as `json.dumps` writes them. Names are not checked against `tools`;
 * a call's index is its position among the calls. The content is the text before the first `<tool_call>`,
 * unstripped. When no call is found, or a value cannot be written as JSON, the whole text is content.
 */
export function parseQwen3CoderToolCalls(text: string, tools: readonly ToolSpec[]): ToolCallParse {
  const start = text.indexOf(TOOL_CALL_START);
  if (start === -1) return { content: text, calls: [] };
  let blocks = [...text.matchAll(BLOCK_PATTERN)].map((match) => match[1]);
  if (blocks.length === 0 && text.includes(FUNCTION_PREFIX)) blocks = [text];
  const calls: ToolCallParse["calls"] = [];
  try {
    for (const block of blocks) parseBlock(block, tools, calls);
  } catch (error) {
    if (error instanceof PyLiteralNotJsonError) return { content: text, calls: [] };
    throw error;
  }
  if (calls.length === 0) return { content: text, calls };
  return { content: text.slice(0, start), calls };
}

/** A parameter value as the Qwen3.5 template writes it: objects and arrays as `tojson`, anything else as `str()`. */
function parameterText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value !== null && typeof value === "object") return dumpsPy(value, PY_TOJSON);
  if (typeof value === "number") return Number.isInteger(value) && !Object.is(value, -0) ? String(value) : pythonFloatRepr(value);
  if (typeof value === "boolean") return value ? "True" : "False";
  return "None";
}

/**
 * The text a Qwen3.5 / Qwen3-Coder model writes for `calls` after `lead` (the template's assistant turn): the lead,
 * a blank line when it is not empty, then one `<tool_call>` block per call, one newline apart; each parameter on
 * its own lines between `<parameter=KEY>` and `</parameter>`.
 */
export function writeQwen3CoderToolCalls(lead: string, calls: readonly ScriptedToolCall[]): string {
  const blocks = calls.map((call) => {
    const parameters = Object.entries(call.arguments).map(([key, value]) => `<parameter=${key}>\n${parameterText(value)}\n</parameter>\n`);
    return `<tool_call>\n<function=${call.name}>\n${parameters.join("")}</function>\n</tool_call>`;
  });
  return (lead.trim() ? `${lead}\n\n` : lead) + blocks.join("\n");
}
