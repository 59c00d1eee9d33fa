// A session's token ids stored once: each snapshot is its base's first ids plus its own new ones (a persistent chunked
// array), so a 300-turn session holds its tokens once, not once per turn, and branches share only their common prefix.
// Pure data, immutable once built.

/** The ids of one snapshot: the first `baseLength` ids of `base`, then `own`. */
export class TokenRun {
  /** Number of ids. */
  readonly length: number;
  /** Chained runs down to the root (a lookup walks at most this many links). */
  private readonly depth: number;

  private constructor(
    /** The run whose leading ids this one repeats, or null. */
    readonly base: TokenRun | null,
    /** How many of `base`'s leading ids this run starts with. */
    readonly baseLength: number,
    /** The ids after them, owned by this run (never changed). */
    readonly own: readonly number[],
  ) {
    this.length = baseLength + own.length;
    this.depth = base === null ? 0 : base.depth + 1;
  }

  /** The empty run. */
  static readonly EMPTY = new TokenRun(null, 0, []);

  /**
   * The run of `ids`, sharing with `base` the longest prefix the two have in common (compared id by id, as `Object.is`
   * tells numbers apart, so -0 is never taken for 0). Copies only what follows that prefix; with `adopt` (the caller
   * hands `ids` over and never changes it) a run sharing nothing keeps `ids` itself.
   */
  static of(ids: readonly number[], base: TokenRun | null = null, adopt = false): TokenRun {
    if (ids.length === 0) return TokenRun.EMPTY;
    const common = base === null ? 0 : base.commonPrefixLength(ids);
    if (common === 0) return new TokenRun(null, 0, adopt ? ids : ids.slice());
    if (common === base!.length && common === ids.length) return base!;
    return new TokenRun(base, common, ids.slice(common));
  }

  /** The first `length` ids as a run of their own (no copy). */
  prefix(length: number): TokenRun {
    if (length >= this.length) return this;
    if (length <= 0) return TokenRun.EMPTY;
    return new TokenRun(this, length, []);
  }

  /** How many leading ids `ids` has in common with this run. */
  commonPrefixLength(ids: readonly number[]): number {
    const limit = Math.min(this.length, ids.length);
    let matched = 0;
    this.forEachSegment(limit, (segment, from, count) => {
      if (matched < from) return false;
      for (let i = 0; i < count; i += 1) {
        if (!Object.is(segment[i], ids[from + i])) {
          matched = from + i;
          return false;
        }
      }
      matched = from + count;
      return true;
    });
    return matched;
  }

  /** The ids as a fresh, exactly sized array. */
  toArray(): number[] {
    const out = new Array<number>(this.length);
    this.forEachSegment(this.length, (segment, from, count) => {
      for (let i = 0; i < count; i += 1) out[from + i] = segment[i];
      return true;
    });
    return out;
  }

  /** The ids, in order (so a run spreads like the array it stands for). */
  *[Symbol.iterator](): IterableIterator<number> {
    yield* this.toArray();
  }

  /** A run writes as the array it stands for. */
  toJSON(): number[] {
    return this.toArray();
  }

  /** Ids this run stores itself (its share of the session's token memory). */
  get ownLength(): number {
    return this.own.length;
  }

  /**
   * Calls `visit(segment, from, count)` for the stored pieces of the first `limit` ids, in order: `segment[0..count)`
   * are ids `from..from+count)`. Stops early when `visit` returns false.
   */
  private forEachSegment(limit: number, visit: (segment: readonly number[], from: number, count: number) => boolean): void {
    // Walk up once, noting how many ids each link contributes, then visit from the root down.
    const links = new Array<TokenRun>(this.depth + 1);
    const limits = new Array<number>(this.depth + 1);
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- a cursor walking down the base chain from this run
    let run: TokenRun | null = this;
    let upTo = limit;
    let n = 0;
    while (run !== null && upTo > 0) {
      links[n] = run;
      limits[n] = upTo;
      n += 1;
      upTo = Math.min(upTo, run.baseLength);
      run = run.base;
    }
    for (let k = n - 1; k >= 0; k -= 1) {
      const link = links[k];
      const count = limits[k] - link.baseLength;
      if (count > 0 && !visit(link.own, link.baseLength, count)) return;
    }
  }
}
