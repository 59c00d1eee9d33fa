// SGLang-style error replies of the mock backend: `{object: "error", message, type, param, code}`.
// One place so the msw handlers and the node:http bridge answer bad input with identical bytes.
import { redactAbsolutePaths } from "../server/redaction";
import { stringifyReplyJson } from "./reply-json";
import { textResponse } from "./response-bodies";

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: "BadRequestError",
  404: "NotFoundError",
  500: "InternalServerError",
  503: "ServiceUnavailableError",
};

/**
 * The JSON body of an error reply with `status`. The message is path-redacted as the session server's error bodies
 * are (the session server re-emits backend replies, so a tokenizer path or a script's stack would reach the client).
 */
function errorBody(status: number, message: string): Record<string, unknown> {
  return { object: "error", message: redactAbsolutePaths(message), type: ERROR_TYPES[status] ?? "Error", param: null, code: status };
}

/**
 * A reply before any transport carries it: msw turns it into a Fetch `Response` ({@link toResponse}), the loopback
 * bridge writes it to the socket as it is. Either way the bytes and headers are these.
 */
export interface MockReply {
  status: number;
  headers: Record<string, string>;
  /** The body (UTF-8 on the wire). */
  readonly text: string;
  /**
   * The body's bytes when it is already written as them, in pieces (their concatenation is `Buffer.from(text)`),
   * which the loopback bridge sends as they are, in one write.
   */
  readonly parts?: readonly Buffer[];
}

/** An error reply with `status` and SGLang's error body. */
export function errorReply(status: number, message: string): MockReply {
  return jsonReply(status, errorBody(status, message));
}

/** A JSON reply with an explicit content length. */
function jsonReply(status: number, body: unknown): MockReply {
  return jsonTextReply(status, stringifyReplyJson(body));
}

/** A JSON reply from its text, already written by the reply writer (same headers as {@link jsonReply}). */
export function jsonTextReply(status: number, text: string): MockReply {
  return { status, text, headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(text, "utf8")) } };
}

/** The Fetch `Response` of a reply, whose text the loopback bridge can take back without reading the stream. */
export function toResponse(reply: MockReply): Response {
  return textResponse(reply.text, { status: reply.status, headers: reply.headers });
}

/** An error reply as a Fetch `Response`. */
export function errorResponse(status: number, message: string): Response {
  return toResponse(errorReply(status, message));
}

/**
 * A JSON reply with an explicit content length (same bytes whichever transport carries it). Built from the JSON
 * text, which the loopback bridge writes directly ({@link knownBodyText}) instead of reading the body stream back.
 */
export function jsonResponse(status: number, body: unknown): Response {
  return toResponse(jsonReply(status, body));
}

/** Message of the 404 reply for a path the backend does not serve. */
export function notFoundMessage(method: string, path: string): string {
  return `no route for ${method} ${path}; the mock backend serves POST /v1/chat/completions, POST /generate, GET /health, POST /abort_request`;
}
