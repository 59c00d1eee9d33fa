// Remembers the token ids of chat-template renders by the exact data they were rendered from, so a session server
// that sees the same conversation again (scripted agents, retries, every session of a parity batch) skips Jinja.
import { heapScaledBound } from "./heap-scaled";
import { exactDataKey } from "./tito-prefix-cache";

/** Default bound of {@link RenderedIdsMemo}: number of remembered renders. */
const DEFAULT_RENDER_MEMO_ENTRIES = 1024;

/** Default bound of {@link RenderedIdsMemo}: total key characters plus remembered ids (less on a small heap). */
const DEFAULT_RENDER_MEMO_UNITS = 4_000_000;

/**
 * Bounded, least-recently-used map from the exact inputs of a render (an {@link exactDataKey} of them) to its ids.
 * Inputs without an exact key (class instances, functions, ...) are never remembered. A failing computation
 * throws and remembers nothing. Every call returns a fresh array the caller may keep or mutate.
 */
export class RenderedIdsMemo {
  private readonly entries = new Map<string, readonly number[]>();
  private units = 0;

  /**
   * @param maxEntries bound on the number of remembered renders
   * @param maxUnits bound on the total key characters plus remembered ids
   */
  constructor(
    /** Bound on the number of remembered renders. */
    readonly maxEntries: number = DEFAULT_RENDER_MEMO_ENTRIES,
    /** Bound on the total key characters plus remembered ids. */
    readonly maxUnits: number = heapScaledBound(DEFAULT_RENDER_MEMO_UNITS, 8), // an id is an 8-byte slot
  ) {}

  /** Number of remembered renders. */
  get size(): number {
    return this.entries.size;
  }

  /** The ids for `inputs`: a copy of the remembered ones, or `compute()`'s (remembered when `inputs` have an exact key). */
  get(inputs: readonly unknown[], compute: () => number[]): number[] {
    return this.getByKey(exactDataKey(inputs), compute);
  }

  /**
   * {@link get} for inputs whose exact key the caller already holds (`exactDataKey(inputs)`, put together from the
   * keys of parts it knows; undefined: no key, nothing is remembered).
   */
  getByKey(key: string | undefined, compute: () => number[]): number[] {
    if (key === undefined) return compute();
    const known = this.entries.get(key);
    if (known !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, known);
      return known.slice();
    }
    const ids = compute();
    const size = key.length + ids.length;
    if (size > this.maxUnits || this.maxEntries < 1) return ids;
    this.entries.set(key, ids.slice());
    this.units += size;
    for (const [oldest, oldIds] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.units <= this.maxUnits) break;
      this.entries.delete(oldest);
      this.units -= oldest.length + oldIds.length;
    }
    return ids;
  }

  /** Forgets every remembered render. */
  clear(): void {
    this.entries.clear();
    this.units = 0;
  }
}
