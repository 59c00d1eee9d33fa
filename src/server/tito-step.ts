// One rule for every TITO call a policy makes while positioning a request (v1 and v2 alike):
// a tokenizer failure is a 500 naming the step, while an HTTP error raised inside passes through unchanged.
import { SessionHttpError } from "./types";

/**
 * Runs one TITO step (`"render"` from scratch, `"merge"` onto a stored prefix).
 * @throws SessionHttpError(500) `TITO <step> failed: <cause>` for any error that is not already an HTTP error
 */
export function titoStep<T>(step: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof SessionHttpError) throw error;
    throw new SessionHttpError(500, `TITO ${step} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
