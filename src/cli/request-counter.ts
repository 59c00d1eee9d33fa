// Counts the chat requests each session receives, by watching the run's own HTTP client.
// An undici interceptor sees every request the agent sends, so the count does not depend on server metadata.
import type { Dispatcher } from "undici";

const CHAT_PATH = /\/sessions\/([^/?#]+)\/v1\/chat\/completions(?:[?#]|$)/;

/** Per-session chat request counts, filled by the interceptor it provides. */
export class SessionRequestCounter {
  private readonly counts = new Map<string, number>();

  /** Chat requests sent to `sessionId` so far (0 when none). */
  count(sessionId: string): number {
    return this.counts.get(sessionId) ?? 0;
  }

  /** Chat requests over all sessions. */
  get total(): number {
    let sum = 0;
    for (const n of this.counts.values()) sum += n;
    return sum;
  }

  /** An interceptor for `dispatcher.compose(...)` that counts `POST …/sessions/<id>/v1/chat/completions`. */
  interceptor(): Dispatcher.DispatcherComposeInterceptor {
    return (dispatch) => (options, handler) => {
      if (options.method === "POST") {
        const match = CHAT_PATH.exec(options.path);
        if (match !== null) this.counts.set(match[1], this.count(match[1]) + 1);
      }
      return dispatch(options, handler);
    };
  }
}
