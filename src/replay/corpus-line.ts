// Reads one corpus line: its shape decides between miles' trajectory dump row and an OpenAI chat record.
// Pure: text in, a conversation or the line's problem out (the line number travels with both).
import type { ChatMessage, ToolSpec } from "../tokenizer/types";
import type { CorpusEntry, CorpusFormat, CorpusPosition, RecordedConversation } from "./types";

/** Keys only miles' `trajectory_rows` writes (`miles/ray/rollout/debug_data.py`); a chat record has none of them. */
const DUMP_ROW_KEYS = ["sample_index", "group_index", "status", "reward", "prompt"] as const;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The format a parsed line has: a dump row names at least one of its own keys beside `messages`. */
function formatOf(row: Record<string, unknown>): CorpusFormat {
  return DUMP_ROW_KEYS.some((key) => Object.prototype.hasOwnProperty.call(row, key)) ? "miles" : "openai";
}

/**
 * Minimal tool specs for the functions a conversation calls (structured `tool_calls` only), for records that carry
 * no `tools`: the servers then parse the recorded calls back as the original run's did. Names in first-call order.
 */
function toolsFromCalls(messages: readonly ChatMessage[]): ToolSpec[] {
  const names: string[] = [];
  for (const message of messages) {
    if (!Array.isArray(message.tool_calls)) continue;
    for (const call of message.tool_calls) {
      const name = isObject(call) && isObject(call.function) ? call.function.name : undefined;
      if (typeof name === "string" && name !== "" && !names.includes(name)) names.push(name);
    }
  }
  return names.map((name) => ({ type: "function", function: { name, description: "", parameters: { type: "object", properties: {} } } }));
}

/** How many leading messages are the row's `prompt` (0 unless `prompt` is a message list that `messages` starts with). */
function promptLengthOf(prompt: unknown, messages: readonly ChatMessage[]): number {
  if (!Array.isArray(prompt) || prompt.length > messages.length) return 0;
  for (let i = 0; i < prompt.length; i += 1) if (JSON.stringify(prompt[i]) !== JSON.stringify(messages[i])) return 0;
  return prompt.length;
}

function labelOf(row: Record<string, unknown>, format: CorpusFormat): string | null {
  const value = format === "miles" ? row.sample_index : (row.id ?? row.conversation_id);
  return typeof value === "string" || typeof value === "number" ? String(value) : null;
}

/**
 * The entry of one corpus line, or null for a blank line. A line is malformed when it is not JSON, not an object,
 * has no `messages` array, a message that is not an object with a string `role`, or a `tools` that is not an array.
 * Whether the family can render the conversation is decided later ({@link unrenderableReason}).
 */
export function parseCorpusLine(text: string, position: CorpusPosition): CorpusEntry | null {
  if (text.trim() === "") return null;
  const malformed = (problem: string): CorpusEntry => ({ kind: "malformed", malformed: { ...position, problem } });
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch (error) {
    return malformed(`not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(row)) return malformed(`expected a JSON object with a "messages" array, got ${Array.isArray(row) ? "an array" : typeof row}`);
  if (!Array.isArray(row.messages)) return malformed('no "messages" array (neither a miles trajectory dump row nor an OpenAI chat record)');
  const bad = row.messages.findIndex((message) => !isObject(message) || typeof message.role !== "string");
  if (bad !== -1) return malformed(`messages[${bad}] is not an object with a string "role"`);
  if (row.tools !== undefined && row.tools !== null && !Array.isArray(row.tools)) return malformed('"tools" is not an array');
  const format = formatOf(row);
  const messages = row.messages as ChatMessage[];
  const given = Array.isArray(row.tools) ? (row.tools as ToolSpec[]) : null;
  const conversation: RecordedConversation = {
    ...position,
    format,
    messages,
    tools: given ?? toolsFromCalls(messages),
    promptLength: format === "miles" ? promptLengthOf(row.prompt, messages) : 0,
    label: labelOf(row, format),
  };
  return { kind: "conversation", conversation };
}
