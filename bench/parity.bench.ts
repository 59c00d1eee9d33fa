// Benchmark of the end-to-end parity run: wall time of N concurrent weather trajectories per version over the floor
// set by the backend latency (9 sequential calls x 50 ms), plus peak RSS. `npm run bench parity`; not part of npm test.
import { PerformanceObserver } from "node:perf_hooks";
import { buildWeatherInputSamples, checkTrainingPayloadParity, runAgenticRetryTrajectories, startParityEnvironment, type SessionParityRun } from "../src";

const LATENCY_MS = 50;
const CALLS = 9;
const FLOOR_MS = CALLS * LATENCY_MS;
const REPEATS_16 = 5;
const REPEATS_256 = 2;
const WARMUP_ROUNDS = 3;
const WARMUP_TRAJECTORIES = 32;

function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Milliseconds spent in garbage collection since the observer started (pauses on the main thread). */
let gcMs = 0;
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
});
gcObserver.observe({ entryTypes: ["gc"] });

interface Timed {
  ms: number;
  cpuMs: number;
  gcMs: number;
  runs: SessionParityRun[];
}

async function timedRun(version: "v1" | "v2", n: number, url: string): Promise<Timed> {
  const inputSamples = buildWeatherInputSamples(n);
  const gcStart = gcMs;
  const cpuStart = process.cpuUsage();
  const start = nowMs();
  const runs = await runAgenticRetryTrajectories({ version, inputSamples, sessionServerUrls: [url] });
  const ms = nowMs() - start;
  const cpu = process.cpuUsage(cpuStart);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  await new Promise((resolve) => setImmediate(resolve)); // let the gc observer deliver this run's entries
  const failed = runs.filter((run) => run.failure !== undefined || run.samples.length !== 1);
  if (failed.length > 0) throw new Error(`${version} x${n}: ${failed.length} runs failed, first: ${failed[0].failure ?? `${failed[0].samples.length} samples`}`);
  return { ms, cpuMs, gcMs: gcMs - gcStart, runs };
}

async function main(): Promise<void> {
  const environment = await startParityEnvironment({ env: {}, latencyMs: LATENCY_MS, logger: { warn: () => {} } });
  const urls = { v1: environment.v1Url, v2: environment.v2Url };
  try {
    console.log(`backend latency ${LATENCY_MS} ms, ${CALLS} calls per trajectory: floor ${FLOOR_MS} ms; backend, servers and driver in one process`);
    // Warm-up, excluded from every figure: tokenizer caches, JIT (the first rounds run ~15% slower), pools.
    for (let round = 0; round < WARMUP_ROUNDS; round++) {
      for (const version of ["v1", "v2"] as const) {
        environment.backend?.reset();
        await timedRun(version, WARMUP_TRAJECTORIES, urls[version]);
      }
    }

    for (const [n, repeats, goal] of [
      [16, REPEATS_16, 1.15],
      [256, REPEATS_256, 1.3],
    ] as const) {
      const last: Partial<Record<"v1" | "v2", SessionParityRun[]>> = {};
      const times: Record<"v1" | "v2", number[]> = { v1: [], v2: [] };
      const cpuTimes: Record<"v1" | "v2", number[]> = { v1: [], v2: [] };
      const gcTimes: Record<"v1" | "v2", number[]> = { v1: [], v2: [] };
      for (let r = 0; r < repeats; r++) {
        for (const version of ["v1", "v2"] as const) {
          // The backend's request log keeps every body it saw (input_ids included); earlier runs' bodies would
          // only add heap for the collector to trace, so each timed run starts from an empty log. No forced gc()
          // here: it shrinks the young generation and ages compiled code, which made the following run spend
          // ~1.5 ms more CPU per chat call than a steady-state run does.
          environment.backend?.reset();
          const { ms, cpuMs, gcMs: runGcMs, runs } = await timedRun(version, n, urls[version]);
          times[version].push(ms);
          cpuTimes[version].push(cpuMs);
          gcTimes[version].push(runGcMs);
          last[version] = runs;
        }
      }
      for (const version of ["v1", "v2"] as const) {
        const ms = median(times[version]);
        const ratio = ms / FLOOR_MS;
        console.log(
          `${String(n).padStart(3)} concurrent ${version}: wall ${ms.toFixed(0).padStart(5)} ms (median of ${repeats}; all ${times[version].map((t) => t.toFixed(0)).join(", ")}) / floor = ${ratio.toFixed(3)}  goal <= ${goal}  ${ratio <= goal ? "ok" : "MISSED"}`,
        );
        const cpuMs = median(cpuTimes[version]);
        console.log(
          `    process CPU ${cpuMs.toFixed(0)} ms = ${(cpuMs / n / CALLS).toFixed(2)} ms per chat call (driver + server + backend), CPU/wall ${(cpuMs / ms).toFixed(2)}, GC ${median(gcTimes[version]).toFixed(0)} ms`,
        );
      }
      const pairs = (last.v1 as SessionParityRun[]).map((run, i) => checkTrainingPayloadParity(run, (last.v2 as SessionParityRun[])[i]));
      const broken = pairs.filter((verdict) => !verdict.pass).length;
      console.log(`${String(n).padStart(3)} concurrent: ${pairs.length - broken}/${pairs.length} pairs in training-payload parity`);
      if (n === 256) {
        const peakMb = process.resourceUsage().maxRSS / 1024;
        console.log(`peak RSS after the 256-trajectory runs (whole process: backend + servers + driver): ${peakMb.toFixed(0)} MB`);
      }
    }
  } finally {
    gcObserver.disconnect();
    await environment.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
