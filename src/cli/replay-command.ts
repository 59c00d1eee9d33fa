// The `session-parity replay FILE...` subcommand: recorded conversations replayed through v1 and v2, optionally
// with retries injected. Exit status 0 = every conversation passed, 1 = a FAIL or ERROR row, 2 = usage, server or
// configuration problem.
import { existsSync, statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { Command, InvalidArgumentError } from "commander";
import { withCliConventions } from "./command-kit";
import { CliExit, EXIT_FAIL, EXIT_PASS, EXIT_USAGE } from "./exit-codes";
import { waitForGiven } from "./fuzz-command";
import { addModelOptions, type ModelChoiceFlags } from "./model-options";
import { renderReplayReport, summarize, type ReplayReport } from "./replay-report";
import { parseCheckpointDir, parseJsonPath, parseUrl, parseWaitSeconds } from "./run-options";
import type { ReplayObservation } from "../replay/drive-conversation";
import type { ReplayResult } from "../replay/run-replay";

/** Parsed flags of `session-parity replay`. */
export interface ReplayCommandOptions extends ModelChoiceFlags {
  retries?: number;
  retryRate?: number;
  conversation?: number;
  concurrency: number;
  shard?: { index: number; count: number };
  backend?: string;
  v1?: string;
  v2?: string;
  json?: string;
  html?: string;
  wait?: number;
  hfCheckpoint?: string;
}

/** Where the command writes. */
export interface ReplayCommandIo {
  out: { write(chunk: string): unknown };
  err: { write(chunk: string): unknown; isTTY?: boolean };
}

const DEFAULT_IO: ReplayCommandIo = { out: process.stdout, err: process.stderr };

/** Failing conversations whose runs the HTML page draws (trees and tokens); the others are listed with their cause. */
const HTML_DRAWN_FAILURES = 20;

function integerFlag(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return n;
  };
}

function parseRate(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError("must be a number from 0 to 1");
  return n;
}

/** `--shard i/n`: 1 <= i <= n, as `jest --shard`. */
function parseShard(value: string): { index: number; count: number } {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  const index = match === null ? NaN : Number(match[1]);
  const count = match === null ? NaN : Number(match[2]);
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(count) || count < 1 || index < 1 || index > count) {
    throw new InvalidArgumentError("must be i/n with 1 <= i <= n, e.g. 2/4");
  }
  return { index, count };
}

/** The flags a replay command must repeat to reach the same servers and model. */
function serverFlags(options: ReplayCommandOptions): string[] {
  const flags: Array<[string, string | undefined]> = [
    ["--backend", options.backend],
    ["--v1", options.v1],
    ["--v2", options.v2],
    ["--tito-model", options.titoModel],
    ["--hf-checkpoint", options.hfCheckpoint],
    ["--chat-template-path", options.chatTemplatePath],
    ["--chat-template-kwargs", options.chatTemplateKwargs === undefined ? undefined : JSON.stringify(options.chatTemplateKwargs)],
    ["--chat-template", options.chatTemplate],
  ];
  return flags.flatMap(([flag, value]) => (value === undefined ? [] : [flag, value]));
}

function checkFiles(files: readonly string[]): void {
  for (const file of files) {
    if (!existsSync(file) || !statSync(file).isFile()) throw new CliExit(EXIT_USAGE, `no such corpus file: ${file}`);
  }
}

/**
 * Replays `files` with parsed flags, prints the report and writes `--json` / `--html` when asked.
 * @returns the exit status (0 all pass, 1 a FAIL or ERROR row, 2 a server problem or no conversation at all).
 * @throws CliExit with status 2 on a usage problem, a server that cannot be reached or a corpus file that cannot be read.
 */
export async function executeReplay(
  files: string[],
  options: ReplayCommandOptions,
  io: ReplayCommandIo = DEFAULT_IO,
): Promise<{ exitCode: number; report: ReplayReport }> {
  checkFiles(files);
  if (options.retryRate !== undefined && options.retries === undefined) throw new CliExit(EXIT_USAGE, "--retry-rate needs --retries SEED");
  if ((options.v1 !== undefined || options.v2 !== undefined) && options.backend === undefined) {
    throw new CliExit(EXIT_USAGE, "--v1/--v2 need --backend: the session-parity mock both servers call (it plays the recorded replies)");
  }
  await waitForGiven(options, io);
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const { readCorpus } = await import("../replay/corpus-files");
  const { replayCorpus } = await import("../replay/run-replay");
  const { DEFAULT_RETRY_RATE } = await import("../replay/retry-injection");
  const retries = options.retries === undefined ? undefined : { seed: options.retries, rate: options.retryRate ?? DEFAULT_RETRY_RATE };
  const drawn = new Map<number, { v1: ReplayObservation; v2: ReplayObservation }>();
  let done = 0;
  const onResult = (result: ReplayResult, observed: { v1: ReplayObservation; v2: ReplayObservation } | null): void => {
    done += 1;
    if (io.err.isTTY === true) io.err.write(`\rreplay: ${done} conversations`);
    if (options.html !== undefined && observed !== null && result.verdict.status === "FAIL" && drawn.size < HTML_DRAWN_FAILURES)
      drawn.set(result.index, observed);
  };
  const outcome = await replayCorpus(readCorpus(files), {
    backendUrl: options.backend,
    v1Url: options.v1,
    v2Url: options.v2,
    hfCheckpoint: options.hfCheckpoint,
    titoModel: options.titoModel,
    chatTemplatePath: options.chatTemplatePath,
    chatTemplateKwargs: options.chatTemplateKwargs,
    chatTemplate: options.chatTemplate,
    retries,
    concurrency: options.concurrency,
    shard: options.shard,
    only: options.conversation === undefined ? undefined : [options.conversation],
    onResult,
  }).catch((error: unknown) => {
    throw new CliExit(EXIT_USAGE, (error as Error)?.message ?? String(error));
  });
  if (io.err.isTTY === true) io.err.write("\n");
  const totalMs = performance.now() - started;
  const summary = summarize(outcome.results);
  // two differently configured sides differ by construction: said first, and not a parity verdict (exit 2)
  const { checkConfiguration } = await import("./configuration-check");
  const configuration = checkConfiguration(outcome.health.v1, outcome.health.v2, { v1: options.v1 === undefined, v2: options.v2 === undefined });
  summary.configurationProblem = summary.failed > 0 ? configuration.problem : null;
  const report: ReplayReport = {
    reportVersion: 1,
    startedAt,
    files,
    options: {
      retries: retries === undefined ? null : { seed: retries.seed, rate: retries.rate },
      concurrency: options.concurrency,
      shard: options.shard === undefined ? null : `${options.shard.index}/${options.shard.count}`,
      conversation: options.conversation ?? null,
      serverFlags: serverFlags(options),
    },
    servers: { backend: options.backend ?? "embedded mock (plays the recorded replies)", v1: outcome.servers.v1, v2: outcome.servers.v2 },
    summary,
    requests: outcome.requests,
    timings: { totalMs, conversationsPerSecond: outcome.results.length / (totalMs / 1000) },
    rows: outcome.results,
  };
  const notes: string[] = [];
  let unwritable: CliExit | null = null;
  if (options.html !== undefined) {
    const { renderReplayHtml } = await import("./replay-html");
    try {
      await writeFile(options.html, await renderReplayHtml(report, drawn));
      notes.push(`HTML report written to ${options.html}`);
    } catch (error) {
      unwritable = new CliExit(EXIT_USAGE, `cannot write the --html report to ${options.html}: ${(error as Error).message}`);
    }
  }
  if (options.json !== undefined && unwritable === null) {
    try {
      await writeFile(options.json, `${JSON.stringify(report, null, 2)}\n`);
      notes.push(`Full report written to ${options.json}`);
    } catch (error) {
      unwritable = new CliExit(EXIT_USAGE, `cannot write the --json report to ${options.json}: ${(error as Error).message}`);
    }
  }
  io.out.write(renderReplayReport(report, notes));
  if (unwritable !== null) throw unwritable;
  const exitCode =
    summary.serverProblems > 0 || summary.conversations === 0 || summary.configurationProblem !== null ? EXIT_USAGE : summary.pass ? EXIT_PASS : EXIT_FAIL;
  return { exitCode, report };
}

/** Builds the `replay` subcommand. */
export function replayCommand(io: ReplayCommandIo = DEFAULT_IO): Command {
  const command = new Command("replay")
    .description(
      "replay recorded conversations (miles' --save-debug-trajectory-data rows or OpenAI chat records, .jsonl or .jsonl.gz) through v1 and v2 and check that every v2 training payload equals v1's bit for bit",
    )
    .argument("<file...>", "corpus files, one conversation per line")
    .option("--retries <seed>", "inject retries at recorded replies, drawn from this seed and each conversation's index", integerFlag(-0x80000000, 0x7fffffff))
    .option("--retry-rate <r>", "with --retries: chance that a recorded reply gets a retry first (default 0.5)", parseRate)
    .option("--conversation <n>", "replay only the conversation with this index (the failure text prints it)", integerFlag(0, Number.MAX_SAFE_INTEGER))
    .option("--concurrency <n>", "conversations in flight at once, each on both servers", integerFlag(1, 256), 8)
    .option("--shard <i/n>", "replay only shard i of n (conversation index mod n = i - 1), as jest --shard", parseShard)
    .option("--backend <url>", "a `session-parity mock` both session servers call (default: embedded)", parseUrl)
    .option("--v1 <url>", "v1 session server calling --backend (default: embedded)", parseUrl)
    .option("--v2 <url>", "v2 session server calling --backend (default: embedded)", parseUrl)
    .option("--json <file>", "also write the full report (every row, differences, summary) as JSON", parseJsonPath)
    .option("--html <file>", "also write one self-contained HTML page for the corpus, failing conversations first", parseJsonPath)
    .option("--wait <seconds>", "how long to wait for each given server to answer GET /health (default 30; 0 = probe once)", parseWaitSeconds)
    .option("--hf-checkpoint <dir>", "local checkpoint directory of the embedded mock and servers", parseCheckpointDir)
    .action(async (files: string[], options: ReplayCommandOptions) => {
      const { exitCode } = await executeReplay(files, options, io);
      process.exitCode = exitCode;
    });
  addModelOptions(command, "{}");
  return withCliConventions(command, [
    "session-parity replay examples/replay/conversations.jsonl examples/replay/trajectory-dump.jsonl",
    "session-parity replay examples/replay/conversations.jsonl --retries 7 --retry-rate 0.3 --json replay.json --html replay.html",
    "session-parity replay examples/replay/conversations.jsonl --shard 2/4 --concurrency 16",
    "session-parity mock --port 30000 &",
    "session-parity serve v1 --backend http://127.0.0.1:30000 --port 8001 &",
    "session-parity serve v2 --backend http://127.0.0.1:30000 --port 8002 &",
    "session-parity replay examples/replay/conversations.jsonl --backend http://127.0.0.1:30000 --v1 http://127.0.0.1:8001 --v2 http://127.0.0.1:8002",
  ]);
}
