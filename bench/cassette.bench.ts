// Cassette replay next to the scripted mock, side by side in one run: the weather trajectory's own upstream bodies
// (recorded through a cassette) sent by 64 clients to each in alternating rounds, CPU per chat call and the ratio;
// then how long a 100,000-line cassette of lines as long as the weather run's takes to open (read and index), one lookup.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Pool } from "undici";
import { startMockBackend, weatherScript } from "../src/backend";
import { startCassetteBackend } from "../src/backend/cassette-backend";
import { encodeHeader, encodeInteraction } from "../src/backend/cassette-codec";
import { keyRequest } from "../src/backend/cassette-key";
import { CassetteStore } from "../src/backend/cassette-store";
import { cassetteVocabulary } from "../src/backend/cassette-vocabulary";
import { buildWeatherInputSamples } from "../src/fixture/input-samples";
import { runAgenticRetryTrajectories } from "../src/fixture/run-trajectories";

const CLIENTS = 64;
const ROUND_MS = 3_000;
const WARMUP_MS = 1_000;
const ROUNDS = 3;
const LOAD_LINES = 100_000;

interface Round {
  calls: number;
  cpuMs: number;
  wallMs: number;
}

/** 64 clients cycling through `bodies` for `durationMs`; CPU of this process (clients and the server under test) per call. */
async function drive(url: string, bodies: readonly string[], durationMs: number): Promise<Round> {
  const pool = new Pool(url, { connections: CLIENTS, pipelining: 1 });
  let calls = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = t0 + durationMs;
  const worker = async (offset: number): Promise<void> => {
    for (let i = offset; performance.now() < deadline; i++) {
      const body = bodies[i % bodies.length];
      const reply = await pool.request({ path: "/v1/chat/completions", method: "POST", body, headers: { "content-type": "application/json" } });
      const text = await reply.body.text();
      if (reply.statusCode !== 200) throw new Error(`bad reply ${reply.statusCode}: ${text.slice(0, 300)}`);
      calls++;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => worker(i)));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await pool.close();
  return { calls, cpuMs: (cpu.user + cpu.system) / 1000, wallMs };
}

function perCall(rounds: readonly Round[]): { cpuUs: number; wallUs: number } {
  const calls = rounds.reduce((sum, r) => sum + r.calls, 0);
  return { cpuUs: (1000 * rounds.reduce((sum, r) => sum + r.cpuMs, 0)) / calls, wallUs: (1000 * rounds.reduce((sum, r) => sum + r.wallMs, 0)) / calls };
}

async function replayCost(dir: string): Promise<string[]> {
  const mock = await startMockBackend({ process: weatherScript, latencyMs: 0 });
  const file = path.join(dir, "weather.jsonl");
  // the weather trajectory through both versions, recorded: its bodies are what session servers send upstream
  for (const version of ["v1", "v2"] as const) {
    await runAgenticRetryTrajectories({ version, inputSamples: buildWeatherInputSamples(1), cassette: { file, upstream: mock.url } });
  }
  const lines = fs.readFileSync(file, "utf8").trim().split("\n").slice(1);
  const bodies = lines.map((line) => JSON.stringify((JSON.parse(line) as { request: unknown }).request));
  const cassette = await startCassetteBackend({ cassette: file });
  console.log(
    `clients=${CLIENTS} rounds=${ROUNDS}x${ROUND_MS} ms alternating; ${bodies.length} distinct bodies (the weather run's upstream calls, v1 and v2), cycled`,
  );
  await drive(mock.url, bodies, WARMUP_MS);
  await drive(cassette.url, bodies, WARMUP_MS);
  const mockRounds: Round[] = [];
  const cassetteRounds: Round[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    mockRounds.push(await drive(mock.url, bodies, ROUND_MS));
    cassetteRounds.push(await drive(cassette.url, bodies, ROUND_MS));
  }
  const m = perCall(mockRounds);
  const c = perCall(cassetteRounds);
  console.log(`  scripted mock  : ${m.cpuUs.toFixed(1).padStart(7)} us CPU per chat call, ${m.wallUs.toFixed(1).padStart(7)} us wall per call`);
  console.log(`  cassette replay: ${c.cpuUs.toFixed(1).padStart(7)} us CPU per chat call, ${c.wallUs.toFixed(1).padStart(7)} us wall per call`);
  console.log(`  ratio cassette/mock: CPU per call ${(c.cpuUs / m.cpuUs).toFixed(3)}x (goal <= 1.2x), wall per call ${(c.wallUs / m.wallUs).toFixed(3)}x`);
  await cassette.close();
  await mock.close();
  return lines;
}

/**
 * A 100,000-line cassette made of the weather run's own recorded lines (`templates`), each copy with one more input id
 * (a key of its own), so its lines are as long as a real recording's.
 */
async function loadCost(dir: string, templates: readonly string[]): Promise<void> {
  const vocabulary = await cassetteVocabulary();
  const file = path.join(dir, "large.jsonl");
  const fd = fs.openSync(file, "w");
  fs.writeSync(fd, `${encodeHeader(vocabulary)}\n`);
  const parsed = templates.map((line) => JSON.parse(line) as { path: string; request: Record<string, unknown>; body: string; content_type: string });
  let probe = "";
  const chunk: string[] = [];
  for (let n = 0; n < LOAD_LINES; n++) {
    const template = parsed[n % parsed.length];
    const ids = [...(template.request.input_ids as number[]), n % 150_000];
    const request = keyRequest(template.path, { ...template.request, input_ids: ids, seed: n });
    chunk.push(encodeInteraction({ request, reply: { status: 200, contentType: template.content_type, body: template.body } }));
    if (n === LOAD_LINES / 2) probe = request.key;
    if (chunk.length === 1000) {
      fs.writeSync(fd, `${chunk.join("\n")}\n`);
      chunk.length = 0;
    }
  }
  if (chunk.length > 0) fs.writeSync(fd, `${chunk.join("\n")}\n`);
  fs.closeSync(fd);
  const bytes = fs.statSync(file).size;
  global.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const store = CassetteStore.open({ file, vocabulary });
  const openMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const t1 = performance.now();
  const reply = store.lookup(probe);
  const lookupMs = performance.now() - t1;
  global.gc?.();
  const heapMb = (process.memoryUsage().heapUsed - heap0) / 2 ** 20;
  if (reply === undefined || store.size !== LOAD_LINES) throw new Error(`load check failed: ${store.size} interactions`);
  console.log(
    `\n${LOAD_LINES} lines (${(bytes / 2 ** 20).toFixed(0)} MiB): opened and indexed in ${(openMs / 1000).toFixed(2)} s wall (goal < 2 s), ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s CPU, ` +
      `one lookup ${lookupMs.toFixed(2)} ms, ${heapMb.toFixed(0)} MiB of heap held`,
  );
  store.close();
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cassette-bench-"));
  try {
    const lines = await replayCost(dir);
    await loadCost(dir, lines);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
