// Loopback harness for the v2 HTTP tests: a mock backend with a swappable script, a v2 session server, a tiny client.
// Everything binds 127.0.0.1 on a free port and is closed by the test's afterAll.
import { request } from "undici";
import { echoScript, startMockBackend, type MockBackend } from "../../../../src/backend";
import type { ProcessFunction } from "../../../../src/backend/types";
import { startSessionServer, type RunningSessionServer, type SessionServerOptions } from "../../../../src/server/session-server";
import type { ChatMessage } from "../../../../src/tokenizer/types";
import type { SessionRecord } from "../../../../src/server/types";
import { Sample } from "../../../../src/wire/sample";
import { decodeSamplesReply, WIRE_FIELDS_V2, type SamplesReply } from "../../../../src/wire/samples-codec";
import { recordingLogger } from "./forest-builders";

/** The seed fixture's server kwargs: servers alone default to {} (miles' --apply-chat-template-kwargs). */
const SEED_KWARGS = { enable_thinking: false };

/** A running backend + v2 server pair. */
export interface V2Harness {
  backend: MockBackend;
  server: RunningSessionServer;
  /** Warnings the server logged. */
  warnings: string[];
  /** Replaces the backend's process function until the next call (echo by default). */
  useScript(script: ProcessFunction): void;
  close(): Promise<void>;
}

/** Starts a mock backend and a v2 session server in front of it. */
export async function startV2Harness(options: Partial<SessionServerOptions> = {}): Promise<V2Harness> {
  let script: ProcessFunction = echoScript;
  const backend = await startMockBackend({ process: (prompt, body) => script(prompt, body) });
  const logger = recordingLogger();
  const server = await startSessionServer({ chatTemplateKwargs: SEED_KWARGS, version: "v2", backendUrl: backend.url, logger, ...options });
  return {
    backend,
    server,
    warnings: logger.messages,
    useScript: (next) => {
      script = next;
    },
    close: async () => {
      await server.close();
      await backend.close();
    },
  };
}

/** A parsed HTTP reply. */
export interface Reply<T = Record<string, unknown>> {
  status: number;
  json: T;
  text: string;
  bytes: Buffer;
  contentType: string;
}

/** Sends one request and reads the whole reply. */
export async function call(method: "GET" | "POST" | "DELETE", url: string, body?: unknown): Promise<Reply> {
  const res = await request(url, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const contentType = String(res.headers["content-type"] ?? "");
  const text = contentType.includes("octet-stream") ? "" : bytes.toString("utf8");
  let json: Record<string, unknown> = {};
  if (contentType.includes("json") && text !== "") json = JSON.parse(text) as Record<string, unknown>;
  return { status: res.statusCode, json, text, bytes, contentType };
}

/** Creates a session and returns its id. */
export async function createSession(base: string): Promise<string> {
  const reply = await call("POST", `${base}/sessions`);
  if (reply.status !== 200) throw new Error(`create session failed: ${reply.status} ${reply.text}`);
  return reply.json.session_id as string;
}

/** One chat turn; returns the reply and, on 200, the assistant message. */
export async function chat(base: string, id: string, messages: ChatMessage[], extra: Record<string, unknown> = {}): Promise<Reply & { message: ChatMessage }> {
  const reply = await call("POST", `${base}/sessions/${id}/v1/chat/completions`, { messages, ...extra });
  const choices = reply.json.choices as Array<{ message: ChatMessage }> | undefined;
  return { ...reply, message: choices?.[0]?.message as ChatMessage };
}

/** A chat turn that must succeed; returns the assistant message. */
export async function turn(base: string, id: string, messages: ChatMessage[]): Promise<ChatMessage> {
  const reply = await chat(base, id, messages);
  if (reply.status !== 200) throw new Error(`chat failed: ${reply.status} ${reply.text}`);
  return reply.message;
}

/** Tree metadata as GET returns it. */
export interface TreeView {
  nodes: Array<{
    id: number;
    parent: number | null;
    seq: number;
    truncated: boolean;
    committed_at: number;
    completion_span: [number, number];
    num_tokens: number;
    response_id: string;
  }>;
  leaves: Array<{ node_id: number; path_node_ids: number[] }>;
}

/** `GET /sessions/{id}`. */
export async function getSession(
  base: string,
  id: string,
): Promise<{ records: SessionRecord[]; metadata: Record<string, unknown> & { tree: TreeView; accumulated_token_ids: number[] } }> {
  const reply = await call("GET", `${base}/sessions/${id}`);
  if (reply.status !== 200) throw new Error(`get session failed: ${reply.status} ${reply.text}`);
  return reply.json as never;
}

/** `POST /sessions/{id}/samples`, raw. */
export function postSamples(base: string, id: string, body: Record<string, unknown> = { max_seq_len: null }): Promise<Reply> {
  return call("POST", `${base}/sessions/${id}/samples`, body);
}

/** `POST /sessions/{id}/samples`, decoded onto a default input sample (v2 field list). */
export async function collect(base: string, id: string, body: Record<string, unknown> = { max_seq_len: null }): Promise<SamplesReply> {
  const reply = await postSamples(base, id, body);
  if (reply.status !== 200) throw new Error(`samples failed: ${reply.status} ${reply.text}`);
  return decodeSamplesReply(new Uint8Array(reply.bytes), new Sample(), { fields: WIRE_FIELDS_V2 });
}

/** The `leaf.node_id` of each decoded sample. */
export function sampleLeafIds(reply: SamplesReply): number[] {
  return reply.samples.map((sample) => (sample.metadata.leaf as { node_id: number }).node_id);
}
