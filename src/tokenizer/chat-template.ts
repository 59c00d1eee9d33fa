// Renders chat messages with the package's append-safe Qwen3 Jinja template through @huggingface/jinja.
// Normalizes messages first (tool-call arguments parsed, tools canonicalized) the way miles + SGLang do.
import * as fs from "node:fs";
import * as path from "node:path";
import { Template } from "@huggingface/jinja";
import { dumpsPy, parsePyJson, PY_TOJSON, PyBigInt, PyFloat, pyObjectKeys, pythonFloatRepr, toPlainJs } from "../wire/py-json";
import { ChatTemplateError } from "./chat-template-error";
import { canonicalizeTools } from "./sglang-tools";
import type { ChatMessage, RenderOptions, ToolSpec } from "./types";

export { ChatTemplateError } from "./chat-template-error";

/** File name of the append-safe Qwen3 template, stored next to this module (and copied into dist on build). */
export const QWEN3_TEMPLATE_FILE = "qwen3-append-safe.jinja";

/** Absolute path of the append-safe Qwen3 template shipped with the package. */
export function qwen3TemplatePath(): string {
  return path.join(__dirname, QWEN3_TEMPLATE_FILE);
}

/** Which side(s) of a string {@link stripNewlines} strips. */
export type StripSide = "left" | "right" | "both";

/** Python's `str.strip("\n")` family: removes only newline characters (the Jinja engine's strip removes all whitespace). */
export function stripNewlines(text: string, side: StripSide): string {
  let start = 0;
  let end = text.length;
  if (side !== "right") while (start < end && text.charCodeAt(start) === 10) start += 1;
  if (side !== "left") while (end > start && text.charCodeAt(end - 1) === 10) end -= 1;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

function parseArguments(args: unknown, messageIndex: number, callIndex: number): unknown {
  if (typeof args !== "string") return args;
  try {
    return parsePyJson(args);
  } catch (error) {
    throw new ChatTemplateError(
      `messages[${messageIndex}].tool_calls[${callIndex}].function.arguments is not valid JSON ` + `(${(error as Error).message}): ${args.slice(0, 200)}`,
    );
  }
}

/**
 * Key of the function object under which the template finds the arguments already written as transformers' `tojson`
 * writes them (Python's json.dumps spelling, original key order): @huggingface/jinja's own tojson spells numbers the
 * JS way (`1` for 1.0, `1e-7`) and moves integer-like keys first.
 */
const ARGUMENTS_JSON_KEY = "tito_arguments_json";

function normalizeToolCalls(toolCalls: readonly unknown[], messageIndex: number): unknown[] {
  return toolCalls.map((call, callIndex) => {
    if (call === null || typeof call !== "object") return call;
    const record = call as Record<string, unknown>;
    const fn = record.function;
    if (fn === null || typeof fn !== "object" || Array.isArray(fn)) return call;
    const fnRecord = fn as Record<string, unknown>;
    if (fnRecord.arguments === undefined) return call;
    const args = parseArguments(fnRecord.arguments, messageIndex, callIndex);
    // a JSON string that holds a string is rendered as that string, as the template's `is string` branch does
    if (typeof args === "string") return { ...record, function: { ...fnRecord, arguments: args } };
    const texts = isPlainRecord(args) ? { [ARGUMENT_TEXTS_KEY]: argumentTexts(args) } : {};
    return { ...record, function: { ...fnRecord, arguments: toPlainJs(args), [ARGUMENTS_JSON_KEY]: dumpsPy(args, PY_TOJSON), ...texts } };
  });
}

/**
 * Key of the function object listing each argument as `[name, text]` in the arguments' own (Python) order, the text
 * written as Jinja2 writes `value | tojson` for objects and lists and `value | string` (Python's `str()`) for
 * anything else: what an XML tool-call template (Qwen3.5's `<parameter=...>`) prints per argument.
 */
const ARGUMENT_TEXTS_KEY = "tito_argument_texts";

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof PyFloat) && !(value instanceof PyBigInt);
}

/** Python's `str(value)` for a value json.loads produced; objects and lists as transformers' `tojson` writes them. */
function pythonStr(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (value instanceof PyFloat) return pythonFloatRepr(value.value);
  if (value instanceof PyBigInt) return value.value.toString();
  if (typeof value === "number") return Number.isInteger(value) && !Object.is(value, -0) ? String(value) : pythonFloatRepr(value);
  return dumpsPy(value, PY_TOJSON);
}

function argumentTexts(args: Record<string, unknown>): Array<[string, string]> {
  return pyObjectKeys(args).map((key) => [key, pythonStr(args[key])]);
}

/** Python's `str.isspace()` characters: what `str.strip()` removes (JS's `trim` also removes U+FEFF and keeps U+001C-U+001F, U+0085). */
const PY_WHITESPACE = "\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_STRIP_PATTERN = new RegExp(`^[${PY_WHITESPACE}]+|[${PY_WHITESPACE}]+$`, "g");

/** Python's `str.strip()` (no argument): the template helper `tito_py_strip`. */
function pythonStrip(text: string): string {
  return text.replace(PY_STRIP_PATTERN, "");
}

/**
 * Copies messages into the form the template reads: `content: null` becomes "", tool-call arguments given as
 * JSON strings are parsed as Python's json.loads does and also handed over pre-written as `tojson` writes them
 * ({@link ARGUMENTS_JSON_KEY}). The input is never mutated.
 */
export function normalizeMessagesForTemplate(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message, index) => {
    const copy: ChatMessage = { ...message };
    if (copy.content === null || copy.content === undefined) copy.content = "";
    if (Array.isArray(copy.tool_calls)) copy.tool_calls = normalizeToolCalls(copy.tool_calls, index) as ChatMessage["tool_calls"];
    return copy;
  });
}

/**
 * Tools as SGLang's request model dumps them (see {@link canonicalizeTools}); null/empty lists mean "no tools".
 * @throws ChatTemplateError naming the index when `tools` is not an array or an entry is not a valid tool
 */
function normalizeToolsForTemplate(tools: readonly ToolSpec[] | null | undefined): ToolSpec[] | null {
  return canonicalizeTools(tools);
}

/** Name of the template variable holding each tool already written as transformers' `tojson` writes it. */
const TOOLS_JSON_VARIABLE = "tito_tools_json";

/** A parsed Jinja chat template, rendered many times. */
export class ChatTemplate {
  private readonly template: Template;

  /** Parses `source` once; throws ChatTemplateError when the template does not parse. */
  constructor(
    /** The Jinja source text. */
    readonly source: string,
    /** Where the source came from; error messages name only its last path segment. */
    readonly origin: string,
  ) {
    try {
      this.template = new Template(source);
    } catch (error) {
      throw new ChatTemplateError(`chat template ${path.basename(origin)} does not parse: ${(error as Error).message}`);
    }
  }

  /** Reads and parses a template file. */
  static fromFile(file: string): ChatTemplate {
    let source: string;
    try {
      source = fs.readFileSync(file, "utf8");
    } catch (error) {
      throw new ChatTemplateError(`cannot read chat template ${file}: ${(error as Error).message}`);
    }
    return new ChatTemplate(source, file);
  }

  /** Renders messages; kwargs are exposed to the template as top-level variables. */
  render(messages: readonly ChatMessage[], options: RenderOptions = {}): string {
    const tools = normalizeToolsForTemplate(options.tools);
    const context: Record<string, unknown> = {
      ...(options.kwargs === undefined ? {} : (toPlainJs(options.kwargs) as Record<string, unknown>)),
      messages: normalizeMessagesForTemplate(messages),
      tools: tools === null ? null : toPlainJs(tools),
      add_generation_prompt: options.addGenerationPrompt ?? false,
      tito_strip_newlines: stripNewlines,
      tito_py_strip: pythonStrip,
    };
    if (tools !== null) context[TOOLS_JSON_VARIABLE] = tools.map((tool) => dumpsPy(tool, PY_TOJSON));
    try {
      return this.template.render(context);
    } catch (error) {
      // The file name only: this message reaches HTTP clients and logs, which must not learn install paths.
      throw new ChatTemplateError(`rendering chat template ${path.basename(this.origin)} failed: ${(error as Error).message}`);
    }
  }
}

let cachedQwen3Template: ChatTemplate | undefined;

/** The package's append-safe Qwen3 template, parsed once per process. */
export function qwen3ChatTemplate(): ChatTemplate {
  cachedQwen3Template ??= ChatTemplate.fromFile(qwen3TemplatePath());
  return cachedQwen3Template;
}
