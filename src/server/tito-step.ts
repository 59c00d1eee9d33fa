// One rule for every TITO call a policy makes while positioning a request (v1 and v2 alike):
// a tokenizer failure is a 500 naming the step, a template that cannot take the client's messages a 400.
import { ChatTemplateError } from "../tokenizer/chat-template";
import { redactAbsolutePaths } from "./redaction";
import { SessionHttpError } from "./types";

/**
 * Runs one TITO step (`"render"` from scratch, `"merge"` onto a stored prefix).
 * @throws SessionHttpError(400) `TITO <step> failed: <cause>` when the chat template refuses the request's
 *   messages (e.g. tool-call arguments that are not JSON: the client's mistake; miles answers 500, a listed
 *   deviation), SessionHttpError(500) for any other error that is not already an HTTP error. Neither message
 *   carries an absolute filesystem path.
 */
export function titoStep<T>(step: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof SessionHttpError) throw error;
    const status = error instanceof ChatTemplateError ? 400 : 500;
    throw new SessionHttpError(status, redactAbsolutePaths(`TITO ${step} failed: ${error instanceof Error ? error.message : String(error)}`));
  }
}
