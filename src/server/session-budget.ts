// Sizes the session store's budget from the server options, or by default from the heap limit of this process.
// Servers without an explicit byte budget share one pool, so two servers in one process cannot both claim the heap.
import { fullCollections, readHeap } from "./heap-watch";
import { BytePool, formatMiB, type HeapGuard, type SessionBudget } from "./session-store";

/** Share of the heap left free when the first server starts that the default budget grants to sessions. */
const DEFAULT_HEAP_SHARE = 0.8;

/** The session-budget options of {@link startSessionServer} (see `SessionServerOptions`). */
export interface SessionBudgetOptions {
  maxSessionBytes?: number;
  maxSessions?: number;
  sessionTtlMs?: number;
}

let defaultPool: BytePool | null = null;

const PROCESS_HEAP: HeapGuard = { read: readHeap, collections: fullCollections };

/**
 * The process-wide default pool: {@link DEFAULT_HEAP_SHARE} of the old-generation heap free when it is first needed
 * (`v8.getHeapStatistics().heap_size_limit` less the young generation's reserve and the heap in use), guarded by the
 * live heap as well (what the accounting cannot see: tokenizer caches, requests in flight).
 */
function processPool(): BytePool {
  if (defaultPool === null) {
    const heap = readHeap();
    const free = Math.max(0, heap.limitBytes - heap.liveBytes);
    const maxBytes = Math.floor(free * DEFAULT_HEAP_SHARE);
    defaultPool = new BytePool(
      maxBytes,
      `the default session budget of ${formatMiB(maxBytes)} (${DEFAULT_HEAP_SHARE * 100}% of the ${formatMiB(free)} heap free when the first server started, ` +
        `shared by this process's servers; set maxSessionBytes / --max-session-bytes)`,
      PROCESS_HEAP,
    );
  }
  return defaultPool;
}

function checkLimit(value: number | undefined, name: string, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} (${flag}) must be a positive integer, got ${String(value)}`);
  return value;
}

/**
 * The budget a server's store enforces. An explicit `maxSessionBytes` gives the server its own pool; without one
 * it draws from the process-wide default. `maxSessions` (default: no count limit) and `sessionTtlMs` (default: no
 * expiry, as miles has none) apply per server.
 * @throws Error naming the option when a value is not a positive integer
 */
export function resolveSessionBudget(options: SessionBudgetOptions): SessionBudget {
  const maxBytes = checkLimit(options.maxSessionBytes, "maxSessionBytes", "--max-session-bytes");
  const maxSessions = checkLimit(options.maxSessions, "maxSessions", "--max-sessions");
  const ttlMs = checkLimit(options.sessionTtlMs, "sessionTtlMs", "--session-ttl");
  return {
    pool: maxBytes === undefined ? processPool() : new BytePool(maxBytes, `the ${formatMiB(maxBytes)} session budget (maxSessionBytes / --max-session-bytes)`),
    maxSessions: maxSessions ?? Number.MAX_SAFE_INTEGER,
    ttlMs: ttlMs ?? null,
  };
}
