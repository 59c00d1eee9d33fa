// Benchmark of `session-parity run`: wall time of the batch ÷ the latency floor (9 chat calls × backend latency), the
// process's CPU per chat call (every thread) and its peak RSS, for 16 and 256 trajectories per version (v1 and v2 side by side).
import { runParity } from "../src/cli/run-parity";
import type { ParityReport } from "../src/cli/report";

const LATENCY_MS = 50;

async function measure(batch: number, latencyMs: number): Promise<{ report: ParityReport; rssBeforeMb: number; peakRssMb: number; cpuMs: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const rssBeforeMb = process.memoryUsage().rss / 2 ** 20;
  const cpuStart = process.cpuUsage(); // the whole process: the servers' worker thread included
  const report = await runParity({ batch, cycles: 1, latencyMs }, { env: {} });
  const cpu = process.cpuUsage(cpuStart);
  if (!report.summary.pass) throw new Error(`the ${batch}-trajectory run did not pass: ${report.summary.failed} failures`);
  return { report, rssBeforeMb, peakRssMb: process.resourceUsage().maxRSS / 1024, cpuMs: (cpu.user + cpu.system) / 1000 };
}

function row(label: string, { report, rssBeforeMb, peakRssMb, cpuMs }: Awaited<ReturnType<typeof measure>>): string {
  const { trajectoriesMs, totalMs, floorMs } = report.timings;
  const ratio = floorMs ? (trajectoriesMs / floorMs).toFixed(2) : "n/a";
  const totalRatio = floorMs ? (totalMs / floorMs).toFixed(2) : "n/a";
  return [
    label.padEnd(38),
    `${(trajectoriesMs / 1000).toFixed(2)} s`.padStart(9),
    ratio.padStart(7),
    `${(totalMs / 1000).toFixed(2)} s`.padStart(9),
    totalRatio.padStart(7),
    `${report.requests}`.padStart(9),
    `${(cpuMs / report.requests).toFixed(2)} ms`.padStart(9), // requests: the chat calls of both versions
    `${rssBeforeMb.toFixed(0)} MB`.padStart(9),
    `${peakRssMb.toFixed(0)} MB`.padStart(9),
  ].join("  ");
}

async function main(): Promise<void> {
  console.log(`session-parity run, embedded mock backend, floor = 9 chat calls x latency; v1 and v2 batches run concurrently`);
  console.log(
    [
      "run".padEnd(38),
      "batch".padStart(9),
      "÷floor".padStart(7),
      "total".padStart(9),
      "÷floor".padStart(7),
      "requests".padStart(9),
      "cpu/call".padStart(9),
      "rss pre".padStart(9),
      "peak rss".padStart(9),
    ].join("  "),
  );
  // Warm-up: loads the tokenizer and JITs the hot paths so the first measured run is not charged for them.
  await measure(4, 0);
  console.log(row(`--batch 16 --latency-ms ${LATENCY_MS}`, await measure(16, LATENCY_MS)));
  console.log(row(`--batch 256 --latency-ms ${LATENCY_MS}`, await measure(256, LATENCY_MS)));
  console.log(row(`--batch 256 --latency-ms 0 (CPU only)`, await measure(256, 0)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
