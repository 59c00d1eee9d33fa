// The in-memory session table: one entry per live session with its policy state, lock, closing flag and byte charge.
// Ids are 32 lowercase hex characters (a UUID without dashes), as the protocol promises. The table enforces the
// session budget (bytes and count; growth past it is refused with SessionBudgetError) and the optional idle expiry.
import { randomUUID } from "node:crypto";
import { AsyncMutex } from "./lock";

/** One live session. */
export interface SessionEntry<State> {
  readonly id: string;
  /** The policy's trajectory data for this session. */
  readonly state: State;
  /** Serializes positioning and state updates; never held across the upstream call. */
  readonly lock: AsyncMutex;
  /** Set by DELETE before it waits for the lock; chats then get 404 and skip their state update. */
  closing: boolean;
  /** Heap bytes charged to this session (its fixed overhead plus its stored generations). */
  bytes: number;
  /** Clock reading of when the last request on the session ended (or of its creation): the idle clock's start. */
  lastUsed: number;
  /** Requests in flight on this session (never expired while one runs). */
  busy: number;
}

/**
 * A byte allowance sessions draw from: one per server with an explicit `maxSessionBytes`, or the process-wide
 * default that every server without one shares (see session-budget.ts).
 */
export class BytePool {
  /** Bytes charged plus reserved by every store drawing from this pool (change it through {@link add}). */
  held = 0;
  /** The full-collection count and `held` when the heap guard last saw a new collection. */
  private seenCollections = -1;
  private heldAtCollection = 0;
  /** Bytes freed while the collection behind the current heap reading was marking, or after it (see {@link add}). */
  private missedFrees = 0;
  /** Frees the heap guard may not have seen yet: `[clock reading, bytes]`, oldest first. */
  private recentFrees: Array<[number, number]> = [];
  /** What the stores drawing from this pool can give back without losing anything (see {@link addReclaimer}). */
  private readonly reclaimers = new Set<Reclaimer>();

  constructor(
    /** Most bytes the pool grants. */
    readonly maxBytes: number,
    /** How a refusal names the budget, e.g. `the 64.0 MiB session budget (maxSessionBytes / --max-session-bytes)`. */
    readonly label: string,
    /** The heap guard, or null for none (an explicit budget the user sized). */
    readonly heap: HeapGuard | null = null,
  ) {}

  /**
   * Live heap bytes after granting `bytes`: what the last full collection left, plus what this pool charged (or
   * freed) since (the collection already counted what it held then), plus `bytes`. `reading` is the heap guard's
   * reading to use (default: a fresh one).
   */
  projectedLiveBytes(bytes: number, reading: HeapGuardReading | null = this.heap?.read() ?? null): number {
    if (this.heap === null || reading === null) return 0;
    const collections = this.heap.collections();
    if (collections !== this.seenCollections) {
      this.seenCollections = collections;
      this.heldAtCollection = this.held;
      // The collection measured what was reachable when it began marking: bytes freed since then (before this reading
      // is first used) are still in its figure, garbage the next collection takes. They count as freed at once.
      const markedAt = reading.markedAt ?? Number.POSITIVE_INFINITY;
      this.recentFrees = this.recentFrees.filter(([at]) => at >= markedAt);
      this.missedFrees = this.recentFrees.reduce((sum, [, freed]) => sum + freed, 0);
    }
    // A session deleted since counts as freed at once (its bytes are garbage the next collection takes).
    return Math.max(0, reading.liveBytes + this.held - this.heldAtCollection - this.missedFrees) + bytes;
  }

  /**
   * Changes {@link held} by `delta`. A free of stored bytes (`stored`: not a reservation given back, which held no
   * heap) is remembered with the time it happened (see {@link projectedLiveBytes}).
   */
  add(delta: number, stored = true): void {
    this.held += delta;
    if (delta >= 0 || !stored || this.heap === null) return;
    const at = this.heap.now?.() ?? performance.now();
    this.recentFrees.push([at, -delta]);
    // a store that deletes much between two collections keeps one entry per collection window, not one per delete
    if (this.recentFrees.length > MAX_RECENT_FREES) this.recentFrees.splice(0, this.recentFrees.length - MAX_RECENT_FREES);
  }

  /**
   * Registers what a store can drop when the pool would refuse a request: caches beside its sessions, never what they
   * hold. Returns the function that unregisters it (when the store's server closes).
   */
  addReclaimer(reclaimer: Reclaimer): () => void {
    this.reclaimers.add(reclaimer);
    return () => {
      this.reclaimers.delete(reclaimer);
    };
  }

  /** Asks the registered reclaimers for `bytes`, in turn, until they gave that much; returns the bytes they freed. */
  reclaim(bytes: number): number {
    let freed = 0;
    for (const reclaimer of this.reclaimers) {
      if (freed >= bytes) break;
      freed += reclaimer(bytes - freed);
    }
    return freed;
  }
}

/** Drops droppable bytes, about `bytes` of them or more, and returns how many it dropped (0: nothing left to drop). */
export type Reclaimer = (bytes: number) => number;

/** Growth's overshoot past the heap guard and the budget (at most 0: within), and the heap figures a refusal names. */
interface Excess {
  overBudget: number;
  /** The bytes held against the byte budget. */
  budgetBytes: number;
  overHeap: number;
  heap: { projected: number; allowed: number; limitBytes: number } | null;
}

/** One reading of the heap guard. */
export interface HeapGuardReading {
  /** Bytes old-generation data may occupy. */
  limitBytes: number;
  /** Old-generation bytes live after the last full collection. */
  liveBytes: number;
  /**
   * When the collection behind `liveBytes` began marking, on the guard's clock ({@link HeapGuard.now}); bytes freed
   * after it are not reflected in `liveBytes`. Absent: every free before the reading was first used is reflected.
   */
  markedAt?: number;
}

/** What the heap guard reads (src/server/heap-watch.ts in a server; a fake in tests). */
export interface HeapGuard {
  /** Old-generation limit and live bytes after the last full collection. */
  read(): HeapGuardReading;
  /** Full collections so far. */
  collections(): number;
  /** The clock `markedAt` is read on, in ms (default `performance.now()`). */
  now?(): number;
}

/** Frees a pool remembers for the heap guard at most (older ones are long reflected by a collection). */
const MAX_RECENT_FREES = 4096;

/** Share of the heap limit the projected live heap may reach before a growing request is refused. */
export const HEAP_GUARD_SHARE = 0.9;

/** Limits of a {@link SessionStore}. */
export interface SessionBudget {
  /** Most heap bytes all sessions together may hold (charged + reserved for chats in flight). */
  pool: BytePool;
  /** Most sessions held at once. */
  maxSessions: number;
  /** Idle time in ms after which an untouched session is evicted, or null for none. */
  ttlMs: number | null;
}

/** How {@link SessionStore.reserve} weighs a reservation. */
export interface ReserveOptions {
  /**
   * Answer 413 ({@link RequestTooLargeError}) when the bytes alone could not be granted: when their budget part is
   * more than this share of the byte budget, or the whole more than the heap guard leaves with no session stored.
   */
  aloneShare?: number;
  /**
   * The part of the bytes held against the byte budget (default: all). A reply built from what is stored and sent at
   * once charges the budget only for what its request adds: reading a stored session is never refused by the budget.
   */
  budgetBytes?: number;
  /** Share of the heap limit the projected live heap may reach (default: the heap guard's 90%). */
  heapShare?: number;
}

/** Heap bytes an empty session costs: entry, state, lock, id string and table slot (measured, see the budget test). */
export const SESSION_OVERHEAD_BYTES = 2048;

/**
 * Share of the byte budget up to which new sessions are admitted: the rest stays for the sessions already stored to
 * continue their conversations, so a full store refuses newcomers before it refuses the turns of its sessions.
 */
const CREATE_SHARE = 0.95;

/** A request the session budget cannot admit; the shell answers 503 with `Retry-After`. */
export class SessionBudgetError extends Error {
  constructor(
    message: string,
    /** Seconds after which a retry may succeed. */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = "SessionBudgetError";
  }
}

/**
 * A request whose growth alone is more than the budget or the heap guard could grant with no session stored; the
 * shell answers 413 (retrying cannot help, unlike a {@link SessionBudgetError}).
 */
export class RequestTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RequestTooLargeError";
  }
}

const MiB = 1024 * 1024;

/** Bytes as MiB with one decimal, e.g. `12.5 MiB`. */
export const formatMiB = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;

/** Session id → entry, within a budget. */
export class SessionStore<State> {
  /** In least-recently-used order when a TTL is set (a touch moves an entry to the end), so expiry reads from the front. */
  private readonly sessions = new Map<string, SessionEntry<State>>();
  private chargedBytes = 0;
  private reservedBytes = 0;

  private get pool(): BytePool {
    return this.budget.pool;
  }

  constructor(
    private readonly createState: () => State,
    private readonly budget: SessionBudget = { pool: new BytePool(Number.MAX_SAFE_INTEGER, "no budget"), maxSessions: Number.MAX_SAFE_INTEGER, ttlMs: null },
    private readonly now: () => number = Date.now,
    private readonly onExpire: (entry: SessionEntry<State>, idleMs: number) => void = () => undefined,
  ) {}

  /** Bytes held by this store's sessions plus bytes reserved for its chats in flight. */
  get heldBytes(): number {
    return this.chargedBytes + this.reservedBytes;
  }

  private addCharged(delta: number): void {
    this.chargedBytes += delta;
    this.pool.add(delta);
  }

  private addReserved(delta: number): void {
    this.reservedBytes += delta;
    this.pool.add(delta, false);
  }

  /** Bytes held in the pool this store draws from (other stores sharing it included). */
  get poolHeldBytes(): number {
    return this.pool.held;
  }

  /** The pool's byte budget. */
  get budgetBytes(): number {
    return this.pool.maxBytes;
  }

  /** Number of stored sessions. */
  get size(): number {
    return this.sessions.size;
  }

  /**
   * Creates an empty session and returns its entry.
   * @throws SessionBudgetError when the session count or the byte budget is reached (after expiring idle sessions)
   */
  create(): SessionEntry<State> {
    this.expireIdle();
    if (this.sessions.size >= this.budget.maxSessions) {
      throw new SessionBudgetError(
        `session store is full: ${this.sessions.size} sessions held, the session budget allows ${this.budget.maxSessions} (maxSessions / --max-sessions); ` +
          "delete sessions (DELETE /sessions/{id}) or raise the budget",
        this.retryAfterSeconds(),
      );
    }
    this.admit(SESSION_OVERHEAD_BYTES, "a new session", { share: CREATE_SHARE });
    const id = randomUUID().replace(/-/g, "");
    const entry: SessionEntry<State> = {
      id,
      state: this.createState(),
      lock: new AsyncMutex(),
      closing: false,
      bytes: SESSION_OVERHEAD_BYTES,
      lastUsed: this.now(),
      busy: 0,
    };
    this.sessions.set(id, entry);
    this.addCharged(entry.bytes);
    return entry;
  }

  /** The entry (marked as used now), or undefined when unknown or expired. */
  get(id: string): SessionEntry<State> | undefined {
    this.expireIdle();
    const entry = this.sessions.get(id);
    if (entry === undefined) return undefined;
    entry.lastUsed = this.now();
    // Only idle expiry reads the least-recently-used order: without a TTL the entry stays where it is.
    if (this.budget.ttlMs !== null) {
      this.sessions.delete(id);
      this.sessions.set(id, entry);
    }
    return entry;
  }

  /** Marks a request on `entry` as started: a session with a request in flight is never evicted. */
  requestStarted(entry: SessionEntry<State>): void {
    entry.busy += 1;
  }

  /** Marks a request on `entry` as ended: the session is idle from now on (its idle clock starts at the end). */
  requestEnded(entry: SessionEntry<State>): void {
    entry.busy -= 1;
    entry.lastUsed = this.now();
    if (this.budget.ttlMs !== null && this.isLive(entry)) {
      this.sessions.delete(entry.id);
      this.sessions.set(entry.id, entry);
    }
  }

  /** Adds a reclaimer to the pool this store draws from ({@link BytePool.addReclaimer}); returns its remover. */
  addReclaimer(reclaimer: Reclaimer): () => void {
    return this.pool.addReclaimer(reclaimer);
  }

  /** True when `entry` is still the live session under its id. */
  isLive(entry: SessionEntry<State>): boolean {
    return this.sessions.get(entry.id) === entry;
  }

  /**
   * Reserves `bytes` for a request that will grow a session (or build a reply); call the returned function once the
   * growth is charged (or did not happen). A reservation of 0 bytes always succeeds.
   * @throws SessionBudgetError when the reservation would take the store past its byte budget
   * @throws RequestTooLargeError with `aloneShare`, when `bytes` alone are more than one request may take (see
   *   {@link ReserveOptions.aloneShare})
   */
  reserve(bytes: number, what: string, options: ReserveOptions = {}): () => void {
    this.expireIdle();
    this.admit(bytes, what, { ...options, share: 1 });
    this.addReserved(bytes);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.addReserved(-bytes);
    };
  }

  /** Sets what a live session is charged (after a commit or a rollback). */
  charge(entry: SessionEntry<State>, bytes: number): void {
    if (!this.isLive(entry)) return;
    this.addCharged(bytes - entry.bytes);
    entry.bytes = bytes;
  }

  /** Removes a session and frees its charge at once; returns false when it was not there. */
  remove(id: string): boolean {
    const entry = this.sessions.get(id);
    if (entry === undefined) return false;
    this.sessions.delete(id);
    this.addCharged(-entry.bytes);
    return true;
  }

  /** Drops every session. */
  clear(): void {
    this.sessions.clear();
    this.addCharged(-this.chargedBytes);
    this.addReserved(-this.reservedBytes);
  }

  /** Evicts sessions idle for at least the TTL (oldest first), skipping any with a request in flight. */
  expireIdle(): void {
    const ttl = this.budget.ttlMs;
    if (ttl === null) return;
    const now = this.now();
    for (const entry of [...this.sessions.values()]) {
      const idle = now - entry.lastUsed;
      if (idle < ttl) break; // least-recently-used order: every later entry is younger
      if (entry.busy > 0 || entry.closing) continue;
      this.remove(entry.id);
      this.onExpire(entry, idle);
    }
  }

  /**
   * Admits growth of `bytes` or throws the refusal. Before refusing, the pool's reclaimers drop what they can (the
   * session server's kept texts, which it can write again): a request is refused only when that was not enough.
   */
  private admit(bytes: number, what: string, options: ReserveOptions & { share: number }): void {
    const alone = options.aloneShare;
    if (alone !== undefined && (options.budgetBytes ?? bytes) > this.pool.maxBytes * alone) {
      const budgetBytes = options.budgetBytes ?? bytes;
      throw new RequestTooLargeError(
        `request too large: ${what} needs about ${formatMiB(budgetBytes)} for what its request adds, more than ` +
          `${alone === 1 ? "all" : `${Math.round(alone * 100)}%`} of ${this.pool.label} (${formatMiB(this.pool.maxBytes * alone)}), ` +
          "what one request may take: ask for less (smaller metadata) or raise the budget",
      );
    }
    let excess = this.excess(bytes, options);
    if (excess.overHeap <= 0 && excess.overBudget <= 0) return;
    if (alone !== undefined) this.refuseIfTooLarge(excess, bytes, what);
    if (this.pool.reclaim(Math.max(1, excess.overHeap, excess.overBudget)) > 0) excess = this.excess(bytes, options);
    this.refuseIfOver(excess, bytes, what, options.share);
  }

  /**
   * Throws the 413 when `bytes` alone pass the budget, or the heap guard less what the live heap holds besides the
   * sessions (the server itself, its caches, requests in flight): no DELETE could make room for them.
   */
  private refuseIfTooLarge(excess: Excess, bytes: number, what: string): void {
    if (excess.heap === null) return;
    const { projected, allowed, limitBytes } = excess.heap;
    const besides = Math.max(0, projected - bytes - this.pool.held);
    if (bytes <= allowed - besides) return;
    throw new RequestTooLargeError(
      `request too large: ${what} needs about ${formatMiB(bytes)}, more than the heap guard leaves any one request ` +
        `(${formatMiB(Math.max(0, allowed - besides))}: ${formatMiB(allowed)}, ${Math.round((allowed / limitBytes) * 100)}% of the ${formatMiB(limitBytes)} heap limit, ` +
        `less the ${formatMiB(besides)} the server holds besides its sessions): it could not be held even with no session stored; ` +
        "ask for less (smaller metadata) or raise --max-old-space-size",
    );
  }

  /**
   * How far `bytes` more would take the live heap past the heap guard ({@link HEAP_GUARD_SHARE} of its limit, times
   * `share`) and the sessions past the pool's budget (times `share`): at most 0 when within. One heap reading for both.
   */
  private excess(bytes: number, options: ReserveOptions & { share: number }): Excess {
    const reading = this.pool.heap?.read() ?? null;
    const budgetBytes = options.budgetBytes ?? bytes;
    const overBudget = this.pool.held + budgetBytes - this.pool.maxBytes * options.share;
    if (reading === null) return { overBudget, budgetBytes, overHeap: Number.NEGATIVE_INFINITY, heap: null };
    const projected = this.pool.projectedLiveBytes(bytes, reading);
    const allowed = reading.limitBytes * (options.heapShare ?? HEAP_GUARD_SHARE * options.share);
    return { overBudget, budgetBytes, overHeap: projected - allowed, heap: { projected, allowed, limitBytes: reading.limitBytes } };
  }

  /** Throws the refusal `excess` calls for, the heap guard's first; returns when both are within. */
  private refuseIfOver(excess: Excess, bytes: number, what: string, share: number): void {
    if (excess.heap !== null && excess.overHeap > 0) {
      const { projected, allowed, limitBytes } = excess.heap;
      throw new SessionBudgetError(
        `session store is full: ${what} needs about ${formatMiB(bytes)}, and the heap would hold about ${formatMiB(projected)} live, ` +
          `past the heap guard of ${this.pool.label.split(" (")[0]} (${formatMiB(allowed)}, ${Math.round((allowed / limitBytes) * 100)}% of the ` +
          `${formatMiB(limitBytes)} heap limit; sessions hold ${formatMiB(this.pool.held)}, the rest is the server itself, its caches and ` +
          `requests in flight); delete sessions (DELETE /sessions/{id}) or raise --max-old-space-size`,
        this.retryAfterSeconds(),
      );
    }
    if (excess.overBudget <= 0) return;
    throw new SessionBudgetError(
      `session store is full: ${what} needs about ${formatMiB(excess.budgetBytes)}, and sessions hold ${formatMiB(this.pool.held)} of ${this.pool.label}` +
        `${share < 1 ? `, of which new sessions may take ${share * 100}%` : ""} ` +
        `(${this.sessions.size} of them on this server); delete sessions (DELETE /sessions/{id}) or raise the budget`,
      this.retryAfterSeconds(),
    );
  }

  /** Until the oldest idle session expires when a TTL is set, else a short constant. */
  private retryAfterSeconds(): number {
    const ttl = this.budget.ttlMs;
    const oldest = this.sessions.values().next().value;
    if (ttl === null || oldest === undefined) return 5;
    return Math.max(1, Math.ceil((oldest.lastUsed + ttl - this.now()) / 1000));
  }
}
