// Benchmark of the parity fuzzer: schedules per second through both embedded servers at zero backend latency, with
// CPU per schedule, and the time to find and shrink a planted bug. npm run bench fuzz; not part of npm test.
import os from "node:os";
import { callCount, fuzzAgenticParity, openFuzzEnvironment } from "../src/fuzz";
import { PLANTED_BUGS } from "../__tests__/fuzz/planted-bugs";

async function main(): Promise<void> {
  const runs = Number(process.env.FUZZ_BENCH_RUNS ?? 200);
  const environment = await openFuzzEnvironment();
  try {
    await fuzzAgenticParity({ seed: 1, runs: 16, concurrency: 8, environment }); // warm-up: tokenizer caches, sockets
    const cpu = process.cpuUsage();
    const report = await fuzzAgenticParity({ seed: 20260803, runs, maxSteps: 12, concurrency: 8, environment });
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000;
    console.log(
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")} on ${os.cpus().length} cores`,
    );
    console.log(`reference servers: ${report.runs} schedules (max 12 calls, 8 per round), ${report.failures} failing`);
    console.log(`  wall ${(report.timings.runMs / 1000).toFixed(1)} s = ${report.timings.schedulesPerSecond.toFixed(1)} schedules/s (goal >= 20/s)`);
    console.log(`  CPU ${(cpuMs / report.runs).toFixed(1)} ms per schedule = at most ${(1000 / (cpuMs / report.runs)).toFixed(1)} schedules per CPU-second`);
  } finally {
    await environment.close();
  }
  for (const bug of PLANTED_BUGS) {
    const started = performance.now();
    const report = await fuzzAgenticParity({ seed: 7, runs: 64, maxSteps: 6, concurrency: 8, ...bug.options() });
    const total = performance.now() - started;
    const ce = report.counterexample;
    console.log(
      `planted: ${bug.name}: ${ce === null ? "NOT FOUND" : `found after ${report.runs} schedules, shrunk ${callCount(ce.original)} -> ${callCount(ce.shrunk)} calls in ${ce.shrinkSteps} shrinks, shrink ${(ce.shrinkMs / 1000).toFixed(1)} s`} (whole run with start-up ${(total / 1000).toFixed(1)} s)`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
