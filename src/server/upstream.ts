// The session server's only way out: one keep-alive undici Pool per backend for every proxied call.
// Transport failures become a 502 JSON reply shape instead of an exception, as the protocol requires.
import { Pool } from "undici";
import type { IncomingHttpHeaders } from "node:http";
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from "node:zlib";
import { dumpsPy, PY_DEFAULT_JSON } from "../wire/py-json";

/** A raw upstream reply (or a synthesized 502 for a transport failure). */
export interface UpstreamResult {
  /** The backend's status (502 when it could not be reached or its body could not be decoded). */
  status: number;
  /** Reply headers, lower-cased, without `content-encoding` (the body is already decoded). */
  headers: Record<string, string>;
  /** The reply body as identity bytes (gzip/deflate/br undone). */
  body: Buffer;
}

/** Request headers never forwarded: hop-by-hop and framing headers the transport recomputes. */
const DROP_REQUEST_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "expect",
  "te",
  "trailer",
  "proxy-connection",
  "proxy-authorization",
]);

/** Header used by routers to pin one session's requests to one engine. */
export const ROUTING_KEY_HEADER = "X-SMG-Routing-Key";

/** Options of {@link UpstreamClient}. */
export interface UpstreamClientOptions {
  /** Maximum sockets to the backend (default 1024). */
  connections?: number;
  /** Timeout for headers and for body inactivity, in ms. */
  timeoutMs: number;
}

/** One pooled HTTP client to a backend origin (plus optional base path). */
export class UpstreamClient {
  private readonly pool: Pool;
  private readonly basePath: string;
  private closed = false;

  constructor(backendUrl: string, options: UpstreamClientOptions) {
    const url = new URL(backendUrl);
    this.basePath = url.pathname.replace(/\/+$/, "");
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 1024,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }

  /** Forwards one request; never throws for transport problems (returns a 502 result instead). */
  async request(method: string, path: string, query: string, headers: Record<string, string>, body: Buffer | string | null): Promise<UpstreamResult> {
    const fullPath = `${this.basePath}/${path.replace(/^\/+/, "")}${query ? `?${query}` : ""}`;
    try {
      const response = await this.pool.request({
        method: method as "GET",
        path: fullPath,
        headers,
        body: body === null || (method === "GET" || method === "HEAD") ? undefined : body,
      });
      const chunks: Buffer[] = [];
      for await (const chunk of response.body) chunks.push(chunk as Buffer);
      const replyHeaders = flattenHeaders(response.headers);
      const replyBody = decodeContent(Buffer.concat(chunks), replyHeaders["content-encoding"]);
      delete replyHeaders["content-encoding"];
      return { status: response.statusCode, headers: replyHeaders, body: replyBody };
    } catch (error) {
      const err = error as Error;
      const name = (err as { code?: string }).code ?? err.name ?? "Error";
      const message = this.closed ? "session server is closing" : err.message;
      return {
        status: 502,
        headers: { "content-type": "application/json" },
        body: Buffer.from(dumpsPy({ error: `backend transport error: ${name}: ${message}` }, PY_DEFAULT_JSON)),
      };
    }
  }

  /** Aborts in-flight calls and closes every socket. */
  async destroy(): Promise<void> {
    this.closed = true;
    await this.pool.destroy();
  }
}

/**
 * The identity bytes of a reply body sent with `content-encoding` (gzip, deflate, br; comma lists are undone in
 * reverse). The server re-frames every body and never echoes the encoding, so it must hand on plain bytes.
 * @throws Error naming an encoding it cannot undo (reported as a transport error)
 */
function decodeContent(body: Buffer, encoding: string | undefined): Buffer {
  if (encoding === undefined) return body;
  let out = body;
  for (const coding of encoding.split(",").map((part) => part.trim().toLowerCase()).reverse()) {
    if (coding === "" || coding === "identity") continue;
    if (coding === "gzip" || coding === "x-gzip") out = gunzipSync(out);
    else if (coding === "br") out = brotliDecompressSync(out);
    else if (coding === "deflate") out = inflateDeflate(out);
    else throw new Error(`unsupported content-encoding ${JSON.stringify(coding)} in the backend reply`);
  }
  return out;
}

/** HTTP "deflate" is meant to be zlib-wrapped, but some servers send raw deflate. */
function inflateDeflate(body: Buffer): Buffer {
  try {
    return inflateSync(body);
  } catch {
    return inflateRawSync(body);
  }
}

/** Client request headers minus the ones that must not be forwarded, plus the routing key. */
export function forwardHeaders(incoming: IncomingHttpHeaders, routingKey: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || DROP_REQUEST_HEADERS.has(name.toLowerCase())) continue;
    if (name.toLowerCase() === ROUTING_KEY_HEADER.toLowerCase()) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  out[ROUTING_KEY_HEADER] = routingKey;
  return out;
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}
