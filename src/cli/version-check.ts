// Confirms that a URL given as --v1 (or --v2) is a session server of that version before any trajectory runs.
// Reads /health's session_server_version, else opens a throw-away session and looks for v2's metadata.tree.
import { request } from "undici";
import type { SessionServerVersion } from "../server/types";
import { describeTransportError } from "../fixture/health-probe";

/** How a server's version was found out, for messages. */
export interface DetectedVersion {
  version: SessionServerVersion;
  /** `its /health reply says so`, or `its session view has (no) metadata.tree`. */
  evidence: string;
}

async function callJson(method: "POST" | "GET" | "DELETE", url: string, timeoutMs: number): Promise<{ status: number; body: unknown; text: string }> {
  const reply = await request(url, { method, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const text = await reply.body.text();
  let body: unknown;
  try {
    body = text === "" ? null : JSON.parse(text);
  } catch {
    body = null;
  }
  return { status: reply.statusCode, body, text };
}

function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
}

/**
 * The session-server version behind `url`. `health` is the body its `GET /health` already returned.
 * @throws Error saying why `url` does not behave like a session server (no session route, no JSON session view).
 */
export async function detectSessionServerVersion(url: string, health: unknown, timeoutMs = 5_000): Promise<DetectedVersion> {
  const reported = field(health, "session_server_version");
  if (reported === "v1" || reported === "v2") return { version: reported, evidence: "its /health reply says so" };
  const base = url.replace(/\/+$/, "");
  let created;
  try {
    created = await callJson("POST", `${base}/sessions`, timeoutMs);
  } catch (error) {
    throw new Error(`POST /sessions failed: ${describeTransportError(error)}`, { cause: error });
  }
  const id = field(created.body, "session_id");
  if (created.status !== 200 || typeof id !== "string") {
    throw new Error(`it does not look like a session server: POST /sessions answered ${created.status} ${created.text.slice(0, 200)}`);
  }
  try {
    const view = await callJson("GET", `${base}/sessions/${encodeURIComponent(id)}`, timeoutMs);
    const metadata = field(view.body, "metadata");
    if (view.status !== 200 || metadata === undefined) {
      throw new Error(`it does not look like a session server: GET /sessions/{id} answered ${view.status} ${view.text.slice(0, 200)}`);
    }
    return field(metadata, "tree") !== undefined
      ? { version: "v2", evidence: "its session view has metadata.tree" }
      : { version: "v1", evidence: "its session view has no metadata.tree" };
  } finally {
    await callJson("DELETE", `${base}/sessions/${encodeURIComponent(id)}`, timeoutMs).catch(() => undefined);
  }
}
