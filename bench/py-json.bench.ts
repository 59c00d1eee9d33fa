// Python-JSON benchmark: the session server's JSON work per chat call on bodies recorded from real trajectories,
// each fast path timed against the reference path it replaces (same inputs, alternating rounds, medians, same bytes).
import { channel } from "node:diagnostics_channel";
import { request } from "undici";
import { buildWeatherInputSamples, runAgenticRetryTrajectories, startParityEnvironment } from "../src";
import { findJsonDepthExcess } from "../src/wire/json-depth";
import { dumpsPy, dumpsPyWriter, parsePyJson, parsePyJsonBytes, PY_DEFAULT_JSON, PY_SAMPLES_META_JSON } from "../src/wire/py-json";

const TRAJECTORIES = 8;
const ROUNDS = 31;
const CALLS_PER_ROUND = 5;

interface Recorded {
  /** Bodies the servers sent upstream (`json.dumps(request_body)`), as text. */
  upstream: string[];
  /** Chat request bodies the agents sent to the servers. */
  clientBodies: Buffer[];
  /** The mock backend's replies to the upstream bodies. */
  backendReplies: Buffer[];
}

function bodyBytes(body: unknown): Buffer | undefined {
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof Uint8Array) return Buffer.from(body);
  return undefined;
}

async function record(): Promise<Recorded> {
  const env = await startParityEnvironment({ env: {}, latencyMs: 0, logger: { warn: () => undefined } });
  const backend = env.backendUrl;
  if (backend === null) throw new Error("the parity environment started no mock backend");
  const backendOrigin = new URL(backend).origin;
  const upstream: string[] = [];
  const clientBodies: Buffer[] = [];
  const created = channel("undici:request:create");
  const onCreate = (message: unknown): void => {
    const { request: sent } = message as { request: { origin: string; path: string; method: string; body: unknown } };
    if (sent.method !== "POST" || !sent.path.endsWith("/v1/chat/completions")) return;
    const bytes = bodyBytes(sent.body);
    if (bytes === undefined) return;
    if (new URL(sent.origin).origin === backendOrigin) upstream.push(bytes.toString("utf8"));
    else clientBodies.push(bytes);
  };
  created.subscribe(onCreate);
  try {
    for (const version of ["v1", "v2"] as const) {
      await runAgenticRetryTrajectories({ version, inputSamples: buildWeatherInputSamples(TRAJECTORIES / 2), sessionServerUrls: [env[`${version}Url`]] });
    }
  } finally {
    created.unsubscribe(onCreate);
  }
  const backendReplies: Buffer[] = [];
  for (const body of upstream) {
    const reply = await request(`${backend.replace(/\/$/, "")}/v1/chat/completions`, { method: "POST", body, headers: { "content-type": "application/json" } });
    backendReplies.push(Buffer.from(await reply.body.arrayBuffer()));
  }
  await env.stop();
  return { upstream, clientBodies, backendReplies };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Microseconds per item of each path, timed in alternating rounds after a warm-up. */
function compare<T>(items: T[], paths: Record<"reference" | "fast", (item: T) => unknown>): { reference: number; fast: number } {
  const names = ["reference", "fast"] as const;
  for (let i = 0; i < 20; i++) for (const name of names) for (const item of items) paths[name](item);
  const times: Record<(typeof names)[number], number[]> = { reference: [], fast: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const start = process.hrtime.bigint();
      for (let k = 0; k < CALLS_PER_ROUND; k++) for (const item of items) paths[name](item);
      times[name].push(Number(process.hrtime.bigint() - start) / 1e3 / CALLS_PER_ROUND / items.length);
    }
  }
  return { reference: median(times.reference), fast: median(times.fast) };
}

/** The two calls the servers made before parsePyJsonBytes, spelled for comparing results. */
function readTwice(bytes: Buffer): string {
  const excess = findJsonDepthExcess(bytes);
  return excess !== null ? `excess ${excess.offset}` : dumpsPy(parsePyJson(bytes.toString("utf8")), PY_SAMPLES_META_JSON);
}

function readOnce(bytes: Buffer): string {
  const read = parsePyJsonBytes(bytes);
  return read.excess !== null ? `excess ${read.excess.offset}` : dumpsPy(read.value, PY_SAMPLES_META_JSON);
}

function report(label: string, count: number, size: number, result: { reference: number; fast: number }): void {
  const ratio = result.fast / result.reference;
  process.stdout.write(
    `${label.padEnd(38)} ${String(count).padStart(4)} × ${String(Math.round(size)).padStart(5)} B: reference ${result.reference.toFixed(2).padStart(7)} µs, fast ${result.fast.toFixed(2).padStart(7)} µs (${ratio.toFixed(2)} x)\n`,
  );
}

async function main(): Promise<void> {
  const recorded = await record();
  const averageBytes = (texts: Array<string | Buffer>): number => texts.reduce((sum, t) => sum + t.length, 0) / Math.max(1, texts.length);
  process.stdout.write(`${TRAJECTORIES} trajectories recorded; per item, median of ${ROUNDS} alternating rounds\n`);

  const upstreamValues = recorded.upstream.map((text) => parsePyJson(text));
  upstreamValues.forEach((value, i) => {
    const fast = dumpsPy(value, PY_DEFAULT_JSON);
    if (fast !== dumpsPyWriter(value, PY_DEFAULT_JSON) || fast !== recorded.upstream[i]) throw new Error(`upstream body ${i}: the writers differ`);
  });
  const writing = compare(upstreamValues, { reference: (v) => dumpsPyWriter(v, PY_DEFAULT_JSON), fast: (v) => dumpsPy(v, PY_DEFAULT_JSON) });
  report("json.dumps(body) upstream", upstreamValues.length, averageBytes(recorded.upstream), writing);

  for (const [label, bodies] of [
    ["chat request body: depth + json.loads", recorded.clientBodies],
    ["backend reply: depth + json.loads", recorded.backendReplies],
  ] as const) {
    bodies.forEach((bytes, i) => {
      if (readOnce(bytes) !== readTwice(bytes)) throw new Error(`${label} ${i}: the readers differ`);
    });
    const reading = compare(bodies, {
      reference: (bytes) => (findJsonDepthExcess(bytes) === null ? parsePyJson(bytes.toString("utf8")) : undefined),
      fast: (bytes) => parsePyJsonBytes(bytes).value,
    });
    report(label, bodies.length, averageBytes(bodies), reading);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
