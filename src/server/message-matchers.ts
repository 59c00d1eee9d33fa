// History matching rules: decide whether a request message repeats a stored one (strict, loose, role+content).
// Built-ins are selected by name; a custom matcher is wrapped so that a broken one fails loudly (500).
import type { MessageMatcher } from "./policy";
import { jsonEqual } from "./json-equal";
import { SessionHttpError } from "./types";

export { jsonEqual } from "./json-equal";

/** Names of the built-in message matchers. */
export type MessageMatcherName = "strict" | "loose_tool_call" | "role_content_only";

/** The message keys a chat template reads; only these take part in strict matching. */
export const TEMPLATE_RELEVANT_KEYS = ["role", "content", "reasoning_content", "tool_calls"] as const;

/** `null`, `undefined`, `""` and `[]` render the same way, so they compare as one empty value. */
export function normalizeEmpty(value: unknown): unknown {
  if (value === null || value === undefined || value === "") return null;
  if (Array.isArray(value) && value.length === 0) return null;
  return value;
}

/** Drops the wire-only `index` key from each tool call (streaming clients renumber or omit it). */
function projectToolCalls(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((call) => {
    if (call === null || typeof call !== "object" || Array.isArray(call)) return call;
    const { index: _index, ...rest } = call as Record<string, unknown>;
    return rest;
  });
}

/**
 * Strict matcher: role, content, reasoning_content and tool_calls must be equal, with null/""/[] as one empty
 * value and each tool call's `index` ignored. Other keys (client extras) are ignored.
 */
export const strictMessageMatches: MessageMatcher = (stored, incoming) => {
  for (const key of TEMPLATE_RELEVANT_KEYS) {
    let left = normalizeEmpty(stored[key]);
    let right = normalizeEmpty(incoming[key]);
    if (key === "tool_calls") {
      left = projectToolCalls(left);
      right = projectToolCalls(right);
    }
    if (!jsonEqual(left, right)) return false;
  }
  return true;
};

const INVALID_ARGUMENTS = Symbol("invalid arguments");

/** Parses tool-call arguments to a JSON object for comparison; empty spellings are `{}`. */
function argumentsObject(value: unknown): unknown {
  if (value === null || value === undefined || value === "") return {};
  let parsed = value;
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch {
      return INVALID_ARGUMENTS;
    }
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return INVALID_ARGUMENTS;
  return parsed;
}

/** Whether two tool-call `arguments` values are the same JSON object (spelling aside), as `loose_tool_call` decides. */
export function toolArgumentsMatch(stored: unknown, incoming: unknown): boolean {
  const left = argumentsObject(stored);
  const right = argumentsObject(incoming);
  if (left === INVALID_ARGUMENTS || right === INVALID_ARGUMENTS) return jsonEqual(stored, incoming);
  return jsonEqual(left, right);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function sameKeys(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ak = Object.keys(a).sort();
  const bk = Object.keys(b).sort();
  return ak.length === bk.length && ak.every((k, i) => k === bk[i]);
}

function functionsMatch(stored: unknown, incoming: unknown): boolean {
  if (!isPlainObject(stored) || !isPlainObject(incoming)) return jsonEqual(stored, incoming);
  if (!sameKeys(stored, incoming)) return false;
  return Object.keys(stored).every((key) =>
    key === "arguments" ? toolArgumentsMatch(stored[key], incoming[key]) : jsonEqual(stored[key], incoming[key]),
  );
}

function toolCallMatches(stored: unknown, incoming: unknown): boolean {
  if (!isPlainObject(stored) || !isPlainObject(incoming)) return jsonEqual(stored, incoming);
  const { index: _a, ...left } = stored;
  const { index: _b, ...right } = incoming;
  if (!sameKeys(left, right)) return false;
  return Object.keys(left).every((key) =>
    key === "function" ? functionsMatch(left[key], right[key]) : jsonEqual(left[key], right[key]),
  );
}

/**
 * Loose tool-call matcher: everything strict accepts, plus tool-call `arguments` compared as parsed JSON
 * objects (key order and whitespace no longer matter). Ids, names, order and other fields still count.
 */
export const looseToolCallMessageMatches: MessageMatcher = (stored, incoming) => {
  if (strictMessageMatches(stored, incoming)) return true;
  for (const key of ["role", "content", "reasoning_content"] as const) {
    if (!jsonEqual(normalizeEmpty(stored[key]), normalizeEmpty(incoming[key]))) return false;
  }
  const left = normalizeEmpty(stored.tool_calls);
  const right = normalizeEmpty(incoming.tool_calls);
  if (!Array.isArray(left) || !Array.isArray(right)) return jsonEqual(left, right);
  return left.length === right.length && left.every((call, i) => toolCallMatches(call, right[i]));
};

/** Role-and-content matcher: every other field (tool calls included) is ignored; the stored prefix wins. */
export const roleContentOnlyMessageMatches: MessageMatcher = (stored, incoming) =>
  (["role", "content"] as const).every((key) => jsonEqual(normalizeEmpty(stored[key]), normalizeEmpty(incoming[key])));

/** The built-in matchers by name. */
export const MESSAGE_MATCHERS: Readonly<Record<MessageMatcherName, MessageMatcher>> = {
  strict: strictMessageMatches,
  loose_tool_call: looseToolCallMessageMatches,
  role_content_only: roleContentOnlyMessageMatches,
};

/**
 * A custom matcher with its contract enforced at every call: it must return a boolean and must not throw. A
 * truthy non-boolean or an exception is a configuration error, never a match or a mismatch, so it surfaces as a
 * 500 naming the matcher instead of silently deciding which history a request belongs to.
 */
function checkedMatcher(matcher: MessageMatcher): MessageMatcher {
  const name = matcher.name || "<anonymous>";
  return (stored, incoming) => {
    let result: unknown;
    try {
      result = matcher(stored, incoming);
    } catch (error) {
      throw new SessionHttpError(500, `session message matcher ${name} threw: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (typeof result !== "boolean") {
      throw new SessionHttpError(500, `session message matcher must return a boolean, got ${result === null ? "null" : typeof result}`);
    }
    return result;
  };
}

/**
 * Resolves a matcher by name, or wraps a custom function so that a non-boolean result or an exception is a 500
 * naming the matcher; an unknown name throws naming the choices.
 */
export function resolveMessageMatcher(selector: MessageMatcherName | MessageMatcher): MessageMatcher {
  if (typeof selector === "function") return checkedMatcher(selector);
  if (Object.prototype.hasOwnProperty.call(MESSAGE_MATCHERS, selector)) return MESSAGE_MATCHERS[selector];
  throw new Error(`unknown message matcher ${JSON.stringify(selector)}; use one of ${Object.keys(MESSAGE_MATCHERS).join(", ")}`);
}
