// One HTTP exchange over an undici dispatcher whose reply is read whole into one Buffer: what every agent and fixture
// call needs. It skips the per-reply body stream of undici's `request`, a cost paid thousands of times per parity run.
import { getGlobalDispatcher, util, type Dispatcher } from "undici";

/** A reply read to its end. */
export interface WholeReply {
  /** HTTP status code. */
  statusCode: number;
  /** Response headers, lower-case names (repeated headers as arrays). */
  headers: Record<string, string | string[] | undefined>;
  /** The whole body (empty for a bodiless reply); possibly a view into a larger socket buffer, so copy what you keep. */
  body: Buffer;
  /**
   * One header as `String(headers[name] ?? "")` reads it (repeated ones joined with ","), found without building
   * {@link WholeReply.headers}. `name` is lower-case.
   */
  header(name: string): string;
}

/** The exchange failed after the status line arrived: the body broke off (reset, timeout, malformed framing). */
export class BrokenReplyError extends Error {
  override readonly name = "BrokenReplyError";
  constructor(
    /** The status the reply had announced. */
    readonly statusCode: number,
    /** undici's error. */
    override readonly cause: Error,
  ) {
    super(`the reply (status ${statusCode}) broke off: ${cause.message}`);
  }
}

/** The body as text: UTF-8 with a leading byte-order mark dropped, as `TextDecoder` and undici's `text()` read it. */
export function replyText(body: Uint8Array): string {
  const start = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  return Buffer.from(body.buffer, body.byteOffset + start, body.byteLength - start).toString("utf8");
}

/** The body in a buffer of its own (a reply's body may be a view into a larger socket buffer). */
export function ownedBytes(body: Uint8Array): Uint8Array {
  return body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : new Uint8Array(body);
}

/** What to send. */
export interface WholeReplyRequest {
  method: Dispatcher.HttpMethod;
  /** Request headers. */
  headers?: Record<string, string>;
  /** Request body, if any. */
  body?: string | Buffer;
  /** undici dispatcher (Agent/Pool/Client); the global one when absent. */
  dispatcher?: Dispatcher;
}

/** An absolute http(s) URL split as undici's dispatch takes it. */
export interface RequestTarget {
  /** `scheme://host:port`. */
  origin: string;
  /** Path and query, starting with `/`. */
  path: string;
}

/**
 * Splits an absolute URL into origin and path (URL-normalized, as undici's `request` would send it).
 * @throws TypeError for a string that is not an absolute URL
 */
export function requestTarget(url: string): RequestTarget {
  const parsed = new URL(url);
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

/**
 * Sends one request and resolves with the whole reply, whatever its status. Rejects with undici's error when no reply
 * arrived (refused connection, reset, timeout, a malformed status line), and with a {@link BrokenReplyError} when the
 * body broke off after the status.
 */
export function fetchWholeReply(target: RequestTarget, request: WholeReplyRequest): Promise<WholeReply> {
  const dispatcher = request.dispatcher ?? getGlobalDispatcher();
  return new Promise<WholeReply>((resolve, reject) => {
    try {
      dispatcher.dispatch(
        { origin: target.origin, path: target.path, method: request.method, headers: request.headers, body: request.body },
        new WholeReplyHandler(resolve, reject),
      );
    } catch (error) {
      reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
}

/**
 * Collects one reply: status, raw headers, body chunks. One object per exchange (no closures); its callback names are
 * the ones every undici major knows (the global dispatcher may be Node's bundled undici): headers, data, completion, error.
 */
class WholeReplyHandler implements Dispatcher.DispatchHandler {
  private statusCode = 0;
  private rawHeaders: Buffer[] | null = null;
  /** The first body chunk, and the later ones when the body came in several. */
  private first: Buffer | null = null;
  private rest: Buffer[] | null = null;
  private length = 0;

  constructor(
    private readonly resolve: (reply: WholeReply) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  onConnect(): void {}

  onHeaders(status: number, raw: Buffer[]): boolean {
    this.statusCode = status;
    this.rawHeaders = raw;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.first === null) this.first = chunk;
    else (this.rest ??= []).push(chunk);
    this.length += chunk.length;
    return true;
  }

  onComplete(): void {
    const first = this.first;
    const body = first === null ? Buffer.alloc(0) : this.rest === null ? first : Buffer.concat([first, ...this.rest], this.length);
    this.resolve(new ReadReply(this.statusCode, this.rawHeaders, body));
  }

  onError(error: Error): void {
    this.reject(this.statusCode === 0 ? error : new BrokenReplyError(this.statusCode, error));
  }
}

/**
 * One header of undici's raw header list as `String(util.parseHeaders(raw)[name] ?? "")` reads it: names matched as undici
 * lower-cases them, values decoded as latin1, repeated ones joined with ",", "" when absent. `name` is lower-case.
 */
export function rawHeaderText(raw: readonly (Buffer | string | Buffer[])[], name: string): string {
  let found: string | null = null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i];
    // lower-casing keeps a latin1 name's length, so a name of another length is not it (and needs no lookup)
    if (Array.isArray(key) || key.length !== name.length || util.headerNameToString(key) !== name) continue;
    const value = raw[i + 1];
    const text = typeof value === "string" ? value : Array.isArray(value) ? value.map((part) => part.toString("latin1")).join(",") : value.toString("latin1");
    found = found === null ? text : `${found},${text}`;
  }
  return found ?? "";
}

/** A reply whose headers are parsed on first read (most callers only look at the status and the body). */
class ReadReply implements WholeReply {
  private parsedHeaders: WholeReply["headers"] | null = null;

  constructor(
    readonly statusCode: number,
    private readonly rawHeaders: Buffer[] | null,
    readonly body: Buffer,
  ) {}

  get headers(): WholeReply["headers"] {
    this.parsedHeaders ??= this.rawHeaders === null ? {} : util.parseHeaders(this.rawHeaders);
    return this.parsedHeaders;
  }

  header(name: string): string {
    if (this.parsedHeaders !== null || this.rawHeaders === null) return String(this.headers[name] ?? "");
    return rawHeaderText(this.rawHeaders, name);
  }
}
