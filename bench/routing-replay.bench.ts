// Benchmark of routing replay: the 16-trajectory parity run with routed experts at a realistic size (48 layers x
// top-8) against the same run without them: added wall time as a ratio, and the added peak RSS over the tensor bytes.
import {
  buildWeatherInputSamples,
  checkTrainingPayloadParity,
  runAgenticRetryTrajectories,
  startParityEnvironment,
  type RoutingReplaySettings,
  type SessionParityRun,
} from "../src";
import { peakRssTracker } from "./peak-rss";

const LATENCY_MS = 50;
const N = 16;
const REPEATS = 3;
const ROUTING = { numLayers: 48, topk: 8, numExperts: 128 } as const;
const MODES: readonly { name: string; routing: RoutingReplaySettings | null }[] = [
  { name: "no replay", routing: null },
  { name: "full R3", routing: { ...ROUTING } },
  { name: "additional R3", routing: { ...ROUTING, additionR3: true } },
];

const ownPeak = peakRssTracker();

function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

interface Timed {
  ms: number;
  peakRssBytes: number;
  tensorBytes: number;
  /** Base64 routing text the records of the runs' snapshots hold (the protocol keeps every reply in its record). */
  recordPayloadBytes: number;
  tokens: number;
}

/** One timed parity run: v1 then v2, N concurrent trajectories each; every pair must be in payload parity. */
async function timedRun(urls: { v1: string; v2: string }, reset: () => void, withTensors: boolean): Promise<Timed> {
  reset();
  global.gc?.();
  ownPeak.takePeak();
  const start = nowMs();
  const v1: SessionParityRun[] = await runAgenticRetryTrajectories({ version: "v1", inputSamples: buildWeatherInputSamples(N), sessionServerUrls: [urls.v1] });
  const v2: SessionParityRun[] = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(N), sessionServerUrls: [urls.v2] });
  const ms = nowMs() - start;
  const peakRssBytes = ownPeak.takePeak();
  const broken = v1.flatMap((run, i) => {
    const verdict = checkTrainingPayloadParity(run, v2[i]);
    return verdict.pass ? [] : [`pair ${i}: ${verdict.failures.map((f) => `[${f.part}] ${f.message}`).join("; ")}`];
  });
  if (broken.length > 0) throw new Error(`${broken.length}/${N} pairs not in training-payload parity; ${broken[0].slice(0, 2000)}`);
  let tensorBytes = 0;
  let tokens = 0;
  let recordPayloadBytes = 0;
  for (const run of [...v1, ...v2]) {
    for (const record of run.preCollect.records) {
      const meta = (record.response.choices as { meta_info: { routed_experts?: string } }[])[0].meta_info;
      recordPayloadBytes += meta.routed_experts?.length ?? 0;
    }
    const sample = run.samples[0];
    tokens += sample.tokens.length;
    const tensor = sample.rollout_routed_experts;
    if (withTensors && tensor === null) throw new Error("routing replay on, but a sample carries no routed experts");
    tensorBytes += tensor?.data.byteLength ?? 0;
  }
  return { ms, peakRssBytes, tensorBytes, recordPayloadBytes, tokens: tokens / (2 * N) };
}

async function measure(routing: RoutingReplaySettings | null): Promise<Timed[]> {
  const environment = await startParityEnvironment({ env: {}, latencyMs: LATENCY_MS, routingReplay: routing, logger: { warn: () => {} } });
  const reset = (): void => environment.backend?.reset();
  try {
    const urls = { v1: environment.v1Url, v2: environment.v2Url };
    await timedRun(urls, reset, routing !== null); // warm-up
    const timed: Timed[] = [];
    for (let r = 0; r < REPEATS; r++) timed.push(await timedRun(urls, reset, routing !== null));
    return timed;
  } finally {
    await environment.stop();
  }
}

async function main(): Promise<void> {
  console.log(
    `${N} weather trajectories per version (v1 then v2), backend latency ${LATENCY_MS} ms, everything in this process; routing ` +
      `${ROUTING.numLayers} layers x top-${ROUTING.topk} (${ROUTING.numExperts} experts). Wall: median of ${REPEATS}; peak RSS: ` +
      `maximum over the repeats (${ownPeak.exact ? "kernel high-water mark" : "5 ms samples"}).`,
  );
  const results = new Map<string, Timed[]>();
  for (const mode of MODES) results.set(mode.name, await measure(mode.routing));
  const base = results.get("no replay") as Timed[];
  const baseMs = median(base.map((t) => t.ms));
  const basePeak = Math.max(...base.map((t) => t.peakRssBytes));
  console.log(
    `no replay       wall ${baseMs.toFixed(0).padStart(6)} ms  peak RSS ${(basePeak / 2 ** 20).toFixed(0)} MB  (${base[0].tokens.toFixed(0)} tokens per trajectory)`,
  );
  for (const mode of MODES.slice(1)) {
    const timed = results.get(mode.name) as Timed[];
    const ms = median(timed.map((t) => t.ms));
    const peak = Math.max(...timed.map((t) => t.peakRssBytes));
    const tensorBytes = timed[0].tensorBytes;
    const memoryRatio = (peak - basePeak) / tensorBytes;
    console.log(
      `${mode.name.padEnd(15)} wall ${ms.toFixed(0).padStart(6)} ms = ${(ms / baseMs).toFixed(3)} x no replay  ` +
        `peak RSS ${(peak / 2 ** 20).toFixed(0)} MB, added ${((peak - basePeak) / 2 ** 20).toFixed(0)} MB over ${(tensorBytes / 2 ** 20).toFixed(1)} MB ` +
        `of routed-experts tensors carried = ${memoryRatio.toFixed(2)} x  goal <= 2 ${memoryRatio <= 2 ? "ok" : "MISSED"}  ` +
        `(all ${timed.map((t) => t.ms.toFixed(0)).join(", ")} ms)`,
    );
    console.log(
      `${" ".repeat(15)} the records the servers keep (and GET returns to the fixture) hold ${(timed[0].recordPayloadBytes / 2 ** 20).toFixed(1)} MB of base64 ` +
        `routing text per copy: added peak RSS / (tensors + one copy of that text) = ${((peak - basePeak) / (tensorBytes + timed[0].recordPayloadBytes)).toFixed(2)} x`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
