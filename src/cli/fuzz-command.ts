// The `session-parity fuzz` subcommand: random agent schedules through v1 and v2, the first counterexample shrunk.
// Exit status 0 = no counterexample, 1 = a counterexample (written to a file, replayable with --replay), 2 = usage/server problem.
import { addModelOptions, SERVER_KWARGS_HELP, type ModelChoiceFlags } from "./model-options";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { CliExit, EXIT_FAIL, EXIT_PASS, EXIT_USAGE } from "./exit-codes";
import { DEFAULT_WAIT_SECONDS, parseCheckpointDir, parseJsonPath, parseUrl, parseWaitSeconds } from "./run-options";
import { HealthReplyError, waitForHealth, type HealthTarget } from "../fixture/health-wait";
import { redactUrlCredentials } from "../server/redaction";
import type { AgentSchedule, FuzzReport, ScheduleVerdict } from "../fuzz";

/** Parsed flags of `session-parity fuzz`. */
export interface FuzzCommandOptions extends ModelChoiceFlags {
  runs: number;
  seed?: number;
  maxSteps: number;
  concurrency: number;
  backend?: string;
  v1?: string;
  v2?: string;
  json?: string;
  /** Write the self-contained HTML report (the counterexample's runs drawn like a parity pair) to this file. */
  html?: string;
  replay?: string;
  /** Seconds to keep probing each given server that does not answer yet (default 30). */
  wait?: number;
  /** Checkpoint directory of the embedded mock and servers. */
  hfCheckpoint?: string;
}

/** Where the command writes. */
export interface FuzzCommandIo {
  out: { write(chunk: string): unknown };
  err: { write(chunk: string): unknown; isTTY?: boolean };
  /** Directory the counterexample file goes to when no --json is given (default the working directory). */
  cwd?: string;
}

const DEFAULT_IO: FuzzCommandIo = { out: process.stdout, err: process.stderr };

function integerFlag(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return n;
  };
}

/** What a counterexample file holds (also accepted by --replay). */
interface CounterexampleFile {
  seed: number;
  path: string;
  salt: number;
  schedule: AgentSchedule;
  original: AgentSchedule;
  outcome: string;
  failures: ScheduleVerdict["failures"];
}

function readReplay(file: string): { schedule: AgentSchedule; salt: number } {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new CliExit(EXIT_USAGE, `cannot read the --replay file ${file}: ${(error as Error).message}`);
  }
  const record = (value ?? {}) as Record<string, unknown>;
  const nested = (record.counterexample ?? {}) as Record<string, unknown>;
  const schedule = (record.schedule ?? nested.schedule ?? nested.shrunk ?? (Array.isArray(record.steps) ? record : undefined)) as AgentSchedule | undefined;
  if (schedule === undefined || typeof schedule !== "object" || !Array.isArray(schedule.steps) || typeof schedule.first !== "object") {
    throw new CliExit(EXIT_USAGE, `the --replay file ${file} holds no schedule (expected a counterexample file written by \`session-parity fuzz\`)`);
  }
  const salt = typeof record.salt === "number" ? record.salt : typeof nested.salt === "number" ? nested.salt : 0;
  return { schedule, salt };
}

/**
 * Runs the fuzz command with parsed flags.
 * @returns the exit status (0 pass, 1 counterexample).
 * @throws CliExit with status 2 on a usage or server problem.
 */
export async function executeFuzz(options: FuzzCommandOptions, io: FuzzCommandIo = DEFAULT_IO): Promise<number> {
  await waitForGiven(options, io);
  const fuzz = await import("../fuzz");
  const environmentOptions = {
    backendUrl: options.backend,
    v1Url: options.v1,
    v2Url: options.v2,
    hfCheckpoint: options.hfCheckpoint,
    titoModel: options.titoModel,
    chatTemplatePath: options.chatTemplatePath,
    chatTemplateKwargs: options.chatTemplateKwargs,
    chatTemplate: options.chatTemplate,
  };
  const usage = (error: unknown): never => {
    if (error instanceof CliExit) throw error;
    throw new CliExit(EXIT_USAGE, (error as Error)?.message ?? String(error));
  };
  if (options.replay !== undefined) {
    const { schedule, salt } = readReplay(options.replay);
    const verdict = await fuzz.replayAgentSchedule(schedule, { ...environmentOptions, salt }).catch(usage);
    io.out.write(`${verdict.pass ? "PASS" : "FAIL"}: replayed ${options.replay} (${verdict.outcome})\n${fuzz.formatScheduleVerdict(verdict)}\n`);
    await writeHtml(options.html, null, verdict, io, usage);
    return verdict.pass ? EXIT_PASS : EXIT_FAIL;
  }
  const progress = (done: number, total: number, failures: number): void => {
    if (io.err.isTTY === true) io.err.write(`\rfuzz: ${done}/${total} schedules, ${failures} failing`);
  };
  const report: FuzzReport = await fuzz
    .fuzzAgenticParity({
      ...environmentOptions,
      runs: options.runs,
      seed: options.seed,
      maxSteps: options.maxSteps,
      concurrency: options.concurrency,
      onProgress: progress,
    })
    .catch(usage);
  if (io.err.isTTY === true) io.err.write("\n");
  io.out.write(`${fuzz.formatFuzzReport(report)}\n`);
  await writeHtml(options.html, report, null, io, usage);
  const ce = report.counterexample;
  if (ce !== null) {
    const file = options.json ?? path.join(io.cwd ?? process.cwd(), `fuzz-counterexample-${report.seed}.json`);
    const body: CounterexampleFile = {
      seed: ce.seed,
      path: ce.path,
      salt: ce.salt,
      schedule: ce.shrunk,
      original: ce.original,
      outcome: ce.verdict.outcome,
      failures: ce.verdict.failures,
    };
    await writeFile(file, `${JSON.stringify(options.json === undefined ? body : { ...summary(report), counterexample: body }, null, 2)}\n`).catch(
      (error: Error) => usage(new Error(`cannot write ${file}: ${error.message}`)),
    );
    io.out.write(`Counterexample written to ${file}; replay it with: session-parity fuzz --replay ${file}\n`);
    return EXIT_FAIL;
  }
  if (options.json !== undefined) {
    await writeFile(options.json, `${JSON.stringify(summary(report), null, 2)}\n`).catch((error: Error) =>
      usage(new Error(`cannot write ${options.json}: ${error.message}`)),
    );
    io.out.write(`Report written to ${options.json}\n`);
  }
  return EXIT_PASS;
}

/** Waits for `--backend`, `--v1` and `--v2` to answer `GET /health` (servers started with `&` just before). */
export async function waitForGiven(options: Pick<FuzzCommandOptions, "backend" | "v1" | "v2" | "wait">, io: Pick<FuzzCommandIo, "err">): Promise<void> {
  const wait = options.wait ?? DEFAULT_WAIT_SECONDS;
  const given: [string | undefined, string, string, HealthTarget][] = [
    [options.backend, "--backend", "mock backend", "backend"],
    [options.v1, "--v1", "v1 session server", "session server"],
    [options.v2, "--v2", "v2 session server", "session server"],
  ];
  for (const [url, flag, what, target] of given) {
    if (url === undefined) continue;
    const shown = redactUrlCredentials(url);
    try {
      await waitForHealth(url, {
        target,
        deadlineMs: wait * 1000,
        onWaiting: (reason) =>
          io.err.write(`session-parity: waiting up to ${wait} s (--wait) for the ${what} at ${shown} (${flag}) to answer GET /health (${reason})\n`),
      });
    } catch (error) {
      throw new CliExit(
        EXIT_USAGE,
        `${error instanceof HealthReplyError ? "cannot use" : "cannot reach"} the ${what} at ${shown} (${flag}): ${(error as Error).message}`,
      );
    }
  }
}

/** Writes `--html` when given: the run's summary and the counterexample (or the replayed schedule) drawn. */
async function writeHtml(
  file: string | undefined,
  report: FuzzReport | null,
  replayed: ScheduleVerdict | null,
  io: FuzzCommandIo,
  usage: (error: unknown) => never,
): Promise<void> {
  if (file === undefined) return;
  const { renderFuzzHtml } = await import("./fuzz-html");
  await writeFile(file, await renderFuzzHtml(report, replayed)).catch((error: Error) =>
    usage(new Error(`cannot write the --html report to ${file}: ${error.message}`)),
  );
  io.out.write(`HTML report written to ${file}\n`);
}

function summary(report: FuzzReport): Omit<FuzzReport, "counterexample"> {
  const { counterexample: _counterexample, ...rest } = report;
  return rest;
}

/** Builds the `fuzz` subcommand. */
export function fuzzCommand(io: FuzzCommandIo = DEFAULT_IO): Command {
  const command = new Command("fuzz")
    .description("run random agent schedules through v1 and v2, check both against the protocol model and each other, and shrink the first counterexample")
    .option("--runs <n>", "schedules to run", integerFlag(1, 1_000_000), 200)
    .option("--seed <n>", "fast-check seed (default random, printed)", integerFlag(-0x80000000, 0x7fffffff))
    .option("--max-steps <n>", "most chat calls per schedule", integerFlag(1, 64), 12)
    .option("--concurrency <n>", "sessions per round on each server", integerFlag(1, 256), 8)
    .option("--backend <url>", "mock backend serving the plan control routes (`session-parity mock` serves them); default embedded", parseUrl)
    .option("--v1 <url>", "v1 session server calling --backend (default embedded)", parseUrl)
    .option("--v2 <url>", "v2 session server calling --backend (default embedded)", parseUrl)
    .option("--json <file>", "write the report (and the counterexample) as JSON", parseJsonPath)
    .option("--replay <file>", "replay the counterexample in a file written by a failing run")
    .option("--wait <seconds>", "how long to wait for each given server to answer GET /health before giving up (default 30; 0 = probe once)", parseWaitSeconds)
    .option("--html <file>", "also write a self-contained HTML report: the counterexample's v1 and v2 runs, trees and tokens", parseJsonPath)
    .option("--hf-checkpoint <dir>", "local checkpoint directory of the embedded mock and servers", parseCheckpointDir)
    .showHelpAfterError("(run `session-parity fuzz --help` for the flags)")
    .addHelpText(
      "after",
      "\nExample:\n  $ session-parity fuzz --runs 8 --seed 7 --max-steps 6\n\n" +
        "A counterexample is written to fuzz-counterexample-<seed>.json; `session-parity fuzz --replay <that file>` replays it.\n\n" +
        "Against your own servers: start `session-parity mock` (it serves the plan routes), point both servers at it, then\n" +
        "  session-parity fuzz --backend <mock URL> --v1 <your v1> --v2 <your v2>\n\n" +
        "Exit status: 0 no counterexample, 1 counterexample found (written to a file), 2 bad flag or server problem.",
    )
    .exitOverride((error: CommanderError) => {
      throw new CliExit(error.exitCode === 0 ? EXIT_PASS : EXIT_USAGE, error.message, true);
    })
    .action(async (options: FuzzCommandOptions) => {
      process.exitCode = await executeFuzz(options, io);
    });
  return addModelOptions(command, SERVER_KWARGS_HELP);
}
