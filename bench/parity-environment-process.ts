// Benchmark child: the backend and v1/v2 servers outside the fixture's process, as under Jest's global setup. Prints
// its URLs as one JSON line, answers `stats`/`reset` lines on stdin, and stops on SIGTERM, stdin close or parent loss.
import * as fs from "node:fs";
import { startParityEnvironment, type ParityEnvironment } from "../src";
import { peakRssTracker } from "./peak-rss";

/** Longest a stop may take before the process exits anyway (it must never be left behind). */
const STOP_GRACE_MS = 5_000;

/**
 * Reply to the `stats` command on stdin: this process's CPU time so far and its peak RSS since the previous `stats`.
 * The parent measures both per timed run.
 */
export interface ChildStats {
  /** User CPU time of this process so far, in microseconds (all threads). */
  cpuUserUs: number;
  /** System CPU time of this process so far, in microseconds. */
  cpuSystemUs: number;
  /** Peak resident set size since the previous `stats` command, in bytes. */
  peakRssBytes: number;
}

async function main(): Promise<void> {
  const latencyMs = Number(process.argv[2] ?? "50");
  const parentPid = process.ppid;
  let environment: ParityEnvironment | null = null;
  let stopping = false;
  const stop = (code: number): void => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(code), STOP_GRACE_MS).unref();
    void (environment?.stop() ?? Promise.resolve()).finally(() => process.exit(code));
  };
  // Whatever way the parent goes (exit, crash, SIGKILL), this process follows it.
  process.once("SIGTERM", () => stop(0));
  process.once("SIGINT", () => stop(0));
  process.once("SIGHUP", () => stop(0));
  process.stdin.once("end", () => stop(0));
  process.stdin.once("close", () => stop(0));
  process.stdin.once("error", () => stop(1));
  setInterval(() => {
    if (process.ppid !== parentPid) stop(1);
  }, 1_000).unref();

  const peak = peakRssTracker();
  let buffered = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf("\n")) !== -1) {
      const command = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (command === "stats") {
        const cpu = process.cpuUsage();
        const stats: ChildStats = { cpuUserUs: cpu.user, cpuSystemUs: cpu.system, peakRssBytes: peak.takePeak() };
        process.stdout.write(`${JSON.stringify(stats)}\n`);
      } else if (command === "reset") {
        environment?.backend?.reset();
        process.stdout.write(`${JSON.stringify({ ok: environment?.backend !== undefined })}\n`);
      }
    }
  });

  try {
    environment = await startParityEnvironment({ env: {}, latencyMs, logger: { warn: () => {} } });
  } catch (error) {
    fs.writeSync(2, `parity environment process: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
  if (stopping) {
    await environment.stop();
    return;
  }
  process.stdout.write(`${JSON.stringify({ backendUrl: environment.backendUrl, v1Url: environment.v1Url, v2Url: environment.v2Url })}\n`);
}

void main();
