// Scales a cache's default bound to the heap it lives in: the full bound on an ordinary heap, less on a small one.
// A session server under `--max-old-space-size=160` would otherwise give a third of its heap to tokenizer caches.
import { getHeapStatistics } from "node:v8";

/** Share of `heap_size_limit` one cache may fill by default. */
const CACHE_HEAP_SHARE = 1 / 64;

/**
 * `defaultUnits`, or fewer when that many units (at about `bytesPerUnit` heap bytes each) would fill more than
 * 1/64 of this process's heap limit. At least 1024 units, so a small heap still caches something.
 */
export function heapScaledBound(defaultUnits: number, bytesPerUnit: number): number {
  const fit = Math.floor((getHeapStatistics().heap_size_limit * CACHE_HEAP_SHARE) / bytesPerUnit);
  return Math.max(1024, Math.min(defaultUnits, fit));
}
