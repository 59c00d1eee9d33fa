// Tool definitions as SGLang's request model dumps them (Tool / Function in its OpenAI protocol module).
// miles validates tools through that model before the chat template sees them, so the rendered prompt carries its shape.
import { ChatTemplateError } from "./chat-template-error";
import type { ToolSpec } from "./types";

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Pydantic's lax bool: booleans, the ints 0/1 and their usual spellings; anything else is refused. */
function laxBool(value: unknown, where: string): boolean {
  if (typeof value === "boolean") return value;
  if (value === 0 || value === 1) return value === 1;
  if (typeof value === "string") {
    const lowered = value.toLowerCase();
    if (["1", "on", "t", "true", "y", "yes"].includes(lowered)) return true;
    if (["0", "off", "f", "false", "n", "no"].includes(lowered)) return false;
  }
  throw new ChatTemplateError(`${where} must be a boolean, got ${describe(value)}`);
}

function optionalBool(value: unknown, where: string): boolean | null {
  return value === undefined || value === null ? null : laxBool(value, where);
}

/**
 * One tool as `Tool.model_dump()` gives it: a bare function is first wrapped as `{type: "function", function}`; the
 * dump is `{type, function: {description, name, parameters, strict[, defer_loading]}, defer_loading}` with SGLang's
 * defaults (description and parameters null, strict false, `type` "function"); unknown keys are dropped.
 * @throws ChatTemplateError where SGLang's validation would refuse the tool (no string name, a non-object function)
 */
function canonicalizeTool(tool: unknown, index: number): ToolSpec {
  if (!isRecord(tool)) throw new ChatTemplateError(`tools[${index}] must be a tool object, got ${describe(tool)}`);
  const wrapped: Record<string, unknown> = "function" in tool ? tool : { type: "function", function: tool };
  const fn = wrapped.function;
  if (!isRecord(fn)) throw new ChatTemplateError(`tools[${index}].function must be an object, got ${describe(fn)}`);
  const type = wrapped.type ?? "function";
  if (typeof type !== "string") throw new ChatTemplateError(`tools[${index}].type must be a string, got ${describe(type)}`);
  if (typeof fn.name !== "string") throw new ChatTemplateError(`tools[${index}].function.name must be a string, got ${describe(fn.name)}`);
  const description = fn.description ?? null;
  if (description !== null && typeof description !== "string") {
    throw new ChatTemplateError(`tools[${index}].function.description must be a string or null, got ${describe(description)}`);
  }
  const toolDeferLoading = optionalBool(wrapped.defer_loading, `tools[${index}].defer_loading`);
  const functionDeferLoading = optionalBool(fn.defer_loading, `tools[${index}].function.defer_loading`) ?? toolDeferLoading;
  const functionDump: Record<string, unknown> = {
    description,
    name: fn.name,
    parameters: fn.parameters ?? null,
    strict: fn.strict === undefined ? false : laxBool(fn.strict, `tools[${index}].function.strict`),
  };
  if (functionDeferLoading !== null) functionDump.defer_loading = functionDeferLoading;
  return { type, function: functionDump, defer_loading: toolDeferLoading };
}

/** {@link canonicalizeTool} over a tools list; null or empty means "no tools" (null). */
export function canonicalizeTools(tools: readonly unknown[] | null | undefined): ToolSpec[] | null {
  if (tools === null || tools === undefined) return null;
  if (!Array.isArray(tools)) throw new ChatTemplateError(`tools must be an array of tool objects, got ${describe(tools)}`);
  if (tools.length === 0) return null;
  return tools.map((tool: unknown, index) => canonicalizeTool(tool, index));
}
