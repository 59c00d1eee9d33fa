// The session server's only way out: one keep-alive undici Pool per backend for every proxied call.
// Transport failures become a 502 JSON reply shape instead of an exception, as the protocol requires.
import { Client, Pool, type Dispatcher } from "undici";
import type { IncomingHttpHeaders } from "node:http";
import { dumpsPy, PY_DEFAULT_JSON } from "../wire/py-json";
import { PassThrough, Transform, Writable, type TransformCallback } from "node:stream";
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
    const options: Dispatcher.DispatchOptions = {
      origin: this.origin,
      method: method,
      path: fullPath,
      headers,
      body: body === null || method === "GET" || method === "HEAD" ? undefined : body,
    };
    const deadline = new CallDeadline(this.timeoutMs);
    try {
      let attempt = await this.attempt(this.pool, options, deadline);
      if (attempt.kind === "failed" && attempt.beforeReply && isStaleConnection(attempt.error) && !deadline.expired && !this.closed) {
        const fresh = new Client(this.origin, { pipelining: 1, headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs });
        this.freshClients.add(fresh);
        try {
          attempt = await this.attempt(fresh, options, deadline);
        } finally {
          this.freshClients.delete(fresh);
          void fresh.close().catch(() => undefined);
        }
      }
      if (attempt.kind === "reply") return attempt.result;
      return transportFailure(this.describeFailure(attempt.error, deadline));
    } finally {
      deadline.clear();
    }
  }

  /**
   * One exchange over `dispatcher`, read whole with undici's dispatch callbacks (no body stream for a plain reply).
   * Settles once: with the reply, or with the failure and whether any reply had started.
   */
  private attempt(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, deadline: CallDeadline): Promise<Attempt> {
    return new Promise<Attempt>((resolve) => {
      let settled = false;
      let started = false;
      let controller: Dispatcher.DispatchController | null = null;
      let replyHeaders: Record<string, string> = {};
      let status = 0;
      let plain: Buffer[] | null = null;
      let total = 0;
      let decoding: PassThrough | null = null;
      const settle = (attempt: Attempt): void => {
        if (settled) return;
        settled = true;
        deadline.onExpire(null);
        resolve(attempt);
      };
      const fail = (error: Error): void => {
        decoding?.destroy();
        if (!settled) controller?.abort(error);
        settle({ kind: "failed", error, beforeReply: !started });
      };
      deadline.onExpire(fail);
      const cap = this.maxReplyBytes;
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(requestController) {
          controller = requestController;
          if (settled) requestController.abort(deadline.error);
        },
        onResponseStart(_controller, statusCode, headers) {
          started = true;
          status = statusCode;
          replyHeaders = flattenHeaders(headers);
          const encoding = replyHeaders["content-encoding"];
          delete replyHeaders["content-encoding"];
          let decoders: NodeJS.ReadWriteStream[];
          try {
            decoders = contentDecoders(encoding);
          } catch (error) {
            fail(error as Error);
            return;
          }
          if (decoders.length === 0) {
            plain = [];
            return;
          }
          // An encoded body goes through its decoders as a stream, so the cap stops an inflating bomb early.
          const source = new PassThrough();
          decoding = source;
          source.on("drain", () => controller?.resume());
          decodeStream(source, decoders, cap).then(
            (decoded) => settle({ kind: "reply", result: { status, headers: replyHeaders, body: decoded } }),
            (error: unknown) => fail(error as Error),
          );
        },
        onResponseData(dataController, chunk) {
          if (settled) return;
          if (decoding !== null) {
            if (!decoding.write(chunk)) dataController.pause();
            return;
          }
          total += chunk.length;
          if (total > cap) {
            fail(new ReplyTooLargeError(cap));
            return;
          }
          plain?.push(chunk);
        },
        onResponseEnd() {
          if (decoding !== null) {
            decoding.end();
            return;
          }
          const chunks = plain ?? [];
          settle({ kind: "reply", result: { status, headers: replyHeaders, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total) } });
        },
        onResponseError(_controller, error) {
          fail(error);
        },
      };
      try {
        dispatcher.dispatch(options, handler);
      } catch (error) {
        fail(error as Error);
      }
    });
  }

  private describeFailure(error: Error, deadline: CallDeadline): string {
    if (error instanceof ReplyTooLargeError) return error.message;
    if (deadline.expired) return deadline.error.message;
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
 * The decoders undoing a `content-encoding` (gzip, deflate, br; a comma list is undone in reverse), none for an
 * identity body. The server re-frames every body, so it hands on plain bytes.
 * @throws Error naming an encoding it cannot undo (reported as a transport error)
 */
function contentDecoders(encoding: string | undefined): NodeJS.ReadWriteStream[] {
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
  return decoders;
}

/**
 * Decodes an encoded body as a stream and stops as soon as the decoded bytes pass `cap`: a small compressed body
 * that would inflate to gigabytes costs at most `cap` bytes of memory.
 * @throws ReplyTooLargeError past the cap; the decoder's error for a corrupt body
 */
async function decodeStream(source: PassThrough, decoders: NodeJS.ReadWriteStream[], cap: number): Promise<Buffer> {
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
  await pipeline([source, ...decoders, sink]);
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
}

/** The deadline of one call, both attempts included: whoever is waiting hears of it once. */
class CallDeadline {
  expired = false;
  private listener: ((error: Error) => void) | null = null;
  private readonly timer: NodeJS.Timeout;
  private expiredError: DeadlineError | null = null;

  constructor(private readonly timeoutMs: number) {
    this.timer = setTimeout(() => {
      this.expired = true;
      this.listener?.(this.error);
    }, timeoutMs);
  }

  /** The deadline's error, made when first needed (an Error's stack trace is not free, and most calls never expire). */
  get error(): DeadlineError {
    this.expiredError ??= new DeadlineError(this.timeoutMs);
    return this.expiredError;
  }

  /** Who to tell when the deadline passes (null: nobody is waiting). */
  onExpire(listener: ((error: Error) => void) | null): void {
    this.listener = listener;
  }

  clear(): void {
    clearTimeout(this.timer);
    this.listener = null;
  }
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
