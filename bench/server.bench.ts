// Session server v1 overhead, measured side by side with the same mock backend in one run: added latency per
// chat turn vs calling the backend directly (p50/p99 at 1 and 64 sessions), turns/s at 64, heap per session.
import { Pool } from "undici";
import { echoScript, startMockBackend, type MockBackend } from "../src/backend";
import { startSessionServer, type RunningSessionServer } from "../src/server";
import { loadTokenizer } from "../src/tokenizer/load";

const TURNS = 9;
const HEAP_SESSIONS = 1024;

interface Round {
  latenciesMs: number[];
  seconds: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** The parts of the session server's replies this bench reads (a created session, a chat completion). */
interface ServerReply {
  session_id: string;
  choices: { message: Record<string, unknown> }[];
}

async function json(pool: Pool, path: string, body?: unknown): Promise<{ status: number; value: ServerReply }> {
  const reply = await pool.request({
    path,
    method: "POST",
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
  const text = await reply.body.text();
  return { status: reply.statusCode, value: (text ? JSON.parse(text) : null) as ServerReply };
}

/** One 9-turn session through the session server; each turn appends the reply and a new user message. */
async function serverSession(pool: Pool, tag: string, latencies: number[] | null): Promise<string> {
  const { value } = await json(pool, "/sessions");
  const id = value.session_id;
  const messages: Record<string, unknown>[] = [
    { role: "system", content: "You are a terse assistant." },
    { role: "user", content: `${tag} question 0` },
  ];
  for (let turn = 0; turn < TURNS; turn += 1) {
    const t0 = performance.now();
    const reply = await json(pool, `/sessions/${id}/v1/chat/completions`, { messages, temperature: 0 });
    if (reply.status !== 200) throw new Error(`turn ${turn}: ${reply.status} ${JSON.stringify(reply.value)}`);
    latencies?.push(performance.now() - t0);
    messages.push(reply.value.choices[0].message, { role: "user", content: `${tag} question ${turn + 1}` });
  }
  return id;
}

async function viaServer(pool: Pool, sessions: number, perWorker: number, round: number): Promise<Round> {
  const latenciesMs: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async (_, w) => {
      for (let i = 0; i < perWorker; i += 1) {
        const id = await serverSession(pool, `r${round}w${w}i${i}`, latenciesMs);
        await pool.request({ path: `/sessions/${id}`, method: "DELETE" }).then((r) => r.body.dump());
      }
    }),
  );
  return { latenciesMs, seconds: (performance.now() - started) / 1000 };
}

/** Replays the exact upstream bodies the server sent, straight to the backend, with the same concurrency. */
async function direct(pool: Pool, bodies: string[][]): Promise<Round> {
  const latenciesMs: number[] = [];
  const started = performance.now();
  await Promise.all(
    bodies.map(async (list) => {
      for (const body of list) {
        const t0 = performance.now();
        const reply = await pool.request({ path: "/v1/chat/completions", method: "POST", body, headers: { "content-type": "application/json" } });
        const text = await reply.body.text();
        if (reply.statusCode !== 200 || text.length === 0) throw new Error(`direct: ${reply.statusCode}`);
        latenciesMs.push(performance.now() - t0);
      }
    }),
  );
  return { latenciesMs, seconds: (performance.now() - started) / 1000 };
}

function splitAmong(bodies: Record<string, unknown>[], workers: number): string[][] {
  const lists: string[][] = Array.from({ length: workers }, () => []);
  bodies.forEach((b, i) => lists[i % workers].push(JSON.stringify(b)));
  return lists;
}

async function latencyAt(backend: MockBackend, server: RunningSessionServer, sessions: number, perWorker: number): Promise<void> {
  const serverPool = new Pool(server.url, { connections: sessions });
  const backendPool = new Pool(backend.url, { connections: sessions });
  await viaServer(serverPool, sessions, 1, -1); // warm-up
  const through: Round[] = [];
  const straight: Round[] = [];
  for (let round = 0; round < 3; round += 1) {
    backend.reset();
    through.push(await viaServer(serverPool, sessions, perWorker, round));
    const bodies = splitAmong(backend.requestLog, sessions);
    backend.reset();
    straight.push(await direct(backendPool, bodies));
  }
  await serverPool.close();
  await backendPool.close();
  const s = through.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
  const d = straight.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
  const sRate = s.length / through.reduce((n, r) => n + r.seconds, 0);
  const dRate = d.length / straight.reduce((n, r) => n + r.seconds, 0);
  const line = (p: number): string => {
    const a = percentile(s, p);
    const b = percentile(d, p);
    return `p${p}: server ${a.toFixed(2)} ms vs direct ${b.toFixed(2)} ms -> added ${(a - b).toFixed(2)} ms (x${(a / b).toFixed(2)})`;
  };
  console.log(`\n${sessions} concurrent session(s), ${s.length} turns each way`);
  console.log(`  ${line(50)}`);
  console.log(`  ${line(99)}`);
  console.log(`  turns/s: server ${sRate.toFixed(0)} vs direct ${dRate.toFixed(0)} (x${(sRate / dRate).toFixed(2)})`);
}

function heapUsed(): number {
  (globalThis as { gc?: () => void }).gc?.();
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

async function heapPerSession(backend: MockBackend): Promise<void> {
  const server = await startSessionServer({ version: "v1", backendUrl: backend.url, logger: { warn: () => undefined } });
  const pool = new Pool(server.url, { connections: 64 });
  await serverSession(pool, "warm", null);
  backend.reset();
  const before = heapUsed();
  const ids: string[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 64 }, async (_, w) => {
      for (let i = w; i < HEAP_SESSIONS; i += 64) ids.push(await serverSession(pool, `heap${i}`, null));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  backend.reset();
  const after = heapUsed();
  let jsonBytes = 0;
  for (const id of ids.slice(0, 64)) {
    const reply = await pool.request({ path: `/sessions/${id}`, method: "GET" });
    jsonBytes += (await reply.body.text()).length;
  }
  const perSession = (after - before) / HEAP_SESSIONS;
  const perSessionJson = jsonBytes / 64;
  console.log(`\nheap after ${HEAP_SESSIONS} sessions x ${TURNS} turns (${((HEAP_SESSIONS * TURNS) / seconds).toFixed(0)} turns/s at 64 clients)`);
  console.log(
    `  heap per session: ${(perSession / 1024).toFixed(1)} KiB vs its GET /sessions JSON ${(perSessionJson / 1024).toFixed(1)} KiB (x${(perSession / perSessionJson).toFixed(2)})`,
  );
  await pool.close();
  await server.close();
}

async function main(): Promise<void> {
  if (typeof (globalThis as { gc?: unknown }).gc !== "function") console.log("(run with --expose-gc for stable heap figures)");
  const tokenizer = await loadTokenizer();
  const backend = await startMockBackend({ process: echoScript, tokenizer });
  const server = await startSessionServer({ version: "v1", backendUrl: backend.url, logger: { warn: () => undefined } });
  console.log("session server v1 vs direct backend calls (mock backend, zero latency, same process, same upstream bodies)");
  await latencyAt(backend, server, 1, 40);
  await latencyAt(backend, server, 64, 2);
  await server.close();
  await heapPerSession(backend);
  await backend.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
