// Shared helpers for the session server tests: loopback backends, a raw scripted backend, JSON calls.
// Everything is real HTTP on 127.0.0.1; every server started here is closed by the caller's afterAll.
import { createServer, IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import type { ChatMessage } from "../../src/tokenizer/types";

/** A silent logger that keeps the warnings for assertions. */
export function recordingLogger(): { warn(message: string): void; info(message: string): void; warnings: string[] } {
  const warnings: string[] = [];
  return { warn: (m) => void warnings.push(m), info: () => undefined, warnings };
}

/** One HTTP exchange's outcome. */
export interface HttpReply {
  status: number;
  headers: Record<string, string>;
  text: string;
  bytes: Uint8Array;
  json<T = Record<string, unknown>>(): T;
}

/** Sends a request and reads the whole reply. */
export async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpReply> {
  const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  const res = await request(url, { method: method as "GET", body: payload, headers: { "content-type": "application/json", ...headers } });
  const bytes = new Uint8Array(await res.body.arrayBuffer());
  const text = Buffer.from(bytes).toString("utf8");
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(", ") : v;
  return { status: res.statusCode, headers: flat, text, bytes, json: <T>() => JSON.parse(text) as T };
}

/** Creates a session and returns its id. */
export async function createSession(serverUrl: string): Promise<string> {
  const reply = await call("POST", `${serverUrl}/sessions`);
  if (reply.status !== 200) throw new Error(`create session failed: ${reply.status} ${reply.text}`);
  return reply.json<{ session_id: string }>().session_id;
}

/** Posts a chat turn to a session. */
export function chat(serverUrl: string, sessionId: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<HttpReply> {
  return call("POST", `${serverUrl}/sessions/${sessionId}/v1/chat/completions`, body, headers);
}

/**
 * Creates sessions and gives each one turn (`turn`, with its index) until the server refuses a create or a turn, at
 * most `limit` sessions. Returns the refusal (null when none came) and the ids whose turn was answered.
 */
export async function fillUntilRefused(
  serverUrl: string,
  limit: number,
  turn: (sessionId: string, index: number) => Promise<HttpReply>,
): Promise<{ refusal: HttpReply | null; ids: string[] }> {
  const ids: string[] = [];
  for (let i = 0; i < limit; i += 1) {
    const created = await call("POST", `${serverUrl}/sessions`);
    if (created.status !== 200) return { refusal: created, ids };
    const id = created.json<{ session_id: string }>().session_id;
    const reply = await turn(id, i);
    if (reply.status !== 200) return { refusal: reply, ids };
    ids.push(id);
  }
  return { refusal: null, ids };
}

/** `GET /sessions/{id}` parsed. */
export async function getSession(
  serverUrl: string,
  sessionId: string,
): Promise<{ session_id: string; records: Record<string, any>[]; metadata: Record<string, any> }> {
  const reply = await call("GET", `${serverUrl}/sessions/${sessionId}`);
  if (reply.status !== 200) throw new Error(`get session failed: ${reply.status} ${reply.text}`);
  return reply.json();
}

/** The assistant message of a non-stream reply. */
export function assistantOf(reply: HttpReply): ChatMessage {
  return reply.json<{ choices: { message: ChatMessage }[] }>().choices[0].message;
}

/** A request seen by {@link startRawBackend}. */
export interface RawRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A scripted node:http backend that records raw requests and answers with whatever the handler returns. */
export interface RawBackend {
  url: string;
  requests: RawRequest[];
  close(): Promise<void>;
}

/** What a raw backend answers: a status, headers and a text or binary body. */
export interface RawResponse {
  status: number;
  headers?: Record<string, string>;
  body: string | Buffer;
}

/** Starts a raw loopback backend; `respond` returns status, headers and body for each request. */
export async function startRawBackend(respond: (req: RawRequest) => RawResponse | Promise<RawResponse>): Promise<RawBackend> {
  const requests: RawRequest[] = [];
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw: RawRequest = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
    requests.push(raw);
    const reply = await respond(raw);
    res.writeHead(reply.status, reply.headers ?? { "content-type": "application/json" });
    res.end(reply.body);
  };
  // A script that throws drops the connection, so the caller sees a transport error rather than a hang.
  const server: Server = createServer((req, res) => {
    answer(req, res).catch((error: unknown) => res.destroy(error instanceof Error ? error : new Error(String(error))));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A minimal valid SGLang chat reply for the raw backend (completion ids given). */
export function rawChatReply(
  ids: number[],
  overrides: { content?: string | null; completionTokens?: number; meta?: Record<string, unknown> | null } = {},
): string {
  const meta =
    overrides.meta === null
      ? undefined
      : {
          output_token_logprobs: ids.map((id, i) => [-i / 128, id]),
          completion_tokens: overrides.completionTokens ?? ids.length,
          prompt_tokens: 3,
          ...(overrides.meta ?? {}),
        };
  return JSON.stringify({
    id: "chatcmpl-raw00001",
    object: "chat.completion",
    created: 1,
    model: "raw",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: overrides.content === undefined ? "ok" : overrides.content },
        finish_reason: "stop",
        ...(meta ? { meta_info: meta } : {}),
      },
    ],
  });
}
