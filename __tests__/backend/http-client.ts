// Small undici client used by the backend tests: POST/GET over real loopback HTTP, body as text and JSON.
// One Pool per backend URL so concurrent requests really run on separate connections.
import { Pool } from "undici";

/** A reply as the tests inspect it. */
export interface Reply {
  status: number;
  contentType: string;
  text: string;
  json: Record<string, unknown>;
}

/** An undici Pool bound to one origin. */
export class TestClient {
  readonly pool: Pool;
  constructor(url: string, connections = 32) {
    this.pool = new Pool(url, { connections });
  }

  /** POSTs `body` (serialized unless it is already a string) to `path`. */
  async post(path: string, body: unknown): Promise<Reply> {
    const payload = typeof body === "string" ? body : JSON.stringify(body);
    const response = await this.pool.request({ path, method: "POST", body: payload, headers: { "content-type": "application/json" } });
    return read(response.statusCode, String(response.headers["content-type"] ?? ""), await response.body.text());
  }

  /** GETs `path`. */
  async get(path: string): Promise<Reply> {
    const response = await this.pool.request({ path, method: "GET" });
    return read(response.statusCode, String(response.headers["content-type"] ?? ""), await response.body.text());
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function read(status: number, contentType: string, text: string): Reply {
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON (SSE bodies); tests read `text`
  }
  return { status, contentType, text, json };
}

/** `choices[0]` of a chat completion. */
export function firstChoice(reply: Reply): Record<string, any> {
  return (reply.json["choices"] as Record<string, any>[])[0];
}
