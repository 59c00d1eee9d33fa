// Writes and parses GLM-4.7 / GLM-5 tool calls (`<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>`)
// as SGLang's `glm47` detector reads them in one shot (non-streaming `detect_and_parse`). Pure text logic.
import type { ToolSpec } from "../tokenizer/types";
import { dumpsPy, parsePyJson, PY_TOJSON, PyBigInt, PyFloat, pyFloatValue, pyIntValue, pyObjectFromEntries, type PyJson } from "../wire/py-json";
import { literalEvalToJson, PyLiteralError, PyLiteralNotJsonError } from "./python-literal";
import type { ScriptedToolCall, ToolCallParse } from "./formats/types";

const START = "<tool_call>";
const CALL_PATTERN = /<tool_call>[\s\S]*?<\/tool_call>/g;
const DETAIL_PATTERN = /<tool_call>([\s\S]*?)(<arg_key>[\s\S]*?)?<\/tool_call>/;
/** A key/value pair; between them the detector allows whitespace and literal `\n` sequences. */
const PAIR_PATTERN = /<arg_key>([\s\S]*?)<\/arg_key>(?:\\n|\s)*<arg_value>([\s\S]*?)<\/arg_value>/g;

/** JSON-schema type names as the detector's `_json_type` spells a value's type. */
type JsonType = "null" | "boolean" | "integer" | "number" | "string" | "array" | "object";

/** The type of a parsed value (py-json's JS form) or of a schema's `enum` / `const` entry; an integral float counts as "integer". */
function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return "null";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (value instanceof PyFloat || value instanceof PyBigInt) return "integer";
  if (typeof value === "string") return "string";
  return Array.isArray(value) ? "array" : "object";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * The types a schema node admits (`_argument_types` without a key): its `type` (a "number" also admits integers),
 * narrowed by `enum` / `const`, widened over `anyOf` / `oneOf` branches, narrowed by `allOf`; undefined when the
 * node says nothing. `$ref` and the detector's discriminator-driven branch choice are not followed.
 */
function nodeTypes(schema: unknown): Set<JsonType> | undefined {
  if (!isRecord(schema)) return undefined;
  const constraints: Array<Set<JsonType>> = [];
  const type = schema["type"];
  if (typeof type === "string") constraints.push(new Set<JsonType>(type === "number" ? ["number", "integer"] : [type as JsonType]));
  else if (Array.isArray(type)) {
    const names = type.filter((name): name is JsonType => typeof name === "string");
    constraints.push(new Set<JsonType>(names.includes("number") ? [...names, "integer"] : names));
  }
  const values = "const" in schema ? [schema["const"]] : schema["enum"];
  if (Array.isArray(values)) constraints.push(new Set(values.map(jsonTypeOf)));
  for (const keyword of ["anyOf", "oneOf"]) {
    const branches = schema[keyword];
    if (!Array.isArray(branches)) continue;
    const alternatives = branches.map(nodeTypes);
    if (alternatives.length > 0 && alternatives.every((types) => types !== undefined)) {
      constraints.push(new Set(alternatives.flatMap((types) => [...types])));
    }
  }
  const all = schema["allOf"];
  if (Array.isArray(all))
    for (const branch of all) {
      const types = nodeTypes(branch);
      if (types !== undefined) constraints.push(types);
    }
  if (constraints.length === 0) return undefined;
  return constraints.reduce((left, right) => new Set([...left].filter((name) => right.has(name))));
}

/** The types the tool's property admits ({@link nodeTypes}), undefined for an unknown tool or property. */
function propertyTypes(name: string, key: string, tools: readonly ToolSpec[]): Set<JsonType> | undefined {
  for (const tool of tools) {
    const fn = tool["function"];
    if (!isRecord(fn) || fn["name"] !== name) continue;
    const parameters = fn["parameters"];
    const properties = isRecord(parameters) && isRecord(parameters["properties"]) ? parameters["properties"] : {};
    return nodeTypes(properties[key]);
  }
  return undefined;
}

/** `get_argument_type`: the one type admitted, "number" for number-or-integer, else undefined. */
function singleType(types: Set<JsonType> | undefined): JsonType | undefined {
  if (types === undefined) return undefined;
  if (types.size === 2 && types.has("number") && types.has("integer")) return "number";
  return types.size === 1 ? [...types][0] : undefined;
}

/** Python's `int(text)` of a JSON string value, or the string itself when it is not an integer. */
function toInteger(text: string): PyJson {
  const stripped = text.trim();
  return /^[-+]?\d(?:_?\d)*$/.test(stripped) ? pyIntValue(BigInt(stripped.replace(/_/g, ""))) : text;
}

/** `_convert_to_number`: float when the text has a point or an exponent, else int; the string when neither parses. */
function toNumber(text: string): PyJson {
  if (!(text.includes(".") || text.toLowerCase().includes("e"))) return toInteger(text);
  const stripped = text.trim().replace(/_/g, "");
  if (/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(stripped) || /^[-+]?(?:inf|infinity|nan)$/i.test(stripped)) {
    const lower = stripped.toLowerCase().replace(/^\+/, "");
    const value = lower.endsWith("nan")
      ? Number.NaN
      : lower.endsWith("inf") || lower.endsWith("infinity")
        ? lower.startsWith("-")
          ? -Infinity
          : Infinity
        : Number(stripped);
    return pyFloatValue(value);
  }
  return text;
}

/** `_coerce_numeric_string`: a JSON string value becomes a number only when the schema asks for one. */
function coerce(value: PyJson, type: JsonType | "string"): PyJson {
  if (typeof value !== "string") return value;
  if (type === "integer") return toInteger(value);
  if (type === "number") return toNumber(value);
  return value;
}

/**
 * `parse_arguments`: JSON, then JSON after unescaping, then (string-typed) the text without its wrapping quotes,
 * then ast.literal_eval, then the text itself.
 * @throws PyLiteralNotJsonError when literal_eval yields a value json.dumps refuses (the whole parse then fails)
 */
function parseValue(raw: string, type: JsonType | "string"): PyJson {
  try {
    return coerce(parsePyJson(raw), type);
  } catch {
    // strategy 2
  }
  try {
    const wrapped = parsePyJson(`{"tmp": "${raw}"}`);
    const inner =
      wrapped !== null && typeof wrapped === "object" && Object.prototype.hasOwnProperty.call(wrapped, "tmp")
        ? (wrapped as Record<string, PyJson>)["tmp"]
        : undefined;
    if (typeof inner === "string") return coerce(parsePyJson(inner), type);
  } catch {
    // strategy 2.5
  }
  if (type === "string") {
    const quoted = raw.length >= 2 && raw[0] === raw[raw.length - 1] && (raw[0] === '"' || raw[0] === "'");
    return quoted ? raw.slice(1, -1) : raw;
  }
  try {
    return literalEvalToJson(raw);
  } catch (error) {
    if (!(error instanceof PyLiteralError)) throw error;
  }
  return raw;
}

/**
 * `_parse_argument_pairs` for schemas without discriminated unions: each value parsed by its property's type; a
 * string-typed property keeps the raw text unless it parsed to a string; an ambiguous (union) property keeps the raw
 * text when the parsed value's type is not admitted but a string is.
 */
function parsePairs(pairs: ReadonlyArray<readonly [string, string]>, name: string, tools: readonly ToolSpec[]): Map<string, PyJson> {
  const parameters = new Map<string, PyJson>();
  for (const [rawKey, raw] of pairs) {
    const key = rawKey.trim();
    const types = propertyTypes(name, key, tools);
    const type = singleType(types);
    const parsed = parseValue(raw, type ?? "string");
    if (type === "string") parameters.set(key, typeof parsed === "string" ? parsed : raw);
    else if (type === undefined && types !== undefined && !types.has(jsonTypeOf(parsed)) && types.has("string")) parameters.set(key, raw);
    else parameters.set(key, parsed);
  }
  return parameters;
}

function toolIndices(tools: readonly ToolSpec[]): Map<string, number> {
  const indices = new Map<string, number>();
  tools.forEach((tool, index) => {
    const fn = tool["function"];
    if (isRecord(fn) && typeof fn["name"] === "string" && fn["name"].length > 0 && !indices.has(fn["name"])) indices.set(fn["name"], index);
  });
  return indices;
}

/**
 * Parses GLM-4.7 tool calls the way SGLang's `glm47` detector does without streaming, through
 * `FunctionCallParser.parse_non_stream`: the content is all text outside the `<tool_call>...</tool_call>` blocks,
 * stripped; each block gives its name (the text before the first `<arg_key>`) and key/value pairs, each value parsed
 * by its schema type; calls to tools not in `tools` are dropped (`parse_base_json`), a call's index is its tool's
 * position. When no call survives, or a value cannot be written as JSON, the whole text is content. Schemas whose
 * unions need sibling arguments to pick a branch, and `$ref`s, are read as if untyped.
 */
export function parseGlm47ToolCalls(text: string, tools: readonly ToolSpec[]): ToolCallParse {
  if (!text.includes(START)) return { content: text, calls: [] };
  const blocks = [...text.matchAll(CALL_PATTERN)];
  let outside = "";
  let last = 0;
  for (const block of blocks) {
    outside += text.slice(last, block.index);
    last = block.index + block[0].length;
  }
  outside += text.slice(last);
  const indices = toolIndices(tools);
  const calls: ToolCallParse["calls"] = [];
  try {
    for (const block of blocks) {
      const detail = DETAIL_PATTERN.exec(block[0]);
      if (detail === null) continue;
      const name = detail[1] ?? "";
      const pairs = [...(detail[2] ?? "").matchAll(PAIR_PATTERN)].map((pair) => [pair[1], pair[2]] as const);
      const parameters = parsePairs(pairs, name, tools);
      const toolIndex = indices.get(name);
      if (toolIndex === undefined) continue;
      calls.push({ toolIndex, name, arguments: dumpsPy(pyObjectFromEntries(parameters), PY_TOJSON) });
    }
  } catch (error) {
    if (error instanceof PyLiteralNotJsonError) return { content: text, calls: [] };
    throw error;
  }
  if (calls.length === 0) return { content: text, calls };
  return { content: outside.trim(), calls };
}

/**
 * The text a GLM-4.7 model writes for `calls` after `lead` (its template's assistant turn): the lead, then one
 * `<tool_call>NAME` block per call with `<arg_key>`/`<arg_value>` pairs (strings as they are, anything else as
 * `tojson`), no separators.
 */
export function writeGlm47ToolCalls(lead: string, calls: readonly ScriptedToolCall[]): string {
  const blocks = calls.map((call) => {
    const pairs = Object.entries(call.arguments).map(
      ([key, value]) => `<arg_key>${key}</arg_key><arg_value>${typeof value === "string" ? value : dumpsPy(value, PY_TOJSON)}</arg_value>`,
    );
    return `<tool_call>${call.name}${pairs.join("")}</tool_call>`;
  });
  return lead + blocks.join("");
}
