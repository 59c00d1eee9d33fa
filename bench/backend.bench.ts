// Throughput of the loopback mock backend at 64 concurrent clients, zero latency, next to a bare node:http
// server that returns a fixed JSON body of the same size. Prints requests/s, p50/p99 and the mock/bare ratio.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Pool } from "undici";
import { startMockBackend, weatherScript, type MockBackend } from "../src/backend";
import { loadTokenizer } from "../src/tokenizer/load";
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../src/agent/texts";

const CLIENTS = 64;
const ROUND_MS = 4_000;
const WARMUP_MS = 1_000;
const ROUNDS = 2;

interface RoundResult {
  requests: number;
  seconds: number;
  latenciesMs: number[];
}

async function drive(url: string, body: string, durationMs: number): Promise<RoundResult> {
  const pool = new Pool(url, { connections: CLIENTS, pipelining: 1 });
  const latenciesMs: number[] = [];
  const started = performance.now();
  const deadline = started + durationMs;
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const reply = await pool.request({ path: "/v1/chat/completions", method: "POST", body, headers: { "content-type": "application/json" } });
      const text = await reply.body.text();
      if (reply.statusCode !== 200 || text.length === 0) throw new Error(`bad reply ${reply.statusCode}`);
      latenciesMs.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { requests: latenciesMs.length, seconds, latenciesMs };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summarize(results: RoundResult[]): { rps: number; p50: number; p99: number } {
  const requests = results.reduce((sum, r) => sum + r.requests, 0);
  const seconds = results.reduce((sum, r) => sum + r.seconds, 0);
  const all = results.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
  return { rps: requests / seconds, p50: percentile(all, 50), p99: percentile(all, 99) };
}

async function bareServer(fixedBody: Buffer): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json", "content-length": fixedBody.length });
      res.end(fixedBody);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function main(): Promise<void> {
  const tokenizer = await loadTokenizer();
  const mock: MockBackend = await startMockBackend({ tokenizer, process: weatherScript, latencyMs: 0 });
  // The session server sends messages plus its own input_ids; the mock then decodes instead of rendering.
  const messages = [...buildInitialMessages(), { role: "tool", content: MOCK_TOOL_RESULTS[0] }];
  const inputIds = tokenizer.encode(tokenizer.renderChatTemplate(messages, { tools: WEATHER_TOOLS, addGenerationPrompt: true }));
  const bodies = {
    "chat + input_ids": JSON.stringify({ messages, tools: WEATHER_TOOLS, input_ids: inputIds, logprobs: true, return_meta_info: true }),
    "chat + template render": JSON.stringify({ messages, tools: WEATHER_TOOLS, logprobs: true, return_meta_info: true }),
  };

  console.log(`clients=${CLIENTS} latency=0ms rounds=${ROUNDS}x${ROUND_MS}ms (alternating), client and servers in one process`);
  for (const [name, body] of Object.entries(bodies)) {
    const sample = await (await fetch(`${mock.url}/v1/chat/completions`, { method: "POST", body })).arrayBuffer();
    const bare = await bareServer(Buffer.from(sample));
    await drive(mock.url, body, WARMUP_MS);
    await drive(bare.url, body, WARMUP_MS);
    const mockRounds: RoundResult[] = [];
    const bareRounds: RoundResult[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      mockRounds.push(await drive(mock.url, body, ROUND_MS));
      bareRounds.push(await drive(bare.url, body, ROUND_MS));
    }
    await new Promise<void>((resolve) => bare.server.close(() => resolve()));
    const m = summarize(mockRounds);
    const b = summarize(bareRounds);
    const fmt = (s: { rps: number; p50: number; p99: number }): string =>
      `${s.rps.toFixed(0).padStart(6)} req/s  p50 ${s.p50.toFixed(2).padStart(6)} ms  p99 ${s.p99.toFixed(2).padStart(6)} ms`;
    console.log(`\n[${name}] reply body ${sample.byteLength} bytes`);
    console.log(`  mock backend : ${fmt(m)}`);
    console.log(`  bare node:http: ${fmt(b)}`);
    console.log(`  ratio mock/bare: throughput ${(m.rps / b.rps).toFixed(3)}x, p50 ${(m.p50 / b.p50).toFixed(2)}x, p99 ${(m.p99 / b.p99).toFixed(2)}x`);
  }
  await mock.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
