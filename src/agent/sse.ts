// Server-sent-events framing and the fold of OpenAI `chat.completion.chunk` deltas into one completion.
// Pure functions: the HTTP client feeds decoded text in, the agent gets a non-streaming reply shape out.
import type { ChatMessage, ToolCall } from "../tokenizer/types";

/** A JSON object as parsed from the wire. */
export type WireObject = Record<string, unknown>;

/**
 * Incremental SSE parser: feed text as it arrives, receive the `data` payload of each complete event
 * (multi-line data joined with "\n"). Comment lines (`:`) and other fields are ignored.
 */
export class SseDataParser {
  private buffer = "";
  private dataLines: string[] = [];

  /** Consumes a chunk of text and returns the data payloads of the events it completed. */
  push(text: string): string[] {
    this.buffer += text;
    const events: string[] = [];
    let newline: number;
    while ((newline = this.buffer.search(/\r\n|\n|\r/)) !== -1) {
      // A lone "\r" at the end of the buffer may be the first half of "\r\n": wait for more text.
      if (this.buffer[newline] === "\r" && newline === this.buffer.length - 1) break;
      const width = this.buffer.startsWith("\r\n", newline) ? 2 : 1;
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + width);
      this.takeLine(line, events);
    }
    return events;
  }

  /** Ends the stream: a trailing unterminated line and a pending event are still delivered. */
  end(): string[] {
    const events: string[] = [];
    if (this.buffer.length > 0) this.takeLine(this.buffer.replace(/\r$/, ""), events);
    this.buffer = "";
    if (this.dataLines.length > 0) events.push(this.dataLines.join("\n"));
    this.dataLines = [];
    return events;
  }

  private takeLine(line: string, events: string[]): void {
    if (line === "") {
      if (this.dataLines.length > 0) events.push(this.dataLines.join("\n"));
      this.dataLines = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== "data") return;
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    this.dataLines.push(value);
  }
}

/**
 * The data payloads of a whole SSE stream: what {@link SseDataParser} delivers for `push(text)` then `end()`, read in
 * one pass over the text (no buffer re-sliced per line). A text with a carriage return takes the parser itself.
 */
export function sseDataPayloads(text: string): string[] {
  if (text.indexOf("\r") !== -1) {
    const parser = new SseDataParser();
    const events = parser.push(text);
    for (const data of parser.end()) events.push(data);
    return events;
  }
  const events: string[] = [];
  let pending: string | null = null;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    if (end === start) {
      // a blank line ends the event
      if (pending !== null) events.push(pending);
      pending = null;
    } else if (text.startsWith("data", start) && (end === start + 4 || text.charCodeAt(start + 4) === 0x3a)) {
      // "data" or "data:value": one leading space of the value is dropped; other fields and comments are skipped
      let from = Math.min(start + 5, end);
      if (from < end && text.charCodeAt(from) === 0x20) from += 1;
      const value = text.slice(from, end);
      pending = pending === null ? value : `${pending}\n${value}`;
    }
    start = end + 1;
  }
  if (pending !== null) events.push(pending);
  return events;
}

/** The non-streaming completion shape rebuilt from chunks (only the fields the agent relies on are typed). */
export interface FoldedChatCompletion {
  /** `id` of the first chunk. */
  id: unknown;
  /** Always `chat.completion`: the non-streaming object type. */
  object: "chat.completion";
  /** `created` of the first chunk. */
  created: unknown;
  /** `model` of the first chunk. */
  model: unknown;
  /** The single folded choice: the assistant message and the last finish reason. */
  choices: [{ index: 0; message: ChatMessage; finish_reason: string | null }];
  /** The last non-null `usage` of the stream, when any chunk carried one. */
  usage?: unknown;
}

/**
 * Folds `chat.completion.chunk` objects into one completion: `content` and `reasoning_content`
 * fragments concatenate, tool-call fragments merge by `index` (name set, arguments concatenated, other
 * non-null keys kept) and lose their streaming-only `index`; the last finish reason and usage win.
 *
 * @param label names the call in error messages.
 * @throws Error when there are no chunks, a chunk is not a `chat.completion.chunk`, or it has not exactly one choice.
 */
export function foldChatChunks(chunks: readonly unknown[], label = "chat"): FoldedChatCompletion {
  if (chunks.length === 0) throw new Error(`${label}: the SSE stream held no chunk before [DONE]`);
  const message: ChatMessage = { role: "assistant", content: null };
  const toolCalls = new Map<number, WireObject & { function: WireObject }>();
  let finishReason: string | null = null;
  let usage: unknown = undefined;

  chunks.forEach((chunk, position) => {
    if (!isObject(chunk) || chunk.object !== "chat.completion.chunk") {
      throw new Error(`${label}: SSE event ${position} is not a chat.completion.chunk: ${JSON.stringify(chunk)}`);
    }
    const choices = chunk.choices;
    if (!Array.isArray(choices) || choices.length !== 1 || !isObject(choices[0])) {
      throw new Error(`${label}: SSE chunk ${position} must hold exactly one choice, got ${JSON.stringify(choices)}`);
    }
    const choice = choices[0];
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (typeof delta.role === "string" && delta.role !== "") message.role = delta.role;
    if (typeof delta.content === "string") message.content = (typeof message.content === "string" ? message.content : "") + delta.content;
    if (typeof delta.reasoning_content === "string") message.reasoning_content = (message.reasoning_content ?? "") + delta.reasoning_content;
    if (Array.isArray(delta.tool_calls)) {
      for (const fragment of delta.tool_calls) mergeToolCallFragment(toolCalls, fragment, label, position);
    }
    if (typeof choice.finish_reason === "string" && choice.finish_reason !== "") finishReason = choice.finish_reason;
    if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage;
  });

  if (toolCalls.size > 0) {
    message.tool_calls = [...toolCalls.keys()].sort((a, b) => a - b).map((index) => toolCalls.get(index) as unknown as ToolCall);
  }
  const first = chunks[0] as WireObject;
  const completion: FoldedChatCompletion = {
    id: first.id,
    object: "chat.completion",
    created: first.created,
    model: first.model,
    choices: [{ index: 0, message, finish_reason: finishReason }],
  };
  if (usage !== undefined) completion.usage = usage;
  return completion;
}

function mergeToolCallFragment(toolCalls: Map<number, WireObject & { function: WireObject }>, fragment: unknown, label: string, position: number): void {
  if (!isObject(fragment) || !Number.isSafeInteger(fragment.index)) {
    throw new Error(`${label}: SSE chunk ${position} has a tool-call fragment without an integer index: ${JSON.stringify(fragment)}`);
  }
  const index = fragment.index as number;
  let entry = toolCalls.get(index);
  if (entry === undefined) {
    entry = {} as WireObject & { function: WireObject };
    toolCalls.set(index, entry);
  }
  // Keys keep their wire order (id, type, function, ...); only the streaming-only index is dropped.
  for (const [key, value] of Object.entries(fragment)) {
    if (key === "index") continue;
    if (key === "function") {
      mergeFunctionFragment(entry, value);
      continue;
    }
    if (value !== null && value !== undefined) entry[key] = value;
  }
  if (!isObject(entry.function)) entry.function = {};
}

function mergeFunctionFragment(entry: WireObject & { function: WireObject }, fn: unknown): void {
  if (!isObject(entry.function)) entry.function = {};
  if (!isObject(fn)) return;
  if (typeof fn.name === "string") entry.function.name = fn.name;
  if (typeof fn.arguments === "string") {
    entry.function.arguments = (typeof entry.function.arguments === "string" ? entry.function.arguments : "") + fn.arguments;
  }
}

function isObject(value: unknown): value is WireObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
