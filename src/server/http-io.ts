// Small node:http helpers for the session server: write compact JSON, text, SSE or raw bytes.
// Keeping them here lets the route handlers read as protocol rules instead of stream plumbing.
import type { ServerResponse } from "node:http";
import { dumpsPy, dumpsPyBytes, parsePyJson, PY_RESPONSE_JSON, PyJsonWriteError } from "../wire/py-json";
import { findJsonDepthExcess } from "../wire/json-depth";
import { redactAbsolutePaths } from "./redaction";

/** Upstream response headers the server never echoes (it frames its own body; it emits its own date/server). */
const DROP_RESPONSE_HEADERS = new Set(["content-length", "transfer-encoding", "content-encoding", "server", "date", "connection", "keep-alive"]);

/** Writes a body with a status and headers (content-length computed here). */
export function sendBytes(res: ServerResponse, status: number, body: Buffer | string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  res.writeHead(status, { ...headers, "content-length": String(bytes.length) });
  res.end(bytes);
}

/**
 * Writes a body given as chunks (e.g. a samples payload whose replay tensors are views on sample memory)
 * without joining them first: one `write` per chunk, with the exact total as content-length.
 */
export function sendChunks(res: ServerResponse, status: number, chunks: readonly Uint8Array[], headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const length = chunks.reduce((total, chunk) => total + chunk.byteLength, 0);
  res.writeHead(status, { ...headers, "content-length": String(length) });
  for (const chunk of chunks) if (chunk.byteLength > 0) res.write(chunk);
  res.end();
}

/**
 * Writes JSON as Starlette's JSONResponse and miles' `_render_json` do (compact, non-ASCII kept, Python number
 * spelling). A value Python refuses to write (NaN, Infinity) is a plain-text 500, as an exception there is.
 */
export function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  let bytes: Buffer;
  try {
    bytes = dumpsPyBytes(payload, PY_RESPONSE_JSON); // the text's bytes, without joining a view's copied texts first
  } catch (error) {
    if (!(error instanceof PyJsonWriteError)) throw error;
    sendText(res, 500, "Internal Server Error");
    return;
  }
  sendBytes(res, status, bytes, { ...headers, "content-type": "application/json" });
}

/** {@link sendJson}, returning the JSON text written (undefined when the answer was the 500). */
export function sendJsonText(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): string | undefined {
  let text: string;
  try {
    text = dumpsPy(payload, PY_RESPONSE_JSON);
  } catch (error) {
    if (!(error instanceof PyJsonWriteError)) throw error;
    sendText(res, 500, "Internal Server Error");
    return undefined;
  }
  sendBytes(res, status, text, { ...headers, "content-type": "application/json" });
  return text;
}

/**
 * Writes `{"error": message}` with a status. Every JSON error body goes through here, so absolute filesystem paths
 * (a hook's module path, a checkpoint directory, a stack frame) are redacted in one place ({@link redactAbsolutePaths}).
 */
export function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: redactAbsolutePaths(message) }, headers);
}

/** Writes a `text/plain` error body (samples-op failures, as miles answers them), redacted as {@link sendError} does. */
export function sendErrorText(res: ServerResponse, status: number, message: string): void {
  sendText(res, status, redactAbsolutePaths(message));
}

/** Writes a `text/plain` body (samples-op failures). */
function sendText(res: ServerResponse, status: number, text: string): void {
  sendBytes(res, status, text, { "content-type": "text/plain; charset=utf-8" });
}

/** Writes an empty reply (e.g. 204). */
export function sendEmpty(res: ServerResponse, status: number): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status);
  res.end();
}

/** Upstream headers that may be echoed to the client. */
export function passThroughHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!DROP_RESPONSE_HEADERS.has(name.toLowerCase())) out[name] = value;
  }
  return out;
}

/**
 * Re-emits an upstream reply: a JSON body (as Python's json.loads reads it) is re-serialized as {@link sendJson}
 * does, anything else (including JSON nested deeper than the cap, which is never parsed) goes through verbatim
 * with the upstream content type.
 */
export function sendUpstreamReply(res: ServerResponse, status: number, headers: Record<string, string>, body: Buffer): void {
  const kept = passThroughHeaders(headers);
  if (findJsonDepthExcess(body) !== null) {
    sendBytes(res, status, body, kept);
    return;
  }
  let parsed: unknown;
  try {
    parsed = parsePyJson(body.toString("utf8"));
  } catch {
    sendBytes(res, status, body, kept);
    return;
  }
  delete kept["content-type"];
  sendJson(res, status, parsed, kept);
}
