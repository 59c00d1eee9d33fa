// Fault injection against a real v1 session server on loopback: oversized and chunked bodies, deep nesting,
// decompression bombs, out-of-vocabulary ids, stale sockets, deadlines, Host and content-type refusals.
// Each case asserts the status, the exact message, and that the stored session did not change.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import { call, chat, createSession, getSession, rawChatReply, recordingLogger } from "./helpers";

const MAX_BODY = 1024 * 1024;
const MAX_REPLY = 1024 * 1024;

type Responder = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A loopback backend whose answer each test sets; it counts requests per connection. */
interface ScriptedBackend {
  url: string;
  respond: Responder;
  requests: { connection: number; requestOnConnection: number }[];
  sockets: Set<Socket>;
  close(): Promise<void>;
}

async function startScriptedBackend(): Promise<ScriptedBackend> {
  const perSocket = new WeakMap<Socket, { id: number; served: number }>();
  let connections = 0;
  const backend: ScriptedBackend = {
    url: "",
    respond: (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(rawChatReply([9707]));
    },
    requests: [],
    sockets: new Set(),
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const socketInfo = perSocket.get(req.socket)!;
      socketInfo.served += 1;
      backend.requests.push({ connection: socketInfo.id, requestOnConnection: socketInfo.served });
      backend.respond(req, res, Buffer.concat(chunks).toString("utf8"));
    });
  });
  server.on("connection", (socket: Socket) => {
    connections += 1;
    perSocket.set(socket, { id: connections, served: 0 });
    backend.sockets.add(socket);
    socket.once("close", () => backend.sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  backend.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  backend.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return backend;
}

/** Writes raw bytes on a fresh socket and resolves with the first complete HTTP reply (status line, headers, body). */
function rawExchange(url: string, writeRequest: (socket: Socket) => void): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const text = received.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end === -1) return;
      const head = text.slice(0, end);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? "0");
      if (received.length < end + 4 + length) return;
      socket.destroy();
      resolve({ status: Number(head.split(" ")[1]), headers: head, body: received.subarray(end + 4, end + 4 + length).toString("utf8") });
    });
    socket.on("error", reject);
    socket.on("connect", () => writeRequest(socket));
  });
}

const MESSAGES = [{ role: "user", content: "What's the weather in Beijing?" }];

let backend: ScriptedBackend;
let server: RunningSessionServer;
let sessionId: string;
let stored: Awaited<ReturnType<typeof getSession>>;
const logger = recordingLogger();

beforeAll(async () => {
  backend = await startScriptedBackend();
  server = await startSessionServer({
    version: "v1",
    backendUrl: backend.url,
    maxBodyBytes: MAX_BODY,
    maxReplyBytes: MAX_REPLY,
    upstreamTimeoutMs: 60_000,
    logger,
  });
  sessionId = await createSession(server.url);
  const first = await chat(server.url, sessionId, { messages: MESSAGES });
  expect(first.status).toBe(200);
  stored = await getSession(server.url, sessionId);
  expect(stored.records).toHaveLength(1);
});

afterAll(async () => {
  await server?.close();
  await backend?.close();
});

afterEach(async () => {
  // Every refusal leaves the stored session exactly as it was.
  expect(await getSession(server.url, sessionId)).toEqual(stored);
  backend.respond = (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(rawChatReply([9707]));
  };
});

const nextTurn = { messages: [...MESSAGES, { role: "assistant", content: "ok" }, { role: "user", content: "And Shanghai?" }] };
const chatPath = (): string => `/sessions/${sessionId}/v1/chat/completions`;
const host = (): string => new URL(server.url).host;

describe("request body limit", () => {
  test("a declared Content-Length over the limit is answered 413 before any body byte is sent", async () => {
    const reply = await rawExchange(server.url, (socket) => {
      socket.write(`POST ${chatPath()} HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: application/json\r\nContent-Length: 314572800\r\n\r\n`);
    });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toEqual({ error: `request body of 314572800 bytes exceeds the ${MAX_BODY}-byte limit` });
  });

  test("a chunked body is refused once it passes the limit, while the client is still sending", async () => {
    const reply = await rawExchange(server.url, (socket) => {
      socket.write(`POST ${chatPath()} HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      // 1.5 MiB in 64 KiB chunks, never terminated: the reply cannot wait for the end of the body.
      for (let i = 0; i < 24; i += 1) socket.write(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]));
    });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toEqual({ error: `request body exceeds the ${MAX_BODY}-byte limit` });
  });

  test("a body just under the limit is read (and refused only for what it says)", async () => {
    const reply = await call("POST", `${server.url}${chatPath()}`, `{"messages": 1${" ".repeat(MAX_BODY - 20)}}`);
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: "messages must be a non-empty array of chat messages" });
  });
});

describe("JSON nesting cap (128)", () => {
  test("a request body nested 129 deep is refused with 400 at the offending bracket", async () => {
    const body = `{"messages": ${"[".repeat(128)}${"]".repeat(128)}}`;
    const reply = await call("POST", `${server.url}${chatPath()}`, body);
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: "request body refused: JSON nesting exceeds the depth limit of 128 (level 129 opens at offset 140)" });
  });

  test("brackets inside strings do not count, 128 levels are accepted by the scan", async () => {
    const body = JSON.stringify({ messages: [{ role: "user", content: "[".repeat(500) }], x: JSON.parse(`${"[".repeat(126)}${"]".repeat(126)}`) });
    const reply = await call("POST", `${server.url}/sessions/${sessionId}/samples`, body);
    // The samples route parses the same way: within the cap the body is accepted and answered.
    expect(reply.status).toBe(200);
  });

  test("a backend reply nested past the cap is a 502 and nothing is stored", async () => {
    backend.respond = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(`{"choices": ${"[".repeat(200_000)}`);
    };
    const reply = await chat(server.url, sessionId, nextTurn);
    expect(reply.status).toBe(502);
    expect(reply.json()).toEqual({ error: "backend reply refused: JSON nesting exceeds the depth limit of 128 (level 129 opens at offset 139)" });
  });
});

describe("backend reply cap and deadline", () => {
  test("a gzip bomb is refused while inflating, with 502 naming the cap", async () => {
    const bomb = gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20));
    backend.respond = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(bomb);
    };
    const reply = await chat(server.url, sessionId, nextTurn);
    expect(reply.status).toBe(502);
    expect(reply.json()).toEqual({ error: `backend reply exceeds the ${MAX_REPLY}-byte reply cap (counted after decompression)` });
  });

  test("a plain reply over the cap is refused the same way", async () => {
    backend.respond = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(Buffer.alloc(MAX_REPLY + 1, 0x20));
    };
    const reply = await chat(server.url, sessionId, nextTurn);
    expect(reply.status).toBe(502);
    expect(reply.json()).toEqual({ error: `backend reply exceeds the ${MAX_REPLY}-byte reply cap (counted after decompression)` });
  });

  test("a deflate reply (zlib-wrapped) within the cap is decoded", async () => {
    const { deflateSync } = await import("node:zlib");
    backend.respond = (_req, res) => {
      res.writeHead(404, { "content-type": "application/json", "content-encoding": "deflate" });
      res.end(deflateSync(Buffer.from('{"error": "no such thing"}')));
    };
    const reply = await call("GET", `${server.url}/sessions/${sessionId}/v1/models`);
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual({ error: "no such thing" });
  });

  test("the upstream timeout is a deadline for the whole reply, not an inactivity timer", async () => {
    const short = await startSessionServer({ version: "v1", backendUrl: backend.url, upstreamTimeoutMs: 300, logger: recordingLogger() });
    const trickle: NodeJS.Timeout[] = [];
    try {
      backend.respond = (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        // A byte every 50 ms keeps an inactivity timer happy forever; the deadline must still end the call.
        trickle.push(setInterval(() => res.write(" "), 50));
      };
      const id = await createSession(short.url);
      const reply = await chat(short.url, id, { messages: MESSAGES });
      expect(reply.status).toBe(502);
      expect(reply.json()).toEqual({ error: "backend did not send a complete reply within the 300 ms upstream deadline" });
      expect((await getSession(short.url, id)).records).toEqual([]);
    } finally {
      trickle.forEach(clearInterval);
      await short.close();
    }
  });
});

describe("backend reply validation", () => {
  test.each([
    [-5, "meta_info.output_token_logprobs[1][1] = -5 is not a token id of the tokenizer's vocabulary (0 <= id < 151669)"],
    [99999999999, "meta_info.output_token_logprobs[1][1] = 99999999999 is not a token id of the tokenizer's vocabulary (0 <= id < 151669)"],
    [151669, "meta_info.output_token_logprobs[1][1] = 151669 is not a token id of the tokenizer's vocabulary (0 <= id < 151669)"],
  ])("token id %p is refused with 502 and not stored", async (id, message) => {
    backend.respond = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(rawChatReply([9707, id]));
    };
    const reply = await chat(server.url, sessionId, nextTurn);
    expect(reply.status).toBe(502);
    expect(reply.json()).toEqual({ error: message });
  });

  test("a log-prob that is not a number is refused", async () => {
    backend.respond = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(rawChatReply([9707], { meta: { output_token_logprobs: [["-0.5", 9707]] } }));
    };
    const reply = await chat(server.url, sessionId, nextTurn);
    expect(reply.status).toBe(502);
    expect(reply.json()).toEqual({ error: "meta_info.output_token_logprobs[0] must be a [logprob, token_id] pair" });
  });
});

describe("stale pooled sockets", () => {
  test("a socket the backend closed while idle does not fail the next chat", async () => {
    const id = await createSession(server.url);
    expect((await chat(server.url, id, { messages: MESSAGES })).status).toBe(200);
    // The backend closes every idle socket (what a 1 s keep-alive timeout does), and the test waits for the close.
    await Promise.all([...backend.sockets].map((socket) => new Promise<void>((resolve) => socket.once("close", () => resolve()).destroy())));
    const seen = backend.requests.length;
    const reply = await chat(server.url, id, { messages: MESSAGES });
    expect(reply.status).toBe(200);
    expect(backend.requests.length).toBeGreaterThan(seen);
    await call("DELETE", `${server.url}/sessions/${id}`);
  });

  test("a reused connection reset before any reply byte is retried once on a fresh connection", async () => {
    const id = await createSession(server.url);
    expect((await chat(server.url, id, { messages: MESSAGES })).status).toBe(200);
    const seen = backend.requests.length;
    let resets = 0;
    backend.respond = (req, res) => {
      const last = backend.requests[backend.requests.length - 1];
      if (last.requestOnConnection > 1 && resets === 0) {
        // The close races the request: the backend drops the reused socket without a byte of reply.
        resets += 1;
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(rawChatReply([9707]));
    };
    const reply = await chat(server.url, id, { messages: MESSAGES });
    expect(reply.status).toBe(200);
    const attempts = backend.requests.slice(seen);
    expect(attempts).toHaveLength(2);
    expect(attempts[0].requestOnConnection).toBeGreaterThan(1);
    expect(attempts[1].requestOnConnection).toBe(1);
    // v1 treats the identical request as a retry of the last turn: still one record, now the retried one.
    expect((await getSession(server.url, id)).records).toHaveLength(1);
    await call("DELETE", `${server.url}/sessions/${id}`);
  });

  test("a connection that fails after the reply started is not retried (502)", async () => {
    const seen = backend.requests.length;
    backend.respond = (req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
      res.write("{");
      setImmediate(() => req.socket.destroy());
    };
    const reply = await chat(server.url, sessionId, nextTurn);
    expect(reply.status).toBe(502);
    expect(reply.json<{ error: string }>().error).toMatch(/^backend transport error: /);
    expect(backend.requests.length - seen).toBe(1);
  });
});

describe("browser-facing refusals", () => {
  test("a Host that is not the bound loopback address is refused (DNS rebinding)", async () => {
    const reply = await call("POST", `${server.url}${chatPath()}`, nextTurn, { host: `attacker.example:${new URL(server.url).port}` });
    expect(reply.status).toBe(403);
    const port = new URL(server.url).port;
    expect(reply.json()).toEqual({
      error: `Host "attacker.example:${port}" is not this server's loopback address; refused as a possible DNS-rebinding request (allowed: 127.0.0.1:${port}, localhost:${port}, [::1]:${port})`,
    });
  });

  test("localhost is an allowed Host", async () => {
    const reply = await call("GET", `${server.url}/health`, undefined, { host: `localhost:${new URL(server.url).port}` });
    expect(reply.status).toBe(200);
  });

  test("a POST body without a JSON content type is refused (no CORS-simple writes)", async () => {
    const reply = await call("POST", `${server.url}${chatPath()}`, nextTurn, { "content-type": "text/plain" });
    expect(reply.status).toBe(415);
    expect(reply.json()).toEqual({ error: 'POST bodies must be sent with content-type application/json, got "text/plain"' });
  });
});

describe("client mistakes are 4xx without paths", () => {
  test("tool_calls given as a string is a 400 naming the message", async () => {
    const body = { messages: [...MESSAGES, { role: "assistant", content: "", tool_calls: "get_weather" }, { role: "tool", content: "sunny" }] };
    const reply = await chat(server.url, sessionId, body);
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: "messages[1].tool_calls must be an array of tool calls or null, got a string" });
  });

  test("tool-call arguments that are not JSON are a 400 naming the field, with no absolute path", async () => {
    const call0 = { id: "call_1", type: "function", function: { name: "get_weather", arguments: "{location: Beijing}" } };
    const id = await createSession(server.url);
    const reply = await chat(server.url, id, {
      messages: [...MESSAGES, { role: "assistant", content: "", tool_calls: [call0] }, { role: "user", content: "go" }],
    });
    expect(reply.status).toBe(400);
    const error = reply.json<{ error: string }>().error;
    expect(error).toMatch(/^TITO render failed: messages\[1\]\.tool_calls\[0\]\.function\.arguments is not valid JSON \(.+\): \{location: Beijing\}$/);
    expect(error).not.toMatch(/\/[\w.-]+\/[\w.-]+/);
    expect(logger.warnings.filter((line) => line.startsWith("unhandled error"))).toEqual([]);
    await call("DELETE", `${server.url}/sessions/${id}`);
  });
});
