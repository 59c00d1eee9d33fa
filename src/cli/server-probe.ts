// Checks that a server named by a flag or an environment variable answers HTTP before the run relies on it.
// Any HTTP status counts as reachable; a refused connection, a bad host or a timeout does not.
import { Client } from "undici";

/** What a probe learned from `GET <url>/health`. */
export interface ProbeResult {
  status: number;
  /** The reply body, parsed when it is JSON, else its text (null when empty). */
  body: unknown;
}

/**
 * `GET <url>/health` with a deadline.
 * @throws Error with the transport failure's message (e.g. `connect ECONNREFUSED 127.0.0.1:9`) or a timeout note.
 */
export async function probeHealth(url: string, timeoutMs = 5_000): Promise<ProbeResult> {
  const target = new URL(url);
  const client = new Client(target.origin, { connectTimeout: timeoutMs, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const timer = new AbortController();
  const deadline = setTimeout(() => timer.abort(new Error(`no reply within ${timeoutMs} ms`)), timeoutMs);
  try {
    const reply = await client.request({ method: "GET", path: `${target.pathname.replace(/\/+$/, "")}/health`, signal: timer.signal });
    const text = await reply.body.text();
    return { status: reply.statusCode, body: parseBody(text) };
  } catch (error) {
    throw new Error(describeTransportError(error), { cause: error });
  } finally {
    clearTimeout(deadline);
    await client.destroy();
  }
}

function parseBody(text: string): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text.length > 200 ? `${text.slice(0, 200)}…` : text;
  }
}

/** A one-line description of a transport error (undici wraps the socket error in `cause`). */
export function describeTransportError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describeTransportError(error.errors[0]);
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const cause = error.cause instanceof Error ? error.cause.message : "";
    const message = error.message || (typeof code === "string" ? code : error.name);
    return cause !== "" && !message.includes(cause) ? `${message} (${cause})` : message;
  }
  return String(error);
}
