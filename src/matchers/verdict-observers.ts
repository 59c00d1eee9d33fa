// Lets a listener see every verdict the scenario matchers reach (the HTML reporter records them this way).
// No I/O here: matchers only notify; an observer that throws never changes an assertion's outcome.
import type { ParityVerdict } from "./parity-verdict";

/** One matcher call as an observer sees it. */
export interface ObservedVerdict {
  /** Matcher name, e.g. `toHaveTrainingPayloadParity`. */
  matcher: string;
  /** The value under `expect(...)`. */
  received: unknown;
  /** The matcher's argument. */
  expected: unknown;
  /** What the check concluded (before `.not` is applied). */
  verdict: ParityVerdict;
  /** True under `.not`. */
  isNot: boolean;
  /** The test file, when the runner says. */
  testPath?: string;
  /** The test's full name, when the runner says. */
  testName?: string;
}

type VerdictObserver = (observed: ObservedVerdict) => void;

const observers = new Set<VerdictObserver>();

/** Calls `observer` for every later scenario-matcher verdict; returns the function that stops it. */
export function observeVerdicts(observer: VerdictObserver): () => void {
  observers.add(observer);
  return () => {
    observers.delete(observer);
  };
}

/** Hands `observed` to every observer; their errors are swallowed (a report must never fail a test). */
export function notifyVerdict(observed: ObservedVerdict): void {
  for (const observer of observers) {
    try {
      observer(observed);
    } catch {
      // A broken observer loses its own record only.
    }
  }
}
