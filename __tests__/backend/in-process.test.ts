// The in-process path (msw setupServer, fetch client) must answer byte for byte like the loopback bridge.
// Both backends get the same fixed clock and id source, so every reply byte is comparable.
import { startMockBackend, useMockBackend, echoScript, type MockBackend, type InProcessMockBackend } from "../../src/backend";
import { loadTokenizer } from "../../src/tokenizer/load";
import type { Tokenizer } from "../../src/tokenizer/types";
import { buildInitialMessages, WEATHER_TOOLS } from "../../src/agent/texts";
import { TestClient } from "./http-client";
import { buildBackendHandlers, unknownPathResponse } from "../../src/backend/handlers";
import { serveHandlers } from "../../src/backend/http-bridge";
import { request as undiciRequest } from "undici";

const fixedIds = (): (() => string) => {
  let next = 0;
  return () => (next++).toString(16).padStart(8, "0");
};
const clock = (): number => 1_800_000_000.25;

/** Echoes, except that prompts mentioning "tool please" answer a tool call, and "explode" throws. */
const process = (prompt: string, request: Record<string, unknown>) => {
  if (prompt.includes("explode")) throw new Error("scripted failure");
  if (prompt.includes("tool please")) {
    return { text: 'Calling.\n<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n</tool_call>', cached_tokens: 3 };
  }
  return echoScript(prompt, request);
};

let tokenizer: Tokenizer;
let loopback: MockBackend;
let inProcess: InProcessMockBackend;
let client: TestClient;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  loopback = await startMockBackend({ tokenizer, process, clock, idSource: fixedIds() });
  inProcess = useMockBackend({ tokenizer, process, clock, idSource: fixedIds() });
  inProcess.listen();
  client = new TestClient(loopback.url);
});

afterAll(async () => {
  inProcess.close();
  await client.close();
  await loopback.close();
});

const userTurn = (text: string) => [...buildInitialMessages().slice(0, 1), { role: "user", content: text }];

const CASES: ReadonlyArray<readonly [string, string, string]> = [
  ["plain chat", "/v1/chat/completions", JSON.stringify({ messages: userTurn("hello there") })],
  ["tool call", "/v1/chat/completions", JSON.stringify({ messages: userTurn("tool please"), tools: WEATHER_TOOLS })],
  ["stream", "/v1/chat/completions", JSON.stringify({ messages: userTurn("tool please"), tools: WEATHER_TOOLS, stream: true })],
  ["generate", "/generate", JSON.stringify({ input_ids: [151644, 872, 198, 14990, 151645] })],
  ["not JSON", "/v1/chat/completions", "{oops"],
  ["no prompt", "/v1/chat/completions", "{}"],
  ["process throws", "/v1/chat/completions", JSON.stringify({ messages: userTurn("explode") })],
  ["unknown path", "/v1/embeddings", JSON.stringify({ input: "x" })],
];

describe("useMockBackend", () => {
  test.each(CASES)("%s: same status, content type and bytes as the loopback backend", async (_name, path, body) => {
    const viaLoopback = await client.post(path, body);
    const viaFetch = await fetch(`${inProcess.url}${path}`, { method: "POST", body, headers: { "content-type": "application/json" } });
    expect(viaFetch.status).toBe(viaLoopback.status);
    expect(viaFetch.headers.get("content-type")).toBe(viaLoopback.contentType);
    expect(await viaFetch.text()).toBe(viaLoopback.text);
  });

  test("both paths logged the same request bodies", () => {
    expect(inProcess.requestLog).toEqual(loopback.requestLog);
    expect(inProcess.requests.map((entry) => [entry.path, entry.status])).toEqual(loopback.requests.map((entry) => [entry.path, entry.status]));
    expect(inProcess.requestLog).toHaveLength(CASES.length);
  });

  test("echoScript answered with the last user message", async () => {
    const reply = await fetch(`${inProcess.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ messages: userTurn("ping 42") }),
    });
    const body = (await reply.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0].message.content).toBe("echo: ping 42");
  });

  test("requests to other origins pass through to the real network untouched", async () => {
    const inProcessBefore = inProcess.requestLog.length;
    const loopbackBefore = loopback.requestLog.length;
    const reply = await fetch(`${loopback.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ messages: userTurn("over the wire") }),
    });
    expect(reply.status).toBe(200);
    expect(inProcess.requestLog).toHaveLength(inProcessBefore);
    expect(loopback.requestLog).toHaveLength(loopbackBefore + 1);
  });

  test("listen after close works again and stats carry on until reset", async () => {
    inProcess.close();
    inProcess.listen();
    inProcess.reset();
    const reply = await fetch(`${inProcess.url}/health`);
    expect(reply.status).toBe(200);
    expect(inProcess.requestLog).toEqual([]);
    expect(inProcess.maxConcurrent).toBe(0);
  });

  test("without a tokenizer the Qwen3 tokenizer is loaded on first use", async () => {
    inProcess.close();
    const lazy = useMockBackend({ process: echoScript, origin: "http://lazy-backend.localhost:1234" });
    lazy.listen();
    try {
      const reply = await fetch(`${lazy.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ messages: userTurn("lazy") }) });
      const body = (await reply.json()) as { choices: { meta_info: { output_token_logprobs: [number, number][] } }[] };
      const ids = body.choices[0].meta_info.output_token_logprobs.map((pair) => pair[1]);
      expect(ids).toEqual([...tokenizer.encode("echo: lazy"), tokenizer.tokenToId("<|im_end|>")]);
      const missing = await fetch(`${lazy.url}/nope`);
      expect(missing.status).toBe(404);
    } finally {
      lazy.close();
      inProcess.listen();
    }
  });
});

describe("the loopback bridge's direct route", () => {
  /** Status, every header but the per-connection ones, and the body bytes of one POST. */
  const raw = async (url: string, path: string, body: string) => {
    const reply = await undiciRequest(`${url}${path}`, { method: "POST", body, headers: { "content-type": "application/json" } });
    const headers = Object.entries(reply.headers).filter(([name]) => !["date", "connection", "keep-alive"].includes(name));
    return { status: reply.statusCode, headers, body: Buffer.from(await reply.body.arrayBuffer()).toString("hex") };
  };

  test.each(CASES)("%s: same status, headers in order and bytes as msw's handlers on the same bridge", async (_name, path, body) => {
    const direct = await startMockBackend({ tokenizer, process, clock, idSource: fixedIds() });
    const { handlers, directRoute, stats } = buildBackendHandlers({ tokenizer, process, clock, idSource: fixedIds() });
    expect(directRoute).toBeDefined();
    // no direct route: every request becomes a Fetch Request and goes through msw
    const viaMsw = await serveHandlers(handlers, { onUnhandled: (unmatched) => unknownPathResponse(stats, unmatched) });
    try {
      const [a, b] = [await raw(direct.url, path, body), await raw(viaMsw.url, path, body)];
      expect(a).toEqual(b);
    } finally {
      await direct.close();
      await viaMsw.close();
    }
  });
});
