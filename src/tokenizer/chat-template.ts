// Renders chat messages with the package's append-safe Qwen3 Jinja template through @huggingface/jinja.
// Normalizes messages first (tool-call arguments parsed, tool specs wrapped) the way an OpenAI-style server does.
import * as fs from "node:fs";
import * as path from "node:path";
import { Template } from "@huggingface/jinja";
import type { ChatMessage, RenderOptions, ToolSpec } from "./types";

/** File name of the append-safe Qwen3 template, stored next to this module (and copied into dist on build). */
export const QWEN3_TEMPLATE_FILE = "qwen3-append-safe.jinja";

/** Absolute path of the append-safe Qwen3 template shipped with the package. */
export function qwen3TemplatePath(): string {
  return path.join(__dirname, QWEN3_TEMPLATE_FILE);
}

/** A chat message or tool list could not be turned into template input (e.g. tool arguments that are not JSON). */
export class ChatTemplateError extends Error {
  override readonly name = "ChatTemplateError";
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
    return JSON.parse(args) as unknown;
  } catch (error) {
    throw new ChatTemplateError(
      `messages[${messageIndex}].tool_calls[${callIndex}].function.arguments is not valid JSON ` +
        `(${(error as Error).message}): ${args.slice(0, 200)}`,
    );
  }
}

function normalizeToolCalls(toolCalls: readonly unknown[], messageIndex: number): unknown[] {
  return toolCalls.map((call, callIndex) => {
    if (call === null || typeof call !== "object") return call;
    const record = call as Record<string, unknown>;
    const fn = record.function;
    if (fn === null || typeof fn !== "object") return call;
    const fnRecord = fn as Record<string, unknown>;
    if (typeof fnRecord.arguments !== "string") return call;
    return { ...record, function: { ...fnRecord, arguments: parseArguments(fnRecord.arguments, messageIndex, callIndex) } };
  });
}

/**
 * Copies messages into the form the template reads: `content: null` becomes "", tool-call arguments given as
 * JSON strings become objects. The input is never mutated.
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
 * Wraps bare function definitions as `{type: "function", function}`; null/empty lists mean "no tools".
 * @throws ChatTemplateError naming the index when `tools` is not an array or an entry is not an object
 */
export function normalizeToolsForTemplate(tools: readonly ToolSpec[] | null | undefined): ToolSpec[] | null {
  if (tools === null || tools === undefined) return null;
  if (!Array.isArray(tools)) throw new ChatTemplateError(`tools must be an array of tool objects, got ${describeJsonKind(tools)}`);
  if (tools.length === 0) return null;
  return tools.map((tool: unknown, index) => {
    if (tool === null || typeof tool !== "object" || Array.isArray(tool)) {
      throw new ChatTemplateError(`tools[${index}] must be a tool object, got ${describeJsonKind(tool)}`);
    }
    return "function" in tool ? (tool as ToolSpec) : { type: "function", function: tool };
  });
}

function describeJsonKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

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
    const context: Record<string, unknown> = {
      ...(options.kwargs ?? {}),
      messages: normalizeMessagesForTemplate(messages),
      tools: normalizeToolsForTemplate(options.tools),
      add_generation_prompt: options.addGenerationPrompt ?? false,
      tito_strip_newlines: stripNewlines,
    };
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
