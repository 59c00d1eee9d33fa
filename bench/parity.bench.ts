// Benchmark of the end-to-end parity run: wall time of N concurrent weather trajectories per version over the floor
// set by the backend latency (9 sequential calls x 50 ms), CPU per chat call and peak RSS, in two layouts side by side.
import { PerformanceObserver } from "node:perf_hooks";
import { buildWeatherInputSamples, checkTrainingPayloadParity, runAgenticRetryTrajectories, startParityEnvironment, type SessionParityRun } from "../src";
import { startChildEnvironment } from "./child-environment";
import { peakRssTracker } from "./peak-rss";

const LATENCY_MS = 50;
const CALLS = 9;
const FLOOR_MS = CALLS * LATENCY_MS;
const WARMUP_ROUNDS = 3;
const WARMUP_TRAJECTORIES = 32;
const SIZES = [
  { n: 16, repeats: 5, goal: 1.15 },
  { n: 256, repeats: 2, goal: 1.3 },
] as const;
const VERSIONS = ["v1", "v2"] as const;
type Version = (typeof VERSIONS)[number];

/**
 * The two layouts. "two processes" is how the package runs under Jest: the global setup starts the backend and both
 * servers in Jest's parent process, the fixture runs in a test worker. "one process" puts everything in this one.
 * The two-process layout is measured first, while this process has never loaded the servers (or their tokenizer),
 * so its heap and RSS are the fixture's alone, as in a Jest worker.
 */
const LAYOUTS = ["two processes", "one process"] as const;
type Layout = (typeof LAYOUTS)[number];

/** What a layout offers the measuring loop. */
interface RunningLayout {
  urls: Record<Version, string>;
  resetBackend(): Promise<void>;
  /** CPU microseconds and peak RSS (since the previous call) of the server process, or null when it is this one. */
  serverStats(): Promise<{ cpuUs: number; peakRssBytes: number } | null>;
  stop(): Promise<void>;
}

async function startLayout(layout: Layout): Promise<RunningLayout> {
  if (layout === "two processes") {
    const child = await startChildEnvironment(LATENCY_MS);
    return {
      urls: { v1: child.v1Url, v2: child.v2Url },
      resetBackend: () => child.resetBackend(),
      serverStats: async () => {
        const stats = await child.stats();
        return { cpuUs: stats.cpuUserUs + stats.cpuSystemUs, peakRssBytes: stats.peakRssBytes };
      },
      stop: () => child.stop(),
    };
  }
  const environment = await startParityEnvironment({ env: {}, latencyMs: LATENCY_MS, logger: { warn: () => {} } });
  return {
    urls: { v1: environment.v1Url, v2: environment.v2Url },
    resetBackend: async () => environment.backend?.reset(),
    serverStats: async () => null,
    stop: () => environment.stop(),
  };
}

function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Milliseconds spent in garbage collection in this process since the observer started (main-thread pauses). */
let gcMs = 0;
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
});
gcObserver.observe({ entryTypes: ["gc"] });
const ownPeak = peakRssTracker();

interface Timed {
  ms: number;
  /** CPU of this process (the fixture, plus servers and backend in the one-process layout). */
  cpuMs: number;
  /** CPU of the server process (0 in the one-process layout). */
  serverCpuMs: number;
  gcMs: number;
  peakRssMb: number;
  serverPeakRssMb: number;
  runs: SessionParityRun[];
}

async function timedRun(layout: RunningLayout, version: Version, n: number): Promise<Timed> {
  // The backend's request log keeps every body it saw (input_ids included); earlier runs' bodies would only add heap
  // for the collector to trace, so each timed run starts from an empty log. No forced gc() here: it shrinks the young
  // generation and ages compiled code, which made the following run spend ~1.5 ms more CPU per chat call.
  await layout.resetBackend();
  const inputSamples = buildWeatherInputSamples(n);
  const serverBefore = await layout.serverStats();
  ownPeak.takePeak();
  const gcStart = gcMs;
  const cpuStart = process.cpuUsage();
  const start = nowMs();
  const runs = await runAgenticRetryTrajectories({ version, inputSamples, sessionServerUrls: [layout.urls[version]] });
  const ms = nowMs() - start;
  const cpu = process.cpuUsage(cpuStart);
  const peakRssMb = ownPeak.takePeak() / 2 ** 20;
  const serverAfter = await layout.serverStats();
  await new Promise((resolve) => setImmediate(resolve)); // let the gc observer deliver this run's entries
  const failed = runs.filter((run) => run.failure !== undefined || run.samples.length !== 1);
  if (failed.length > 0) throw new Error(`${version} x${n}: ${failed.length} runs failed, first: ${failed[0].failure ?? `${failed[0].samples.length} samples`}`);
  return {
    ms,
    cpuMs: (cpu.user + cpu.system) / 1000,
    serverCpuMs: serverBefore && serverAfter ? (serverAfter.cpuUs - serverBefore.cpuUs) / 1000 : 0,
    gcMs: gcMs - gcStart,
    peakRssMb,
    serverPeakRssMb: serverAfter ? serverAfter.peakRssBytes / 2 ** 20 : 0,
    runs,
  };
}

/** Medians (maxima for RSS) of one layout, size and version. */
interface Figures {
  all: number[];
  ms: number;
  cpuMs: number;
  serverCpuMs: number;
  gcMs: number;
  peakRssMb: number;
  serverPeakRssMb: number;
}

function summarize(timed: Timed[]): Figures {
  return {
    all: timed.map((t) => t.ms),
    ms: median(timed.map((t) => t.ms)),
    cpuMs: median(timed.map((t) => t.cpuMs)),
    serverCpuMs: median(timed.map((t) => t.serverCpuMs)),
    gcMs: median(timed.map((t) => t.gcMs)),
    peakRssMb: Math.max(...timed.map((t) => t.peakRssMb)),
    serverPeakRssMb: Math.max(...timed.map((t) => t.serverPeakRssMb)),
  };
}

async function measureLayout(name: Layout): Promise<Map<string, Figures>> {
  const layout = await startLayout(name);
  const results = new Map<string, Figures>();
  try {
    // Warm-up, excluded from every figure: tokenizer caches, JIT (the first rounds run ~15% slower), pools.
    for (let round = 0; round < WARMUP_ROUNDS; round++) {
      for (const version of VERSIONS) await timedRun(layout, version, WARMUP_TRAJECTORIES);
    }
    for (const { n, repeats } of SIZES) {
      const timed: Record<Version, Timed[]> = { v1: [], v2: [] };
      for (let r = 0; r < repeats; r++) {
        for (const version of VERSIONS) timed[version].push(await timedRun(layout, version, n));
      }
      for (const version of VERSIONS) results.set(`${n} ${version}`, summarize(timed[version]));
      const v1Runs = timed.v1[timed.v1.length - 1].runs;
      const v2Runs = timed.v2[timed.v2.length - 1].runs;
      const broken = v1Runs.filter((run, i) => !checkTrainingPayloadParity(run, v2Runs[i]).pass).length;
      if (broken > 0) throw new Error(`${name}, ${n} concurrent: ${broken}/${v1Runs.length} pairs not in training-payload parity`);
      console.log(`${name}, ${String(n).padStart(3)} concurrent: ${v1Runs.length}/${v1Runs.length} pairs in training-payload parity`);
    }
  } finally {
    await layout.stop();
  }
  return results;
}

function report(layout: Layout, n: number, version: Version, goal: number, figures: Figures, repeats: number): void {
  const ratio = figures.ms / FLOOR_MS;
  const calls = n * CALLS;
  const label = `${String(n).padStart(3)} ${version} ${layout.padEnd(13)}`;
  console.log(
    `${label} wall ${figures.ms.toFixed(0).padStart(5)} ms / floor = ${ratio.toFixed(3)}  goal <= ${goal} ${ratio <= goal ? "ok    " : "MISSED"}` +
      `  (median of ${repeats}; all ${figures.all.map((t) => t.toFixed(0)).join(", ")})`,
  );
  const pad = " ".repeat(label.length);
  if (layout === "one process") {
    console.log(
      `${pad} CPU ${(figures.cpuMs / calls).toFixed(2)} ms per chat call (one process: fixture + servers + backend), ` +
        `CPU/wall ${(figures.cpuMs / figures.ms).toFixed(2)}, GC ${figures.gcMs.toFixed(0)} ms; peak RSS ${figures.peakRssMb.toFixed(0)} MB`,
    );
  } else {
    const total = figures.cpuMs + figures.serverCpuMs;
    console.log(
      `${pad} CPU ${(total / calls).toFixed(2)} ms per chat call = fixture ${(figures.cpuMs / calls).toFixed(2)} + servers/backend ` +
        `${(figures.serverCpuMs / calls).toFixed(2)}, fixture GC ${figures.gcMs.toFixed(0)} ms; peak RSS fixture ` +
        `${figures.peakRssMb.toFixed(0)} MB + servers/backend ${figures.serverPeakRssMb.toFixed(0)} MB = ` +
        `${(figures.peakRssMb + figures.serverPeakRssMb).toFixed(0)} MB`,
    );
  }
}

async function main(): Promise<void> {
  console.log(
    `backend latency ${LATENCY_MS} ms, ${CALLS} calls per trajectory: floor ${FLOOR_MS} ms. Layouts: "two processes" = ` +
      `backend and servers in a child process, fixture here (as under Jest); "one process" = everything here. ` +
      `Peak RSS per timed run (${ownPeak.exact ? "kernel high-water mark" : "5 ms samples"}), the maximum over repeats.`,
  );
  const results = new Map<Layout, Map<string, Figures>>();
  try {
    for (const layout of LAYOUTS) results.set(layout, await measureLayout(layout));
  } finally {
    gcObserver.disconnect();
  }
  for (const { n, repeats, goal } of SIZES) {
    for (const version of VERSIONS) {
      for (const layout of LAYOUTS) report(layout, n, version, goal, results.get(layout)?.get(`${n} ${version}`) as Figures, repeats);
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
