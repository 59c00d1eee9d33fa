// Sizes the session store's budget from the server options, or by default from the heap limit of this process.
// Servers without an explicit byte budget share one pool, so two servers in one process cannot both claim the heap.
import { fullCollections, readHeap } from "./heap-watch";
import { BytePool, formatMiB, HEAP_GUARD_SHARE, type HeapGuard, type SessionBudget } from "./session-store";

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
        `shared by this process's servers; maxSessionBytes / --max-session-bytes sets one)`,
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

/** True while a benchmark measures what the heap holds without the guard (see {@link measureWithoutHeapGuard}). */
let unguarded = false;

/**
 * For the capacity benchmark only: explicit budgets created after this call have no heap guard, so the benchmark can
 * measure how many sessions the heap itself holds before the process dies. Servers never call it.
 */
export function measureWithoutHeapGuard(): void {
  unguarded = true;
}

/**
 * The budget a server's store enforces. An explicit `maxSessionBytes` gives the server its own pool; without one
 * it draws from the process-wide default. Either way the heap guard applies: the tighter of the byte budget and the
 * live heap decides, so a budget larger than the heap cannot let the process run out of memory; `warn` is told at
 * start when the budget is above the heap limit. `maxSessions` (default: no count limit) and `sessionTtlMs`
 * (default: no expiry, as miles has none) apply per server.
 * @throws Error naming the option when a value is not a positive integer
 */
export function resolveSessionBudget(options: SessionBudgetOptions, warn: (message: string) => void = () => undefined): SessionBudget {
  const maxBytes = checkLimit(options.maxSessionBytes, "maxSessionBytes", "--max-session-bytes");
  const maxSessions = checkLimit(options.maxSessions, "maxSessions", "--max-sessions");
  const ttlMs = checkLimit(options.sessionTtlMs, "sessionTtlMs", "--session-ttl");
  let pool: BytePool;
  if (maxBytes === undefined) pool = processPool();
  else {
    pool = new BytePool(maxBytes, `the ${formatMiB(maxBytes)} session budget (maxSessionBytes / --max-session-bytes)`, unguarded ? null : PROCESS_HEAP);
    const heap = readHeap();
    if (maxBytes > heap.limitBytes) {
      warn(
        `session budget: maxSessionBytes / --max-session-bytes is ${formatMiB(maxBytes)}, above this process's heap limit of ${formatMiB(heap.limitBytes)} ` +
          `(old generation): the heap guard refuses growth first (503 once the live heap would pass ${HEAP_GUARD_SHARE * 100}% of the limit); ` +
          `raise --max-old-space-size for more room`,
      );
    }
  }
  return { pool, maxSessions: maxSessions ?? Number.MAX_SAFE_INTEGER, ttlMs: ttlMs ?? null };
}
