// Request log and concurrency counters shared by every way the mock backend is served.
// Handlers write to a recorder; callers read it through the read-only BackendStats view.

/** What a test can read about the traffic a mock backend has seen. */
export interface BackendStats {
  /**
   * Every generation-like request body in arrival order (chat, generate, and requests to unknown paths).
   * A JSON object body is logged as parsed; any other body is logged as `{invalid_body: <raw text>}`.
   */
  readonly requestLog: Record<string, unknown>[];
  /** Same requests with method, path and reply status. */
  readonly requests: readonly BackendRequestEntry[];
  /**
   * How many of the oldest entries were dropped from `requestLog` / `requests` since the last reset because the
   * log holds at most `maxLogEntries` requests (default {@link DEFAULT_MAX_LOG_ENTRIES}).
   */
  readonly droppedRequests: number;
  /** Highest number of generation requests in flight at once since the last reset. */
  readonly maxConcurrent: number;
  /** Generation requests in flight right now. */
  readonly currentConcurrent: number;
  /** Clears the logs and restarts `maxConcurrent` from the current in-flight count. */
  reset(): void;
}

/** One logged request. */
export interface BackendRequestEntry {
  method: string;
  path: string;
  /** The same object as the matching `requestLog` entry. */
  readonly body: Record<string, unknown>;
  /** Reply status, or undefined while the request is in flight. */
  status?: number;
}

/**
 * A logged request body kept as its text, or as the bytes it was decoded from (UTF-8, read back with the same
 * decoder), and parsed on first read: a run of thousands of calls then keeps one flat string or one off-heap byte
 * buffer per request instead of a tree of objects that every garbage collection has to trace and copy.
 */
class LoggedRequest implements BackendRequestEntry {
  status?: number;
  private parsed: Record<string, unknown> | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    private readonly source: string | Uint8Array,
  ) {}

  get body(): Record<string, unknown> {
    this.parsed ??= loggedBody(typeof this.source === "string" ? this.source : bodyDecoder.decode(this.source));
    return this.parsed;
  }
}

/** Decodes logged body bytes as the loopback bridge decodes a request body (UTF-8, a leading BOM dropped). */
const bodyDecoder = new TextDecoder();

/** A body as the log shows it: a JSON object as parsed, anything else as `{invalid_body: <raw text>}`. */
function loggedBody(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { invalid_body: text };
  }
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : { invalid_body: text };
}

/** Requests the mock keeps in its log by default; older entries are dropped (and counted) beyond it. */
const DEFAULT_MAX_LOG_ENTRIES = 10_000;

/** Options of {@link BackendStatsRecorder}. */
export interface BackendStatsOptions {
  /** Most requests kept in the log (default {@link DEFAULT_MAX_LOG_ENTRIES}); the oldest go first. */
  maxLogEntries?: number;
}

/** The writable side of {@link BackendStats}; pass one to several handler sets to pool their stats. */
export class BackendStatsRecorder implements BackendStats {
  private readonly entries: LoggedRequest[] = [];
  private inFlight = 0;
  private peak = 0;
  private dropped = 0;
  private readonly maxLogEntries: number;

  constructor(options: BackendStatsOptions = {}) {
    const limit = options.maxLogEntries ?? DEFAULT_MAX_LOG_ENTRIES;
    if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`maxLogEntries must be a non-negative integer, got ${String(limit)}`);
    this.maxLogEntries = limit;
  }

  /** Logged bodies in arrival order (each parsed on first read, then the same object every time). */
  get requestLog(): Record<string, unknown>[] {
    return this.entries.map((entry) => entry.body);
  }

  /** Logged requests in arrival order. */
  get requests(): readonly BackendRequestEntry[] {
    return this.entries;
  }

  /** Entries dropped from the log since the last reset. */
  get droppedRequests(): number {
    return this.dropped;
  }

  /** Highest concurrent count since the last reset. */
  get maxConcurrent(): number {
    return this.peak;
  }

  /** Current in-flight count. */
  get currentConcurrent(): number {
    return this.inFlight;
  }

  /** Clears logs; in-flight requests keep counting. */
  reset(): void {
    this.entries.length = 0;
    this.dropped = 0;
    this.peak = this.inFlight;
  }

  /**
   * Logs a request by its body text (or the bytes whose UTF-8 decoding, as `new TextDecoder().decode` gives it, is
   * that text; they must not change afterwards) and returns its entry so the caller can set the status later.
   */
  record(method: string, path: string, body: string | Uint8Array): BackendRequestEntry {
    const entry = new LoggedRequest(method, path, body);
    this.entries.push(entry);
    if (this.entries.length > this.maxLogEntries) {
      const excess = this.entries.length - this.maxLogEntries;
      this.entries.splice(0, excess);
      this.dropped += excess;
    }
    return entry;
  }

  /** Marks one request as started. */
  enter(): void {
    this.inFlight += 1;
    if (this.inFlight > this.peak) this.peak = this.inFlight;
  }

  /** Marks one request as finished. */
  exit(): void {
    this.inFlight -= 1;
  }
}

/** Binds the read-only stats view onto `target`, delegating to `recorder` (getters stay live). */
export function exposeStats<T extends object>(target: T, recorder: BackendStatsRecorder): T & BackendStats {
  Object.defineProperties(target, {
    requestLog: { get: () => recorder.requestLog, enumerable: true },
    requests: { get: () => recorder.requests, enumerable: true },
    droppedRequests: { get: () => recorder.droppedRequests, enumerable: true },
    maxConcurrent: { get: () => recorder.maxConcurrent, enumerable: true },
    currentConcurrent: { get: () => recorder.currentConcurrent, enumerable: true },
    reset: { value: () => recorder.reset(), enumerable: false },
  });
  return target as T & BackendStats;
}
