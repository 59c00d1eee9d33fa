// A scripted stand-in for one session's chat route, served on loopback with node:http for the agent tests.
// It records every request body and answers in OpenAI shape, as JSON or as many small SSE chunks.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What the scripted model says on one call. */
export interface ScriptedTurn {
  content: string;
  reasoning_content?: string;
  tool_calls?: { id: string; name: string; arguments: string }[];
}

/** A reply override: an HTTP error or a broken stream instead of a normal completion. */
interface ScriptedFailure {
  status?: number;
  body?: string;
  contentType?: string;
  omitDone?: boolean;
}

/** Decides the reply of call number `call` (0-based) from the request body. */
export type Script = (body: Record<string, unknown>, call: number) => ScriptedTurn | ScriptedFailure;

/** The running fake: its session base URL, the received bodies, and a close function. */
export interface FakeSessionEndpoint {
  baseUrl: string;
  requests: Record<string, unknown>[];
  /** Each request body as received (UTF-8 text of its bytes). */
  rawBodies: string[];
  paths: string[];
  close(): Promise<void>;
}

/** Starts the fake on 127.0.0.1:0; `baseUrl` is `<origin>/sessions/fake`. */
export async function startFakeSessionEndpoint(script: Script): Promise<FakeSessionEndpoint> {
  const requests: Record<string, unknown>[] = [];
  const rawBodies: string[] = [];
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    void handle(req, res);
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const body = JSON.parse(raw) as Record<string, unknown>;
    rawBodies.push(raw);
    paths.push(req.url ?? "");
    requests.push(body);
    const turn = script(body, requests.length - 1);
    if ("status" in turn || "omitDone" in turn || "contentType" in turn) {
      const failure = turn;
      if (failure.omitDone) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(`data: ${JSON.stringify(chunk({ role: "assistant", content: "cut" }, null))}\n\n`);
        return;
      }
      res.writeHead(failure.status ?? 200, { "content-type": failure.contentType ?? "application/json" });
      res.end(failure.body ?? "");
      return;
    }
    const scripted = turn as ScriptedTurn;
    const finish = scripted.tool_calls?.length ? "tool_calls" : "stop";
    if (body.stream === true) {
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
      const events = streamChunks(scripted, finish).map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`);
      events.push(": keep-alive comment\n\n", "data: [DONE]\n\n");
      const text = events.join("");
      // Write in uneven slices so events straddle TCP writes.
      for (let i = 0; i < text.length; i += 37) res.write(text.slice(i, i + 37));
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: "chatcmpl-fake",
        object: "chat.completion",
        created: 1,
        model: "fake",
        choices: [{ index: 0, message: fullMessage(scripted), finish_reason: finish }],
      }),
    );
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/sessions/fake`,
    requests,
    rawBodies,
    paths,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

/** The assistant message a non-streaming reply carries for a scripted turn. */
export function fullMessage(turn: ScriptedTurn): Record<string, unknown> {
  const message: Record<string, unknown> = { role: "assistant", content: turn.content };
  if (turn.reasoning_content !== undefined) message.reasoning_content = turn.reasoning_content;
  if (turn.tool_calls?.length) {
    message.tool_calls = turn.tool_calls.map((call, index) => ({
      id: call.id,
      index,
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return message;
}

function chunk(delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1, model: "fake", choices: [{ index: 0, delta, finish_reason: finish }], ...extra };
}

/** Splits a turn into many chunks: role, content halves, reasoning, tool-call fragments in thirds. */
export function streamChunks(turn: ScriptedTurn, finish: string): Record<string, unknown>[] {
  const out = [chunk({ role: "assistant" }, null)];
  const half = Math.ceil(turn.content.length / 2);
  out.push(chunk({ content: turn.content.slice(0, half) }, null), chunk({ content: turn.content.slice(half) }, null));
  if (turn.reasoning_content !== undefined) out.push(chunk({ reasoning_content: turn.reasoning_content }, null));
  (turn.tool_calls ?? []).forEach((call, index) => {
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }, null));
    const third = Math.ceil(call.arguments.length / 3);
    for (let i = 0; i < call.arguments.length; i += third) {
      out.push(chunk({ tool_calls: [{ index, function: { arguments: call.arguments.slice(i, i + third) } }] }, null));
    }
  });
  out.push(chunk({}, finish, { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
  return out;
}
