// The cassette backend on a loopback port: answers generation calls from a cassette, bit for bit, and (given an
// upstream) records what the cassette lacks by proxying it to a real SGLang-compatible server, one line per exchange.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { isUtf8 } from "node:buffer";
import { request as undiciRequest } from "undici";
import { BodyTooLargeError, checkMaxBodyBytes, DEFAULT_MAX_BODY_BYTES, readBoundedBody } from "../server/bounded-body";
import { errorReply } from "./errors";
import type { CassetteReply } from "./cassette-codec";
import { keyRequest, type KeyedRequest } from "./cassette-key";
import { CassetteStore } from "./cassette-store";
import { cassetteVocabulary, type CassetteModelChoice, type CassetteVocabulary } from "./cassette-vocabulary";

/** A cassette named where a backend may be: its file, and the upstream to record from (absent: replay only). */
export interface CassetteSource {
  /** The cassette file. */
  file: string;
  /** Record what the cassette lacks from this SGLang-compatible URL (absent: replay only). */
  upstream?: string;
}

/** A cassette option as the fixture, the environment and the commands take it: a file to replay, or a {@link CassetteSource}. */
export type CassetteOption = string | CassetteSource;

/** The {@link CassetteSource} of a cassette option. @throws Error naming `where` when it is neither a file name nor a source */
export function cassetteSource(option: CassetteOption, where: string): CassetteSource {
  if (typeof option === "string" && option.trim() !== "") return { file: option };
  if (option !== null && typeof option === "object" && typeof option.file === "string" && option.file.trim() !== "") {
    if (option.upstream !== undefined && typeof option.upstream !== "string") throw new Error(`${where}: cassette.upstream must be a URL string`);
    return { file: option.file, upstream: option.upstream };
  }
  throw new Error(`${where}: cassette must be a file name or { file, upstream? }, got ${JSON.stringify(option)}`);
}

/** Options of {@link startCassetteBackend}. */
export interface CassetteBackendOptions extends CassetteModelChoice {
  /** The cassette file (JSONL). Replay: it must exist. Record: created when missing, else appended to. */
  cassette: string;
  /** Record: every generation call the cassette lacks is proxied here and appended (an SGLang-compatible base URL). */
  upstream?: string;
  /** The vocabulary served (default: from `titoModel` and `hfCheckpoint`). */
  vocabulary?: CassetteVocabulary;
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port to bind (default 0: a free port). */
  port?: number;
  /** Request body limit in bytes (default 64 MiB). */
  maxBodyBytes?: number;
  /** Where warnings go (default `process.emitWarning`). */
  warn?: (message: string) => void;
}

/** What a cassette backend has done since it started. */
export interface CassetteCounts {
  /** Calls answered from the cassette. */
  replayed: number;
  /** Calls proxied upstream and appended. */
  recorded: number;
  /** Calls that found no recording (answered 404 in replay). */
  missed: number;
}

/** A running cassette backend. */
export interface CassetteBackend {
  /** Base URL, `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** `"record"` with an upstream, else `"replay"`. */
  readonly mode: "replay" | "record";
  /** Interactions the cassette holds now. */
  readonly size: number;
  /** Counts since start. */
  readonly counts: Readonly<CassetteCounts>;
  /** Stops listening, drops open connections and closes the cassette. */
  close(): Promise<void>;
}

const GENERATION_PATHS: ReadonlySet<string> = new Set(["/generate", "/v1/chat/completions"]);
const DROPPED_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "accept-encoding",
  "upgrade",
  "te",
  "trailer",
  "expect",
]);

/**
 * Starts a cassette backend. Replay (no `upstream`): a generation call whose key is recorded gets the recorded reply
 * byte for byte; any other gets `404` naming the request and the nearest recorded one, never an invented reply.
 * Record: recorded keys are replayed the same way, the rest go upstream and each 200 reply is appended as one line
 * (concurrent calls of one key go upstream once). `GET /health` answers 200.
 * @throws CassetteError when the cassette is refused (another vocabulary or format version, a bad line, a key recorded twice with different replies)
 */
export async function startCassetteBackend(options: CassetteBackendOptions): Promise<CassetteBackend> {
  const vocabulary = options.vocabulary ?? (await cassetteVocabulary(options));
  const upstream = options.upstream === undefined ? undefined : options.upstream.replace(/\/+$/, "");
  const store = CassetteStore.open({ file: options.cassette, vocabulary, record: upstream !== undefined, warn: options.warn });
  const maxBodyBytes = checkMaxBodyBytes(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  const counts: CassetteCounts = { replayed: 0, recorded: 0, missed: 0 };
  const inFlight = new Map<string, Promise<Upstreamed>>();
  // a body sent again (both versions, every trajectory of a batch send the same prompts) is keyed once
  const keys = new BodyKeyMemo();
  // each recorded reply as the bytes written, made once
  const prepared = new Map<string, Upstreamed>();

  const generation = async (path: string, req: IncomingMessage, body: Buffer): Promise<Upstreamed> => {
    const text = body.toString("utf8");
    let request = keys.get(path, text);
    if (request === undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        return fromError(400, `request body is not valid JSON (${(error as Error).message})`);
      }
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return fromError(400, "request body must be a JSON object");
      request = keyRequest(path, parsed as Record<string, unknown>);
      keys.set(path, text, request);
    }
    const ready = prepared.get(request.key);
    if (ready !== undefined) {
      counts.replayed++;
      return ready;
    }
    const recorded = store.lookup(request.key);
    if (recorded !== undefined) {
      counts.replayed++;
      const reply = { ...recorded, bytes: Buffer.from(recorded.body, "utf8") };
      prepared.set(request.key, reply);
      return reply;
    }
    if (upstream === undefined) {
      counts.missed++;
      return fromError(404, store.missMessage(request));
    }
    let pending = inFlight.get(request.key);
    if (pending === undefined) {
      pending = forward(upstream, req, path, body).then((reply) => {
        if (reply.status === 200 && reply.recordable) {
          store.append({ request, reply });
          counts.recorded++;
        }
        return reply;
      });
      inFlight.set(request.key, pending);
      void pending.finally(() => inFlight.delete(request.key)).catch(() => undefined);
    }
    return pending;
  };

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let body: Buffer;
    try {
      body = await readBoundedBody(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return write(res, fromError(413, error.message));
      throw error;
    }
    const method = req.method ?? "GET";
    const path = (req.url ?? "/").split("?")[0];
    if (method === "POST" && GENERATION_PATHS.has(path)) return write(res, await generation(path, req, body));
    if (method === "GET" && path === "/health") return write(res, okReply());
    if (upstream !== undefined) return write(res, await forward(upstream, req, req.url ?? "/", body));
    // What a fuzz run or a session server sends besides generation: accepted, the cassette answers by prompt alone.
    if ((method === "POST" && path === "/abort_request") || ((method === "PUT" || method === "DELETE") && path.startsWith("/_mock/plans/"))) {
      return write(res, okReply());
    }
    return write(res, fromError(404, `the cassette backend serves POST /generate, POST /v1/chat/completions and GET /health, not ${method} ${path}`));
  };

  const server = createServer((req, res) => {
    answer(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else write(res, fromError(500, `cassette backend failed: ${error instanceof Error ? error.message : String(error)}`));
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.address.includes(":") ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    mode: upstream === undefined ? "replay" : "record",
    get size() {
      return store.size;
    },
    counts,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).finally(() => store.close());
      return closing;
    },
  };
}

/** Most request bodies whose keys are kept, and the longest body kept (in characters). */
const MEMO_BODIES = 256;
const MEMO_MAX_CHARS = 1 << 20;

/** The keys of the latest request bodies by their text (insertion order: the oldest is dropped first). */
class BodyKeyMemo {
  private readonly byText = new Map<string, KeyedRequest>();

  get(path: string, text: string): KeyedRequest | undefined {
    const request = this.byText.get(text);
    return request !== undefined && request.path === path ? request : undefined;
  }

  set(path: string, text: string, request: KeyedRequest): void {
    if (text.length > MEMO_MAX_CHARS) return;
    this.byText.delete(text);
    this.byText.set(text, request);
    if (this.byText.size > MEMO_BODIES) this.byText.delete(this.byText.keys().next().value as string);
  }
}

/** A reply to send, with whether its body may be recorded (UTF-8 text) and, from the upstream, its bytes as sent. */
interface Upstreamed extends CassetteReply {
  readonly recordable?: boolean;
  readonly bytes?: Buffer;
}

function okReply(): Upstreamed {
  return { status: 200, contentType: "application/json", body: '{"status":"ok"}' };
}

function fromError(status: number, message: string): Upstreamed {
  return { status, contentType: "application/json", body: errorReply(status, message).text };
}

/** Sends the request on to the upstream as it came (method, headers, body); a transport failure is a 502. */
async function forward(upstream: string, req: IncomingMessage, path: string, body: Buffer): Promise<Upstreamed> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    if (!DROPPED_HEADERS.has(name)) headers[name] = req.rawHeaders[i + 1];
  }
  const method = req.method ?? "GET";
  try {
    const reply = await undiciRequest(`${upstream}${path}`, {
      method: method as "GET",
      headers,
      body: method === "GET" || method === "HEAD" ? undefined : body,
    });
    const bytes = Buffer.from(await reply.body.arrayBuffer());
    const type = reply.headers["content-type"];
    const contentType = (Array.isArray(type) ? type[0] : type) ?? "application/octet-stream";
    return { status: reply.statusCode, contentType, body: bytes.toString("utf8"), recordable: isUtf8(bytes), bytes };
  } catch (error) {
    return fromError(502, `cassette recorder could not reach the upstream ${upstream}: ${(error as Error).message}`);
  }
}

function write(res: ServerResponse, reply: Upstreamed): void {
  if (res.destroyed) return;
  const body = reply.bytes ?? reply.body;
  res.writeHead(reply.status, { "content-type": reply.contentType, "content-length": String(Buffer.byteLength(body)) });
  res.end(body);
}
