// History matching rules: decide whether a request message repeats a stored one (strict, loose, role+content).
// Built-ins are selected by name; a custom matcher is wrapped so that a broken one fails loudly (500).
import type { MessageMatcher } from "./policy";
import { canonicalDecimal, ExactJsonNumber, parsePyJson, pythonFloatRepr, PyBigInt, PyFloat, pyTypeName } from "../wire/py-json";
import { jsonEqual } from "./json-equal";
import { SessionHttpError } from "./types";

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
  return value.map((call: unknown) => {
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

/**
 * A JSON value tagged by JSON type, as miles' `_tag_json_value` builds it: numbers as canonical decimals (so `1`
 * equals `1.0` but `0.1` differs from `0.10000000000000001`), booleans apart from numbers, object keys sorted.
 */
type TaggedJson = string;

function tagJson(value: unknown, fromText: boolean): TaggedJson {
  if (value === null) return "n";
  if (typeof value === "boolean") return value ? "bT" : "bF";
  if (typeof value === "string") return `s${JSON.stringify(value)}`;
  if (value instanceof ExactJsonNumber) return `d${value.canonicalDecimal()}`;
  if (value instanceof PyBigInt) return `d${canonicalDecimal(value.value.toString())}`;
  if (value instanceof PyFloat || typeof value === "number") {
    const number = value instanceof PyFloat ? value.value : value;
    if (!Number.isFinite(number)) throw new Error("non-finite JSON number");
    const isInt = typeof value === "number" && Number.isInteger(number) && !Object.is(number, -0);
    return `d${canonicalDecimal(isInt ? BigInt(number).toString() : pythonFloatRepr(number))}`;
  }
  if (Array.isArray(value)) return `a[${value.map((item) => tagJson(item, fromText)).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${tagJson((value as Record<string, unknown>)[key], fromText)}`);
    return `o{${entries.join(",")}}`;
  }
  throw new Error(`value of type ${typeof value} is not JSON-compatible`);
}

/**
 * Tool-call arguments reduced to a comparable JSON object, as miles' `_normalize_json_object`: null and "" are `{}`;
 * a string must parse as one JSON object without duplicate keys, NaN or Infinity (numbers read exactly); anything
 * else cannot be normalized and is compared raw.
 */
function argumentsObject(value: unknown): TaggedJson | typeof INVALID_ARGUMENTS {
  if (value === null || value === undefined || value === "") return "o{}";
  let parsed: unknown = value;
  if (typeof value === "string") {
    try {
      parsed = parsePyJson(value, { exact: true });
    } catch {
      return INVALID_ARGUMENTS;
    }
  }
  if (
    parsed === null ||
    typeof parsed !== "object" ||
    Array.isArray(parsed) ||
    parsed instanceof PyFloat ||
    parsed instanceof PyBigInt ||
    parsed instanceof ExactJsonNumber
  ) {
    return INVALID_ARGUMENTS;
  }
  try {
    return tagJson(parsed, typeof value === "string");
  } catch {
    return INVALID_ARGUMENTS;
  }
}

/** miles' `_raw_values_match`: Python types must be identical at every level, then values compare with `==`. */
function rawValuesMatch(a: unknown, b: unknown): boolean {
  if (pyTypeName(a) !== pyTypeName(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((item, i) => rawValuesMatch(item, (b as unknown[])[i]));
  if (isPlainObject(a) && !(a instanceof PyFloat) && !(a instanceof PyBigInt)) {
    const bo = b as Record<string, unknown>;
    return sameKeys(a, bo) && Object.keys(a).every((key) => rawValuesMatch(a[key], bo[key]));
  }
  const an = a instanceof PyFloat ? a.value : a;
  const bn = b instanceof PyFloat ? b.value : b;
  if (typeof an === "number" && typeof bn === "number") return an === bn;
  return jsonEqual(a, b);
}

/** Whether two tool-call `arguments` values are the same JSON object (spelling aside), as `loose_tool_call` decides. */
export function toolArgumentsMatch(stored: unknown, incoming: unknown): boolean {
  const left = argumentsObject(stored);
  const right = argumentsObject(incoming);
  if (left === INVALID_ARGUMENTS || right === INVALID_ARGUMENTS) return rawValuesMatch(stored, incoming);
  return left === right;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A JSON object (Python dict), not an array or a number marker. */
function isDict(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && !(value instanceof PyFloat) && !(value instanceof PyBigInt);
}

function sameKeys(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ak = Object.keys(a).sort();
  const bk = Object.keys(b).sort();
  return ak.length === bk.length && ak.every((k, i) => k === bk[i]);
}

function functionsMatch(stored: unknown, incoming: unknown): boolean {
  if (!isDict(stored) || !isDict(incoming)) return rawValuesMatch(stored, incoming);
  if (!sameKeys(stored, incoming)) return false;
  return Object.keys(stored).every((key) => (key === "arguments" ? toolArgumentsMatch(stored[key], incoming[key]) : jsonEqual(stored[key], incoming[key])));
}

function toolCallMatches(stored: unknown, incoming: unknown): boolean {
  if (!isDict(stored) || !isDict(incoming)) return rawValuesMatch(stored, incoming);
  const { index: _a, ...left } = stored;
  const { index: _b, ...right } = incoming;
  if (!sameKeys(left, right)) return false;
  return Object.keys(left).every((key) => (key === "function" ? functionsMatch(left[key], right[key]) : jsonEqual(left[key], right[key])));
}

/**
 * Loose tool-call matcher: everything strict accepts, plus tool-call `arguments` compared as parsed JSON
 * objects (key order and whitespace no longer matter) with miles' exact semantics: numbers as decimals (`1` equals
 * `1.0`, `0.1` differs from `0.10000000000000001`, big integers exact), `true` never equals `1`, and a string with
 * duplicate keys or NaN is compared as raw text. Ids, names, order and other fields still count.
 */
export const looseToolCallMessageMatches: MessageMatcher = (stored, incoming) => {
  if (strictMessageMatches(stored, incoming)) return true;
  for (const key of ["role", "content", "reasoning_content"] as const) {
    if (!jsonEqual(normalizeEmpty(stored[key]), normalizeEmpty(incoming[key]))) return false;
  }
  const left = normalizeEmpty(stored.tool_calls);
  const right = normalizeEmpty(incoming.tool_calls);
  if (!Array.isArray(left) || !Array.isArray(right)) return rawValuesMatch(left, right);
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
  // Python's texts (message_matcher_hub/funcs.py `_validated`), answered as `{"error": ...}` with 500; the cause of
  // an exception stays out of the body there too (Python chains it, the client never sees it).
  return (stored, incoming) => {
    let result: unknown;
    try {
      result = matcher(stored, incoming);
    } catch {
      throw new SessionHttpError(500, "session message matcher raised an exception");
    }
    if (typeof result !== "boolean") {
      throw new SessionHttpError(500, `session message matcher must return bool, got ${pyTypeName(result)}`);
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
