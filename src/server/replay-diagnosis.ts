// Explains a history break caused only by how a client re-spells a replayed assistant turn (its tool calls, or
// the turn split in pieces); SDKs re-serialize arguments, add keys, split turns. The warning names the matcher that helps.
import type { ChatMessage } from "../tokenizer/types";
import { jsonEqual } from "./json-equal";
import { matchedPrefixLength } from "./append-only";
import { assistantText, looseToolCallMessageMatches, normalizeEmpty, splitAssistantTurnMessageMatches, toolArgumentsMatch } from "./message-matchers";
import type { MessageMatcher } from "./policy";
import { joinedAssistantTurn, joinSplitAssistantTurns } from "./split-turns";

/** How a replayed assistant message differs from the stored one when only its tool-call spelling differs. */
export interface ToolCallSpellingDifference {
  /** True when some call's `arguments` is the same JSON object written differently (spaces, key order). */
  argumentsRespelled: boolean;
  /** Keys present on one side only, as paths such as `tool_calls[0].function.parsed_arguments`. */
  extraKeys: string[];
  /** True when the built-in `loose_tool_call` matcher accepts the pair. */
  looseToolCallMatches: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Keys (other than the wire-only `index` and undefined values) present on exactly one side, as paths. */
function oneSidedKeys(stored: Record<string, unknown>, replayed: Record<string, unknown>, prefix: string, ignore: readonly string[]): string[] {
  const keys = (o: Record<string, unknown>): Set<string> => new Set(Object.keys(o).filter((k) => o[k] !== undefined && !ignore.includes(k)));
  const left = keys(stored);
  const right = keys(replayed);
  return [...new Set([...left, ...right])].filter((k) => left.has(k) !== right.has(k)).map((k) => `${prefix}.${k}`);
}

/**
 * Compares a stored assistant message with its replay. Returns the difference when the two are the same turn
 * (role, content, reasoning, call ids, types and names, and arguments as JSON objects) and differ only in how the
 * tool calls are spelled; null when they differ in anything that matters, or do not differ at all.
 */
export function toolCallSpellingDifference(stored: ChatMessage, replayed: ChatMessage): ToolCallSpellingDifference | null {
  if (stored.role !== "assistant" || replayed.role !== "assistant") return null;
  for (const key of ["content", "reasoning_content"] as const) {
    if (!jsonEqual(normalizeEmpty(stored[key]), normalizeEmpty(replayed[key]))) return null;
  }
  const left = normalizeEmpty(stored.tool_calls);
  const right = normalizeEmpty(replayed.tool_calls);
  if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return null;
  let argumentsRespelled = false;
  const extraKeys: string[] = [];
  for (let i = 0; i < left.length; i += 1) {
    const a: unknown = left[i];
    const b: unknown = right[i];
    if (!isObject(a) || !isObject(b) || !isObject(a.function) || !isObject(b.function)) return null;
    if (!jsonEqual(a.id, b.id) || !jsonEqual(a.function.name, b.function.name)) return null;
    if (a.type !== undefined && b.type !== undefined && !jsonEqual(a.type, b.type)) return null;
    if (!toolArgumentsMatch(a.function.arguments, b.function.arguments)) return null;
    if (!jsonEqual(a.function.arguments, b.function.arguments)) argumentsRespelled = true;
    extraKeys.push(...oneSidedKeys(a, b, `tool_calls[${i}]`, ["index", "function"]));
    extraKeys.push(...oneSidedKeys(a.function, b.function, `tool_calls[${i}].function`, []));
  }
  if (!argumentsRespelled && extraKeys.length === 0) return null;
  return { argumentsRespelled, extraKeys, looseToolCallMatches: looseToolCallMessageMatches(stored, replayed) };
}

/** `matcher`, widened to also accept a replay that differs from the stored message only in tool-call spelling. */
export function spellingTolerant(matcher: MessageMatcher): MessageMatcher {
  return (stored, replayed) => matcher(stored, replayed) || toolCallSpellingDifference(stored, replayed) !== null;
}

/** One sentence: what differs at `index` and which matcher setting would keep the turn. */
export function describeSpellingBreak(index: number, difference: ToolCallSpellingDifference): string {
  const parts: string[] = [];
  if (difference.argumentsRespelled) parts.push("tool-call arguments re-serialized (same JSON object, different text)");
  if (difference.extraKeys.length > 0) parts.push(`keys on one side only: ${difference.extraKeys.join(", ")}`);
  const advice = difference.looseToolCallMatches
    ? `start the server with --message-matcher loose_tool_call (messageMatcher: "loose_tool_call") to accept this replay`
    : `loose_tool_call would not accept it either (like the Python matcher it compares every tool-call key): ` +
      `drop those keys on the client before replaying, or use --message-matcher role_content_only`;
  return `the replayed assistant message at index ${index} differs from the stored one only in its tool-call spelling (${parts.join("; ")}); ${advice}`;
}

/**
 * The first request index at which `stored` and `request` disagree under `matcher` while agreeing under its
 * spelling-tolerant widening, with the difference found there; null when no such message exists before the
 * first real divergence. `knownMatched` leading pairs are taken as already found matching under `matcher`.
 */
export function firstSpellingBreak(
  stored: readonly ChatMessage[],
  request: readonly ChatMessage[],
  matcher: MessageMatcher,
  knownMatched = 0,
): { index: number; difference: ToolCallSpellingDifference } | null {
  const n = Math.min(stored.length, request.length);
  for (let i = Math.min(knownMatched, n); i < n; i += 1) {
    if (matcher(stored[i], request[i])) continue;
    const difference = toolCallSpellingDifference(stored[i], request[i]);
    return difference === null ? null : { index: i, difference };
  }
  return null;
}

/** How a request re-sent a stored assistant turn in pieces: as two messages (text, then calls) or as text parts. */
export type SplitTurnForm = "split" | "parts";

/**
 * Where `request` first disagrees with `stored` under `matcher` because it re-sends an assistant turn in pieces,
 * when the built-in `split_assistant_turn` matcher would read the whole of `stored` from it; null otherwise
 * (no such piece, a real difference, or `matcher` already reads pieces). `matched`, when given, is
 * `matchedPrefixLength(stored, request, matcher)` as the caller already computed it.
 */
export function firstSplitTurnBreak(
  stored: readonly ChatMessage[],
  request: readonly ChatMessage[],
  matcher: MessageMatcher,
  matched?: number,
): { index: number; form: SplitTurnForm } | null {
  if (matcher === splitAssistantTurnMessageMatches) return null;
  const index = matched ?? matchedPrefixLength(stored, request, matcher);
  const message = request[index];
  if (index >= stored.length || message === undefined || message.role !== "assistant") return null;
  const next = request[index + 1];
  let form: SplitTurnForm;
  if (next !== undefined && next.role === "assistant" && joinedAssistantTurn(message, next) !== null) form = "split";
  else if (Array.isArray(message.content) && assistantText(message.content, message.tool_calls) !== null) form = "parts";
  else return null;
  const joined = joinSplitAssistantTurns(request);
  if (matchedPrefixLength(stored, joined, splitAssistantTurnMessageMatches) < stored.length) return null;
  return { index, form };
}

/** One sentence: how the turn at `index` arrived in pieces and the matcher setting that reads it as the stored turn. */
export function describeSplitTurnBreak(index: number, form: SplitTurnForm): string {
  const how =
    form === "split"
      ? `the replayed assistant turn at index ${index} arrives split into two assistant messages (its text, then its tool calls)`
      : `the replayed assistant message at index ${index} carries its text as a list of content parts`;
  return `${how}; start the server with --message-matcher split_assistant_turn (messageMatcher: "split_assistant_turn") to read it as the stored turn`;
}
