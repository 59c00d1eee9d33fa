// The latency wait before each generation reply: plain timers that one shutdown signal ends all at once.
// One abort listener per engine instead of one added and removed per request, as node:timers/promises would.

/** Raised by a wait that the shutdown signal ended (or that started after it). */
class LatencyWaitAborted extends Error {
  override readonly name = "AbortError";
  constructor() {
    super("The operation was aborted");
  }
}

interface PendingWait {
  timer: NodeJS.Timeout;
  reject(error: Error): void;
}

/**
 * Waits as `setTimeout(ms, undefined, { signal })` of node:timers/promises waits: a ref'd timer of `ms`, rejected
 * at once when the signal is already aborted, and ended (timer cleared, promise rejected) when it aborts.
 */
export class LatencyWaits {
  private readonly pending = new Set<PendingWait>();

  constructor(private readonly signal: AbortSignal | undefined) {
    signal?.addEventListener("abort", () => this.abortAll(), { once: true });
  }

  /** Resolves after `ms` milliseconds; rejects with an AbortError when the signal ends the wait first. */
  wait(ms: number): Promise<void> {
    if (this.signal?.aborted) return Promise.reject(new LatencyWaitAborted());
    return new Promise<void>((resolve, reject) => {
      const entry: PendingWait = {
        timer: setTimeout(() => {
          this.pending.delete(entry);
          resolve();
        }, ms),
        reject,
      };
      this.pending.add(entry);
    });
  }

  private abortAll(): void {
    for (const entry of this.pending) {
      clearTimeout(entry.timer);
      entry.reject(new LatencyWaitAborted());
    }
    this.pending.clear();
  }
}
