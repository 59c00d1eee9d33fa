// The session server's only way out: one keep-alive undici Pool per backend for every proxied call.
// Transport failures become a 502 JSON reply shape instead of an exception, as the protocol requires.
import { Client, Pool, type Dispatcher } from "undici";
import type { IncomingHttpHeaders } from "node:http";
import { dumpsPy, PY_DEFAULT_JSON } from "../wire/py-json";
import { Transform, Writable, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from "node:zlib";

/** Default cap on a backend reply body after decompression: 256 MiB (room for long replies with replay tensors). */
export const DEFAULT_MAX_REPLY_BYTES = 256 * 1024 * 1024;

/** Default upstream deadline: 600 s for the status line, headers and the whole body of one call. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 600_000;

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

/** Errors of a connection the backend closed or reset; retried once when no reply had started yet. */
const STALE_CONNECTION_CODES = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET"]);

/** Header used by routers to pin one session's requests to one engine. */
export const ROUTING_KEY_HEADER = "X-SMG-Routing-Key";

/** Options of {@link UpstreamClient}. */
export interface UpstreamClientOptions {
  /** Maximum sockets to the backend (default 1024). */
  connections?: number;
  /** Deadline of one call in ms: status line, headers and the whole body (retry included). */
  timeoutMs: number;
  /** Cap on the decoded reply body in bytes (default {@link DEFAULT_MAX_REPLY_BYTES}). */
  maxReplyBytes?: number;
}

/** The reply grew past the cap while it was read or inflated. */
class ReplyTooLargeError extends Error {
  constructor(readonly cap: number) {
    super(`backend reply exceeds the ${cap}-byte reply cap (counted after decompression)`);
  }
}

/** The call's deadline passed. */
class DeadlineError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`backend did not send a complete reply within the ${timeoutMs} ms upstream deadline`);
  }
}

type Attempt = { kind: "reply"; result: UpstreamResult } | { kind: "failed"; error: Error; beforeReply: boolean };

/** One pooled HTTP client to a backend origin (plus optional base path). */
export class UpstreamClient {
  private readonly pool: Pool;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly timeoutMs: number;
  private readonly maxReplyBytes: number;
  private closed = false;
  private readonly freshClients = new Set<Client>();

  constructor(backendUrl: string, options: UpstreamClientOptions) {
    const url = new URL(backendUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs;
    this.maxReplyBytes = options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 1024,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      // The deadline below bounds the whole call; these only stop undici from cutting it shorter.
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }

  /**
   * Forwards one request; never throws for transport problems (returns a 502 result instead). A request whose
   * pooled connection fails with a reset, `EPIPE` or a peer close before any reply arrived (a keep-alive socket
   * the backend closed while idle) is sent once more on a fresh connection. The deadline covers both attempts.
   */
  async request(method: string, path: string, query: string, headers: Record<string, string>, body: Buffer | string | null): Promise<UpstreamResult> {
    const fullPath = `${this.basePath}/${path.replace(/^\/+/, "")}${query ? `?${query}` : ""}`;
    const options: Dispatcher.RequestOptions = {
      method: method,
      path: fullPath,
      headers,
      body: body === null || method === "GET" || method === "HEAD" ? undefined : body,
    };
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DeadlineError(this.timeoutMs)), this.timeoutMs);
    try {
      let attempt = await this.attempt(this.pool, options, deadline.signal);
      if (attempt.kind === "failed" && attempt.beforeReply && isStaleConnection(attempt.error) && !deadline.signal.aborted && !this.closed) {
        const fresh = new Client(this.origin, { pipelining: 1, headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs });
        this.freshClients.add(fresh);
        try {
          attempt = await this.attempt(fresh, options, deadline.signal);
        } finally {
          this.freshClients.delete(fresh);
          void fresh.close().catch(() => undefined);
        }
      }
      if (attempt.kind === "reply") return attempt.result;
      return transportFailure(this.describeFailure(attempt.error, deadline.signal));
    } finally {
      clearTimeout(timer);
    }
  }

  private async attempt(dispatcher: Dispatcher, options: Dispatcher.RequestOptions, signal: AbortSignal): Promise<Attempt> {
    let response: Dispatcher.ResponseData;
    try {
      response = await dispatcher.request({ ...options, signal });
    } catch (error) {
      return { kind: "failed", error: error as Error, beforeReply: true };
    }
    try {
      const replyHeaders = flattenHeaders(response.headers);
      const replyBody = await readDecodedBody(response.body, replyHeaders["content-encoding"], this.maxReplyBytes, signal);
      delete replyHeaders["content-encoding"];
      return { kind: "reply", result: { status: response.statusCode, headers: replyHeaders, body: replyBody } };
    } catch (error) {
      response.body.destroy();
      return { kind: "failed", error: error as Error, beforeReply: false };
    }
  }

  private describeFailure(error: Error, signal: AbortSignal): string {
    if (error instanceof ReplyTooLargeError) return error.message;
    if (signal.aborted && signal.reason instanceof DeadlineError) return signal.reason.message;
    const name = (error as { code?: string }).code ?? error.name ?? "Error";
    const message = this.closed ? "session server is closing" : error.message;
    return `backend transport error: ${name}: ${message}`;
  }

  /** Aborts in-flight calls and closes every socket. */
  async destroy(): Promise<void> {
    this.closed = true;
    await Promise.all([this.pool.destroy(), ...[...this.freshClients].map((client) => client.destroy())]);
  }
}

function isStaleConnection(error: Error): boolean {
  return STALE_CONNECTION_CODES.has((error as { code?: string }).code ?? "");
}

function transportFailure(message: string): UpstreamResult {
  return {
    status: 502,
    headers: { "content-type": "application/json" },
    body: Buffer.from(dumpsPy({ error: message }, PY_DEFAULT_JSON)),
  };
}

/**
 * Reads a reply body, undoing its `content-encoding` (gzip, deflate, br; a comma list is undone in reverse) as a
 * stream, and stops as soon as the decoded bytes pass `cap`: a small compressed body that would inflate to
 * gigabytes costs at most `cap` bytes of memory. The server re-frames every body, so it hands on plain bytes.
 * @throws ReplyTooLargeError past the cap; Error naming an encoding it cannot undo (reported as a transport error)
 */
async function readDecodedBody(body: NodeJS.ReadableStream, encoding: string | undefined, cap: number, signal: AbortSignal): Promise<Buffer> {
  const decoders: NodeJS.ReadWriteStream[] = [];
  for (const coding of (encoding ?? "")
    .split(",")
    .map((part) => part.trim().toLowerCase())
    .reverse()) {
    if (coding === "" || coding === "identity") continue;
    if (coding === "gzip" || coding === "x-gzip") decoders.push(createGunzip());
    else if (coding === "br") decoders.push(createBrotliDecompress());
    else if (coding === "deflate") decoders.push(new DeflateDecoder());
    else throw new Error(`unsupported content-encoding ${JSON.stringify(coding)} in the backend reply`);
  }
  if (decoders.length === 0) return readPlainBody(body, cap);
  const chunks: Buffer[] = [];
  let total = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      if (total > cap) {
        chunks.length = 0;
        done(new ReplyTooLargeError(cap));
        return;
      }
      chunks.push(chunk);
      done();
    },
  });
  await pipeline([body, ...decoders, sink], { signal });
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
}

/**
 * The common case, a body without content-encoding, read with plain stream events: a pipeline with a Writable sink
 * and an abort signal cost an AbortController (and its DOMException) per call. undici aborts the body itself when the
 * request's deadline signal fires, which arrives here as an `error`.
 */
function readPlainBody(body: NodeJS.ReadableStream, cap: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const finish = (error: Error | null): void => {
      if (settled) return;
      settled = true;
      body.removeListener("data", onData);
      body.removeListener("end", onEnd);
      body.removeListener("error", onError);
      body.removeListener("close", onClose);
      if (error === null) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
      else reject(error);
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (total > cap) {
        chunks.length = 0;
        finish(new ReplyTooLargeError(cap));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish(null);
    const onError = (error: Error): void => finish(error);
    const onClose = (): void => finish(new Error("the backend reply body closed before its end"));
    body.on("data", onData);
    body.once("end", onEnd);
    body.once("error", onError);
    body.once("close", onClose);
  });
}

/**
 * HTTP "deflate" is meant to be zlib-wrapped, but some servers send raw deflate: the first two bytes decide
 * (a zlib header is a multiple of 31 with compression method 8), then the matching inflater runs.
 */
class DeflateDecoder extends Transform {
  private inner: Transform | null = null;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.inner === null) {
      const zlibWrapped = chunk.length >= 2 && (chunk[0] & 0x0f) === 8 && ((chunk[0] << 8) | chunk[1]) % 31 === 0;
      this.inner = zlibWrapped ? createInflate() : createInflateRaw();
      this.inner.on("data", (out: Buffer) => this.push(out));
      this.inner.on("error", (error) => this.destroy(error));
    }
    this.inner.write(chunk, () => done());
  }

  override _flush(done: TransformCallback): void {
    if (this.inner === null) return done();
    this.inner.once("end", () => done());
    this.inner.end();
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    this.inner?.destroy();
    done(error);
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
