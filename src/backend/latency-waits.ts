// The latency wait before each generation reply: plain timers that their shutdown signal ends all at once.
// One abort listener per signal instead of one added and removed per request, as node:timers/promises would.

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
 * at once when the signal is already aborted, and ended (timer cleared, promise rejected) when it aborts. Each
 * wait names its signal (a transport may hand out a fresh one after each close).
 */
export class LatencyWaits {
  private readonly pending = new WeakMap<AbortSignal, Set<PendingWait>>();

  /** Resolves after `ms` milliseconds; rejects with an AbortError when `signal` ends the wait first. */
  wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (signal === undefined) return new Promise<void>((resolve) => setTimeout(resolve, ms));
    if (signal.aborted) return Promise.reject(new LatencyWaitAborted());
    const pending = this.pendingOf(signal);
    return new Promise<void>((resolve, reject) => {
      const entry: PendingWait = {
        timer: setTimeout(() => {
          pending.delete(entry);
          resolve();
        }, ms),
        reject,
      };
      pending.add(entry);
    });
  }

  /** The waits pending on `signal`, with the one listener that ends them all when it aborts. */
  private pendingOf(signal: AbortSignal): Set<PendingWait> {
    let pending = this.pending.get(signal);
    if (pending === undefined) {
      const waits = new Set<PendingWait>();
      signal.addEventListener(
        "abort",
        () => {
          for (const entry of waits) {
            clearTimeout(entry.timer);
            entry.reject(new LatencyWaitAborted());
          }
          waits.clear();
        },
        { once: true },
      );
      this.pending.set(signal, waits);
      pending = waits;
    }
    return pending;
  }
}
