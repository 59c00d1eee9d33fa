// History matching rules: decide whether a request message repeats a stored one (strict, loose, split turn, role+content).
// Built-ins are selected by name; a custom matcher is wrapped so that a broken one fails loudly (500).
import type { ChatMessage } from "../tokenizer/types";
import type { MessageMatcher } from "./policy";
import { canonicalDecimal, ExactJsonNumber, parsePyJson, pythonFloatRepr, PyBigInt, PyFloat, pyTypeName } from "../wire/py-json";
import { jsonEqual } from "./json-equal";
import { SessionHttpError } from "./types";

/** Names of the built-in message matchers. */
export type MessageMatcherName = "strict" | "loose_tool_call" | "split_assistant_turn" | "role_content_only";

/** The message keys a chat template reads; only these take part in strict matching. */
export const TEMPLATE_RELEVANT_KEYS = ["role", "content", "reasoning_content", "tool_calls"] as const;

/** `null`, `undefined`, `""` and `[]` render the same way, so they compare as one empty value. */
export function normalizeEmpty(value: unknown): unknown {
  if (value === null || value === undefined || value === "") return null;
  if (Array.isArray(value) && value.length === 0) return null;
  return value;
}

/** A tool call the strict comparison reads as a record of its own fields (`index` left out). */
function isFieldRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * `jsonEqual` of two tool calls with each one's wire-only `index` key left out (streaming clients renumber or omit
 * it), read as records of their own enumerable fields, as a copy without `index` would be; no copy is made.
 */
function toolCallFieldsEqual(stored: Record<string, unknown>, incoming: Record<string, unknown>): boolean {
  if (stored === incoming) return true;
  let storedKeys = 0;
  for (const key of Object.keys(stored)) {
    if (key === "index") continue;
    const value = stored[key];
    if (value === undefined) continue;
    storedKeys += 1;
    if (!Object.prototype.propertyIsEnumerable.call(incoming, key) || !jsonEqual(value, incoming[key])) return false;
  }
  let incomingKeys = 0;
  for (const key of Object.keys(incoming)) if (key !== "index" && incoming[key] !== undefined) incomingKeys += 1;
  return storedKeys === incomingKeys;
}

/**
 * Strict equality of two normalized `tool_calls` values: lists compare call by call with each call's `index`
 * ignored (a call that is an object on one side only never matches); anything else compares as a whole.
 */
function toolCallsEqual(stored: unknown, incoming: unknown): boolean {
  if (!Array.isArray(stored) || !Array.isArray(incoming)) return jsonEqual(stored, incoming);
  if (stored.length !== incoming.length) return false;
  for (let i = 0; i < stored.length; i += 1) {
    if (!(i in stored)) continue; // a hole on the stored side is skipped, as Array.prototype.every skips it
    const left: unknown = stored[i];
    const right: unknown = incoming[i];
    const leftRecord = isFieldRecord(left);
    const rightRecord = isFieldRecord(right);
    if (leftRecord && rightRecord) {
      if (!toolCallFieldsEqual(left, right)) return false;
    } else if (leftRecord || rightRecord || !jsonEqual(left, right)) {
      return false;
    }
  }
  return true;
}

/**
 * Strict matcher: role, content, reasoning_content and tool_calls must be equal, with null/""/[] as one empty
 * value and each tool call's `index` ignored. Other keys (client extras) are ignored.
 */
export const strictMessageMatches: MessageMatcher = (stored, incoming) =>
  // Identical values (the same string text, both absent) are equal whatever normalization does: checked first.
  sameOrEqual(stored.role, incoming.role) &&
  sameOrEqual(stored.content, incoming.content) &&
  sameOrEqual(stored.reasoning_content, incoming.reasoning_content) &&
  (stored.tool_calls === incoming.tool_calls || toolCallsEqual(normalizeEmpty(stored.tool_calls), normalizeEmpty(incoming.tool_calls)));

/** `jsonEqual` of the normalized values, answered at once for identical ones (Python equality is reflexive). */
function sameOrEqual(stored: unknown, incoming: unknown): boolean {
  return stored === incoming || jsonEqual(normalizeEmpty(stored), normalizeEmpty(incoming));
}

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

function isTextPart(part: unknown): part is { type: "text"; text: string } & Record<string, unknown> {
  return isDict(part) && part.type === "text" && typeof part.text === "string";
}

/** Whether two `tool_calls` values name the same calls, as `loose_tool_call` compares them (`index` ignored). */
function toolCallListsMatch(stored: unknown, incoming: unknown): boolean {
  return looseToolCallMessageMatches(
    { role: "assistant", tool_calls: stored as ChatMessage["tool_calls"] },
    { role: "assistant", tool_calls: incoming as ChatMessage["tool_calls"] },
  );
}

/**
 * The text of an assistant message's content: the string itself, or the concatenation of a list of text parts.
 * A part may carry only what clients are seen to copy into it: `role: "assistant"`, an empty `annotations`
 * list, and `tool_calls` equal to `calls` (the turn's own calls). Null for any other content (an image part,
 * an unknown key, calls that differ), which therefore never reads as text.
 */
export function assistantText(content: unknown, calls: unknown): string | null {
  if (typeof content === "string") return content;
  if (!Array.isArray(content) || content.length === 0) return null;
  let text = "";
  for (const part of content) {
    if (!isTextPart(part)) return null;
    for (const key of Object.keys(part)) {
      if (key === "type" || key === "text") continue;
      if (key === "role" && part.role === "assistant") continue;
      if (key === "annotations" && Array.isArray(part.annotations) && part.annotations.length === 0) continue;
      if (key === "tool_calls" && toolCallListsMatch(calls, part.tool_calls)) continue;
      return null;
    }
    text += part.text;
  }
  return text;
}

/**
 * Split-assistant-turn matcher: everything `loose_tool_call` accepts, plus an assistant message whose content is
 * a list of text parts that concatenate to the stored content (the rest compared as `loose_tool_call` does). The
 * server also reads a turn re-sent as two consecutive assistant messages (text, then the tool calls) as one
 * message before matching (see `joinSplitAssistantTurns`); text or calls that really differ never match.
 */
export const splitAssistantTurnMessageMatches: MessageMatcher = (stored, incoming) => {
  if (looseToolCallMessageMatches(stored, incoming)) return true;
  if (incoming.role !== "assistant" || !Array.isArray(incoming.content)) return false;
  const text = assistantText(incoming.content, incoming.tool_calls);
  return text !== null && looseToolCallMessageMatches(stored, { ...incoming, content: text });
};

/** Role-and-content matcher: every other field (tool calls included) is ignored; the stored prefix wins. */
export const roleContentOnlyMessageMatches: MessageMatcher = (stored, incoming) =>
  (["role", "content"] as const).every((key) => jsonEqual(normalizeEmpty(stored[key]), normalizeEmpty(incoming[key])));

/** The built-in matchers by name. */
export const MESSAGE_MATCHERS: Readonly<Record<MessageMatcherName, MessageMatcher>> = {
  strict: strictMessageMatches,
  loose_tool_call: looseToolCallMessageMatches,
  split_assistant_turn: splitAssistantTurnMessageMatches,
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
