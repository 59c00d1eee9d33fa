// A tiny FIFO async mutex: the per-session lock that serializes positioning and state updates.
// It is never held across an upstream call, so a slow generation does not block DELETE or GET.

/** A first-in, first-out asynchronous mutex. */
export class AsyncMutex {
  private tail: Promise<void> = Promise.resolve();
  private holders = 0;

  /** True while some caller holds or waits for the lock. */
  get busy(): boolean {
    return this.holders > 0;
  }

  /** Waits for the lock; resolves with the function that releases it (call it exactly once). */
  acquire(): Promise<() => void> {
    this.holders += 1;
    let release!: () => void;
    const next = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.tail;
    this.tail = previous.then(() => next);
    let released = false;
    return previous.then(() => () => {
      if (released) return;
      released = true;
      this.holders -= 1;
      release();
    });
  }

  /** Runs `fn` while holding the lock and releases it afterwards, whatever happens. */
  async runExclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }
}
