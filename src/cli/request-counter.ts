// Counts the chat requests each session receives, and which server instance it went to, by watching the run's own HTTP client.
// An undici interceptor sees every request the agent sends, so neither depends on server metadata.
import type { Dispatcher } from "undici";

const CHAT_PATH = /\/sessions\/([^/?#]+)\/v1\/chat\/completions(?:[?#]|$)/;

/** Per-session chat request counts and servers, filled by the interceptor it provides. */
export class SessionRequestCounter {
  private readonly counts = new Map<string, number>();
  private readonly servers = new Map<string, string>();

  /** Chat requests sent to `sessionId` so far (0 when none). */
  count(sessionId: string): number {
    return this.counts.get(sessionId) ?? 0;
  }

  /** The server (origin and any path before `/sessions/`) the session's chat requests went to; null when none was seen. */
  server(sessionId: string): string | null {
    return this.servers.get(sessionId) ?? null;
  }

  /** Chat requests over all sessions. */
  get total(): number {
    let sum = 0;
    for (const n of this.counts.values()) sum += n;
    return sum;
  }

  /** An interceptor for `dispatcher.compose(...)` that counts `POST …/sessions/<id>/v1/chat/completions` and notes their server. */
  interceptor(): Dispatcher.DispatcherComposeInterceptor {
    return (dispatch) => (options, handler) => {
      if (options.method === "POST") {
        const match = CHAT_PATH.exec(options.path);
        if (match !== null) {
          this.counts.set(match[1], this.count(match[1]) + 1);
          const origin = typeof options.origin === "string" ? options.origin.replace(/\/+$/, "") : options.origin?.origin;
          if (origin !== undefined) this.servers.set(match[1], `${origin}${options.path.slice(0, match.index)}`);
        }
      }
      return dispatch(options, handler);
    };
  }
}
