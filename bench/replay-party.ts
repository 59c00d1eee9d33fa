// Benchmark child: one `session-parity run` or `session-parity replay` executed in this process (embedded mock and
// servers, zero latency), printing its CPU time (all threads), wall time, chat requests and peak RSS as one JSON line.
import { executeReplay } from "../src/cli/replay-command";
import { executeRun } from "../src/cli/run-command";
import { RUN_DEFAULTS } from "../src/cli/run-options";
import { peakRssTracker } from "./peak-rss";

/** What a party reports. */
export interface PartyFigures {
  cpuMs: number;
  wallMs: number;
  requests: number;
  peakRssBytes: number;
  exitCode: number;
}

const sink = { write: (): boolean => true };

async function main(): Promise<void> {
  const [mode, ...rest] = process.argv.slice(2);
  const peak = peakRssTracker();
  const cpu = process.cpuUsage();
  const started = performance.now();
  let requests: number;
  let exitCode: number;
  if (mode === "run") {
    const { exitCode: code, report } = await executeRun(
      { ...RUN_DEFAULTS, batch: Number(rest[0]), latencyMs: 0, chatTemplateKwargs: undefined },
      { out: sink, err: { write: () => true, isTTY: false } },
    );
    requests = report.requests;
    exitCode = code;
  } else if (mode === "replay") {
    const { exitCode: code, report } = await executeReplay(rest, { concurrency: 16 }, { out: sink, err: { write: () => true, isTTY: false } });
    requests = report.requests;
    exitCode = code;
  } else throw new Error(`unknown party ${mode}`);
  const used = process.cpuUsage(cpu);
  const figures: PartyFigures = {
    cpuMs: (used.user + used.system) / 1000,
    wallMs: performance.now() - started,
    requests,
    peakRssBytes: peak.takePeak(),
    exitCode,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
