// Writes and parses DeepSeek V3.2 / V4 DSML tool calls as SGLang's `deepseekv32` / `deepseekv4` detectors read them in
// one shot (non-streaming `detect_and_parse`): `<｜DSML｜invoke name="N">` blocks inside the family's calls block.
import type { ToolSpec } from "../tokenizer/types";
import { dumpsPy, isPyTruthy, parsePyJson, PY_TOJSON, pyObjectFromEntries, pyObjectKeys, type PyJson } from "../wire/py-json";
import type { ParsedToolCall, ScriptedToolCall, ToolCallParse } from "./formats/types";

const DSML = "｜DSML｜";
/** Python's `str.strip()` whitespace. */
const PY_SPACE = "\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, "g");
const INVOKE = new RegExp(`<${DSML}invoke\\s+name="([^"]+)"\\s*>([\\s\\S]*?)</${DSML}invoke>`, "g");
const PARAMETER = new RegExp(`<${DSML}parameter\\s+name="([^"]+)"\\s+string="([^"]+)"\\s*>([\\s\\S]*?)</${DSML}parameter>`, "g");

function strip(text: string): string {
  return text.replace(PY_STRIP, "");
}

function isDict(value: unknown): value is Record<string, PyJson> {
  return value !== null && typeof value === "object" && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
}

/**
 * `_parse_parameters_from_xml`: an invoke body that is a JSON object (once stripped) is the arguments; otherwise each
 * parameter tag gives one, a `string="true"` value stripped, any other value read as JSON (stripped text when not).
 */
function invokeParameters(body: string): Record<string, PyJson> {
  const stripped = strip(body);
  if (stripped.startsWith("{") && stripped.endsWith("}")) {
    try {
      const parsed = parsePyJson(stripped);
      if (isDict(parsed)) return parsed;
    } catch {
      // not JSON: the parameter tags are read instead
    }
  }
  const entries: Array<[string, PyJson]> = [];
  for (const match of body.matchAll(PARAMETER)) {
    const value = strip(match[3]);
    let parsed: PyJson = value;
    if (match[2] !== "true") {
      try {
        parsed = parsePyJson(value);
      } catch {
        parsed = value;
      }
    }
    const at = entries.findIndex(([key]) => key === match[1]);
    if (at >= 0)
      entries[at] = [match[1], parsed]; // a repeated name keeps its first place, as a dict does
    else entries.push([match[1], parsed]);
  }
  return pyObjectFromEntries(entries);
}

function toolIndices(tools: readonly ToolSpec[]): Map<string, number> {
  const indices = new Map<string, number>();
  tools.forEach((tool, index) => {
    const fn = tool["function"];
    const name = fn !== null && typeof fn === "object" ? (fn as Record<string, unknown>)["name"] : undefined;
    if (typeof name === "string" && name.length > 0) indices.set(name, index);
  });
  return indices;
}

/**
 * The detector's `detect_and_parse` for the calls block `block` (`function_calls` for V3.2, `tool_calls` for V4):
 * no opening tag, all content; else content is the text before it, stripped, and the calls are the invokes of the
 * first complete block whose tool is in `tools` (`parse_base_json`), arguments as `json.dumps(..., ensure_ascii=False)`.
 */
export function parseDsmlToolCalls(block: string, text: string, tools: readonly ToolSpec[]): ToolCallParse {
  const open = `<${DSML}${block}>`;
  const at = text.indexOf(open);
  if (at === -1) return { content: text, calls: [] };
  const content = strip(text.slice(0, at));
  const close = text.indexOf(`</${DSML}${block}>`, at + open.length);
  if (close === -1) return { content, calls: [] };
  const indices = toolIndices(tools);
  const calls: ParsedToolCall[] = [];
  for (const match of text.slice(at + open.length, close).matchAll(INVOKE)) {
    const name = match[1];
    const parameters = invokeParameters(match[2]);
    const toolIndex = indices.get(name);
    if (toolIndex === undefined) continue;
    calls.push({ toolIndex, name, arguments: dumpsPy(isPyTruthy(parameters) ? parameters : {}, PY_TOJSON) });
  }
  return { content, calls };
}

/**
 * What a DeepSeek model writes for `calls` after `lead`, exactly as the encoder renders an assistant turn's calls:
 * `\n\n<｜DSML｜BLOCK>\n`, one invoke per call with a parameter line per argument (a string as is, anything else as
 * JSON), `\n</｜DSML｜BLOCK>`.
 */
export function writeDsmlToolCalls(block: string, lead: string, calls: readonly ScriptedToolCall[]): string {
  if (calls.length === 0) return lead;
  const invokes = calls.map((call) => {
    const lines = pyObjectKeys(call.arguments).map((key) => {
      const value = call.arguments[key];
      const isString = typeof value === "string";
      return `<${DSML}parameter name="${key}" string="${isString ? "true" : "false"}">${isString ? value : dumpsPy(value, PY_TOJSON)}</${DSML}parameter>`;
    });
    return `<${DSML}invoke name="${call.name}">\n${lines.join("\n")}\n</${DSML}invoke>`;
  });
  return `${lead}\n\n<${DSML}${block}>\n${invokes.join("\n")}\n</${DSML}${block}>`;
}
