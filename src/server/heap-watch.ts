// Watches this process's heap for the session store: the live size after the last full collection, and the limit.
// The store's byte accounting cannot see what the tokenizer caches or in-flight requests hold; this guard does.
import { constants, performance, PerformanceObserver } from "node:perf_hooks";
import { getHeapSpaceStatistics, getHeapStatistics } from "node:v8";

/**
 * The young generation's reserve inside `heap_size_limit` (three semi-spaces of 16 MiB on 64-bit Node 20, fewer for
 * small heaps): what old-generation data can never use.
 */
const YOUNG_RESERVE_BYTES = 48 * 1024 * 1024;

/** Heap figures the session store's guard reads. */
export interface HeapReading {
  /** Bytes old-generation data may occupy: `heap_size_limit` without the young generation's reserve. */
  limitBytes: number;
  /** Old-generation bytes live after the last full collection (or in use when the watch started, garbage included). */
  liveBytes: number;
  /** When that collection began marking (`performance.now()`; its incremental marking's start when it had one). */
  markedAt: number;
}

/** Bytes used in the old generation (every space but the young generation's, which holds no survivors for long). */
function oldGenerationUsed(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name !== "new_space" && space.space_name !== "new_large_object_space") used += space.space_used_size;
  }
  return used;
}

let observer: PerformanceObserver | null = null;
let liveAfterGc = 0;
let gcCount = 0;
let markedAt = 0;
/** Start of the incremental marking under way (its entry comes before the full collection that ends it), or null. */
let markingSince: number | null = null;

/** Starts watching full collections (once per process); later calls reuse the same watch. */
function ensureWatching(): void {
  if (observer !== null) return;
  liveAfterGc = oldGenerationUsed();
  markedAt = performance.now();
  observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) markingSince ??= entry.startTime;
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        liveAfterGc = oldGenerationUsed();
        markedAt = Math.min(markingSince ?? entry.startTime, entry.startTime);
        markingSince = null;
        gcCount += 1;
      }
    }
  });
  observer.observe({ entryTypes: ["gc"] });
}

/** Full collections seen so far (a reading's `liveBytes` is fresh when this changed). */
export function fullCollections(): number {
  ensureWatching();
  return gcCount;
}

/** The heap's old-generation limit and the live bytes after the last full collection. */
export function readHeap(): HeapReading {
  ensureWatching();
  const limit = getHeapStatistics().heap_size_limit;
  return { limitBytes: limit - Math.min(YOUNG_RESERVE_BYTES, Math.floor(limit / 4)), liveBytes: liveAfterGc, markedAt };
}
