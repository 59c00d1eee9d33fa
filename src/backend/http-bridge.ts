// Serves msw request handlers on a real loopback port through node:http (msw alone only patches fetch/http clients).
// Each request becomes a Fetch Request for msw's getResponse, except on the fast path: a plain-path POST the direct
// route claims (the generation routes) asks the handler's engine itself, Headers built only if read, and its reply
// goes out with the header lines and bytes writeResponse would write (pinned by __tests__/backend/direct-route).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { getResponse, type RequestHandler } from "msw";
import { isUtf8 } from "node:buffer";
import { BodyTooLargeError, checkMaxBodyBytes, DEFAULT_MAX_BODY_BYTES, readBoundedBody } from "../server/bounded-body";
import { errorResponse, type MockReply } from "./errors";
import { knownBodyText } from "./response-bodies";

/** Options of {@link serveHandlers}. */
export interface BridgeOptions {
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port to bind (default 0: a free port). */
  port?: number;
  /** Answers requests no handler matched (default: a 404 JSON error). */
  onUnhandled?: (request: Request) => Response | Promise<Response>;
  /** Request body limit in bytes (default 64 MiB); a larger body is answered 413 before it reaches a handler. */
  maxBodyBytes?: number;
}

/**
 * A route the bridge may take before msw: the reply, or undefined when the request is not one it serves. `headers`
 * builds the request's Fetch Headers on first call (the same object on every call).
 */
export type DirectRoute = (method: string, path: string, body: Buffer, headers: () => Headers) => Promise<MockReply> | undefined;

/** A running bridge. */
export interface HandlerBridge {
  /** `http://host:port` of the bound socket. */
  readonly url: string;
  /** Stops listening and drops every open connection, in-flight requests included. */
  close(): Promise<void>;
}

/** Starts a node:http server that answers every request with the given msw handlers. */
export function serveHandlers(handlers: RequestHandler[], options: BridgeOptions = {}): Promise<HandlerBridge> {
  return serveHandlersWithDirectRoute(handlers, options, undefined);
}

/**
 * {@link serveHandlers} with a direct route tried first: it answers the requests it knows without a Fetch Request
 * and Response (undefined: msw's handlers answer), and must decide exactly as the handlers would (call what they call).
 */
export async function serveHandlersWithDirectRoute(
  handlers: RequestHandler[],
  options: BridgeOptions,
  directRoute: DirectRoute | undefined,
): Promise<HandlerBridge> {
  const host = options.host ?? "127.0.0.1";
  const onUnhandled = options.onUnhandled ?? ((request: Request) => errorResponse(404, `no route for ${request.method} ${new URL(request.url).pathname}`));
  const maxBodyBytes = checkMaxBodyBytes(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  const server = createServer((req, res) => {
    void answer(req, res, handlers, onUnhandled, host, maxBodyBytes, directRoute);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${formatHost(address.address)}:${address.port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function formatHost(address: string): string {
  return address.includes(":") ? `[${address}]` : address;
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  handlers: RequestHandler[],
  onUnhandled: (request: Request) => Response | Promise<Response>,
  host: string,
  maxBodyBytes: number,
  directRoute: DirectRoute | undefined,
): Promise<void> {
  try {
    let body: Buffer;
    try {
      body = await readBoundedBody(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        await writeResponse(res, errorResponse(413, error.message));
        return;
      }
      throw error;
    }
    // Only a plain path (no query, nothing URL parsing would normalize) may take the direct route.
    let headers: Headers | undefined;
    const direct =
      directRoute !== undefined && req.url !== undefined && /^\/[a-z0-9_/]*$/.test(req.url)
        ? directRoute(req.method ?? "GET", req.url, body, () => (headers ??= fetchHeaders(req)))
        : undefined;
    if (direct !== undefined) {
      writeReply(res, await direct);
      return;
    }
    const request = toFetchRequest(req, host, body);
    const response = (await getResponse(handlers, request)) ?? (await onUnhandled(request));
    await writeResponse(res, response);
  } catch (error) {
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    await writeResponse(res, errorResponse(500, `mock backend bridge failed: ${(error as Error).message}`)).catch(() => res.destroy());
  }
}

/** The request's headers as a Fetch Headers, without the hop-by-hop ones. */
function fetchHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    if (name === "connection" || name === "keep-alive" || name === "transfer-encoding") continue;
    headers.append(name, req.rawHeaders[i + 1]);
  }
  return headers;
}

function toFetchRequest(req: IncomingMessage, host: string, body: Buffer): Request {
  const headers = fetchHeaders(req);
  const method = req.method ?? "GET";
  const origin = `http://${req.headers.host ?? formatHost(host)}`;
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(new URL(req.url ?? "/", origin), {
    method,
    headers,
    body: hasBody ? fetchBody(body, headers) : undefined,
  });
}

/**
 * The request body for the Fetch Request: its text when the bytes are UTF-8 and a content type is given (a string
 * body is cheaper for undici to wrap, tee and read back, gives the same bytes, and adds no content type of its own),
 * the bytes otherwise.
 */
function fetchBody(body: Buffer, headers: Headers): Buffer | string {
  return headers.has("content-type") && isUtf8(body) ? body.toString("utf8") : body;
}

/**
 * Writes a reply as {@link writeResponse} writes the Response made from it: the same status, header lines (Fetch
 * Headers iterate in sorted lowercase order, then content-length is set from the body) and body bytes. A reply
 * already written as bytes goes out as its pieces, in the one write that carries the header; otherwise, with only ASCII headers, the body goes to the socket as the
 * text itself, which node encodes as UTF-8 (the bytes `Buffer.from(text)` holds) in the write that carries the header.
 */
function writeReply(res: ServerResponse, reply: MockReply): void {
  if (res.destroyed) return;
  const json = isJsonReplyHeaders(reply.headers);
  const lines: [name: string, value: string][] = [];
  let ascii = true;
  if (!json) {
    for (const name of Object.keys(reply.headers)) {
      // a stable insertion sort of the (few) lowercased names
      const line: [string, string] = [name.toLowerCase(), reply.headers[name]];
      ascii &&= isAscii(line[0]) && isAscii(line[1]);
      let at = lines.length;
      while (at > 0 && lines[at - 1][0] > line[0]) at--;
      lines.splice(at, 0, line);
    }
  }
  const parts = reply.parts;
  const body: string | Buffer | undefined = parts !== undefined ? undefined : ascii ? reply.text : Buffer.from(reply.text, "utf8");
  const length = String(body === undefined ? partsLength(parts) : typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.length);
  let headers: Record<string, string>;
  if (json) {
    // the two lines the sort below would give, in its order
    headers = { "content-length": length, "content-type": "application/json" };
  } else {
    headers = {};
    for (const [name, value] of lines) headers[name] = value;
    headers["content-length"] = length;
  }
  if (body !== undefined || parts === undefined) {
    res.writeHead(reply.status, headers);
    res.end(body);
    return;
  }
  // corked: the header and every piece leave in the one write end() makes
  res.cork();
  res.writeHead(reply.status, headers);
  for (let i = 0; i < parts.length - 1; i++) res.write(parts[i]);
  res.end(parts[parts.length - 1]);
}

function partsLength(parts: readonly Buffer[] | undefined): number {
  let length = 0;
  for (const part of parts ?? []) length += part.length;
  return length;
}

/** True for a JSON reply's own headers: `content-type: application/json` and an ASCII `content-length`, nothing else. */
function isJsonReplyHeaders(headers: Record<string, string>): boolean {
  let count = 0;
  for (const name in headers) {
    if ((name !== "content-type" && name !== "content-length") || !Object.prototype.hasOwnProperty.call(headers, name)) return false;
    count++;
  }
  return count === 2 && headers["content-type"] === "application/json" && typeof headers["content-length"] === "string" && isAscii(headers["content-length"]);
}

/** True when every character is ASCII (only then is a string's UTF-8 byte length its length). */
function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  // A Response made from a known text is written from that text: same bytes, no web-stream read.
  const known = knownBodyText(response);
  const body = known !== undefined && !response.bodyUsed ? Buffer.from(known, "utf8") : Buffer.from(await response.arrayBuffer());
  if (res.destroyed) return;
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  headers["content-length"] = String(body.length);
  res.writeHead(response.status, headers);
  res.end(body);
}
