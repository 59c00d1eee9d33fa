// The agent's HTTP edge: one OpenAI chat-completions call over undici, streamed (SSE) or not.
// A streamed reply is folded back into the non-streaming shape so the agent never sees the difference.
import type { Dispatcher } from "undici";
import { foldChatChunks, sseDataPayloads, type WireObject } from "./sse";
import { BrokenReplyError, fetchWholeReply, replyText, requestTarget, type RequestTarget, type WholeReply } from "./whole-reply";
import type { ChatMessage } from "../tokenizer/types";

/** A failed chat call: names the driver step, the HTTP status (0 for a transport/protocol failure) and the body. */
export class AgentChatError extends Error {
  constructor(
    /** The driver step that made the call, e.g. `"step 3 tool_result"`. */
    readonly step: string,
    /** HTTP status of the reply; 0 when the failure was not an HTTP status. */
    readonly status: number,
    /** Reply body text (or the protocol problem). */
    readonly body: string,
  ) {
    super(`weather agent: ${step} chat call failed (status ${status}): ${body}`);
    this.name = "AgentChatError";
  }
}

/** What the agent needs from a chat reply: the first choice's assistant message, plus the raw reply. */
export interface ChatReply {
  /** The assistant message of `choices[0]` (streamed replies folded, tool-call `index` dropped). */
  message: ChatMessage;
  /** `choices[0].finish_reason`, or null when absent. */
  finishReason: string | null;
  /** The whole reply object (the folded completion for a streamed call). */
  raw: WireObject;
}

/** Options of {@link postChatCompletion}. */
export interface ChatCallOptions {
  /** Full URL of the chat-completions route (or its origin and path, split once by the caller). */
  url: string | RequestTarget;
  /**
   * Request body without `stream` (added here when streaming), or the bytes to send as they are (the caller spelled
   * `stream` in them, as the weather agent's `ChatBodyWriter` does).
   */
  body: WireObject | Buffer;
  /** Ask for SSE and fold the chunks (default true). */
  stream?: boolean;
  /** undici dispatcher (Agent/Pool); the global one when absent. */
  dispatcher?: Dispatcher;
  /** Step label used in errors. */
  step: string;
  /** Extra request headers (e.g. the fuzz agent's call index). */
  headers?: Record<string, string>;
}

/**
 * POSTs one chat completion and returns the assistant message.
 * @throws AgentChatError on a non-200 status, a malformed reply, an SSE stream without `[DONE]` or a transport failure.
 */
export async function postChatCompletion(options: ChatCallOptions): Promise<ChatReply> {
  const stream = options.stream ?? true;
  const body = options.body;
  let target: RequestTarget;
  try {
    target = typeof options.url === "string" ? requestTarget(options.url) : options.url;
  } catch (error) {
    throw new AgentChatError(options.step, 0, `invalid URL ${JSON.stringify(options.url)}: ${errorText(error)}`);
  }
  let reply: WholeReply;
  try {
    reply = await fetchWholeReply(target, {
      method: "POST",
      headers: requestHeaders(options.headers, stream),
      body: Buffer.isBuffer(body) ? body : JSON.stringify(stream ? { ...body, stream: true } : body),
      dispatcher: options.dispatcher,
    });
  } catch (error) {
    // A reply cut off mid-body is a broken stream; no reply at all is a transport failure.
    if (error instanceof BrokenReplyError)
      throw new AgentChatError(options.step, error.statusCode, `${stream ? "SSE stream" : "reply body"} broke: ${error.cause.message}`);
    throw new AgentChatError(options.step, 0, `transport error: ${errorText(error)}`);
  }
  if (reply.statusCode !== 200) throw new AgentChatError(options.step, reply.statusCode, replyText(reply.body));
  const raw = stream ? readStreamedCompletion(reply, options.step) : readJsonCompletion(reply, options.step);
  return extractAssistant(raw, options.step);
}

/** The call's headers, a fresh object each time (an interceptor down the dispatcher may change what it is given). */
function requestHeaders(extra: Record<string, string> | undefined, stream: boolean): Record<string, string> {
  if (extra === undefined) return { "content-type": "application/json", accept: stream ? "text/event-stream" : "application/json" };
  return { ...extra, "content-type": "application/json", accept: stream ? "text/event-stream" : "application/json" };
}

function readJsonCompletion(reply: WholeReply, step: string): WireObject {
  const text = replyText(reply.body);
  try {
    return JSON.parse(text) as WireObject;
  } catch {
    throw new AgentChatError(step, reply.statusCode, `reply is not JSON: ${text.slice(0, 500)}`);
  }
}

function readStreamedCompletion(reply: WholeReply, step: string): WireObject {
  const contentType = reply.header("content-type");
  if (!contentType.startsWith("text/event-stream")) {
    const text = replyText(reply.body);
    throw new AgentChatError(step, reply.statusCode, `expected text/event-stream, got content-type ${JSON.stringify(contentType)}: ${text.slice(0, 500)}`);
  }
  const chunks: unknown[] = [];
  let done = false;
  // The agent needs the whole stream before it acts (the fold ends at [DONE]), so the body is read in one piece:
  // an async iteration per socket chunk cost more than the parse itself at 256 concurrent trajectories.
  for (const data of sseDataPayloads(replyText(reply.body))) {
    if (done) throw new AgentChatError(step, reply.statusCode, `SSE event after [DONE]: ${data.slice(0, 200)}`);
    if (data === "[DONE]") {
      done = true;
      continue;
    }
    try {
      chunks.push(JSON.parse(data));
    } catch {
      throw new AgentChatError(step, reply.statusCode, `SSE data is not JSON: ${data.slice(0, 200)}`);
    }
  }
  if (!done) throw new AgentChatError(step, reply.statusCode, "SSE stream ended without data: [DONE]");
  try {
    return foldChatChunks(chunks, step) as unknown as WireObject;
  } catch (error) {
    throw new AgentChatError(step, reply.statusCode, errorText(error));
  }
}

function extractAssistant(raw: WireObject, step: string): ChatReply {
  const choices = raw.choices;
  const first = Array.isArray(choices) ? (choices[0] as unknown) : undefined;
  const message = typeof first === "object" && first !== null ? (first as WireObject).message : undefined;
  if (typeof message !== "object" || message === null || typeof (message as WireObject).role !== "string") {
    throw new AgentChatError(step, 200, `reply has no choices[0].message: ${JSON.stringify(raw).slice(0, 500)}`);
  }
  const finish = (first as WireObject).finish_reason;
  return { message: message as ChatMessage, finishReason: typeof finish === "string" ? finish : null, raw };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
