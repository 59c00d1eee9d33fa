// The `session-parity run` subcommand: the parity proof as a command, read like a test report.
// Exit status 0 = every pair passed, 1 = some pair failed, 2 = a bad flag or a server that could not start or be reached.
import { parseCassetteFile } from "./cassette-option";
import { writeFile } from "node:fs/promises";
import { Command, Option } from "commander";
import { MESSAGE_MATCHERS } from "../server/message-matchers";
import { TOOL_CALL_FAILURE_MODES } from "../agent/weather-agent";
import { withCliConventions } from "./command-kit";
import { addModelOptions, SERVER_KWARGS_HELP } from "./model-options";
import { CliExit, EXIT_FAIL, EXIT_PASS, EXIT_USAGE } from "./exit-codes";
import type { ProgressStream } from "./progress-bar";
import type { ParityReport } from "./report";
import {
  parseBatch,
  parseCheckpointDir,
  parseCycles,
  parseJsonPath,
  parseLatencyMs,
  parseRoutingDim,
  parseUrl,
  parseUrlList,
  parseWaitSeconds,
  RUN_DEFAULTS,
  type RunCommandOptions,
} from "./run-options";
import { renderReport } from "./summary-table";
import type { SessionParityRun } from "../fixture/types";

/** Where the command writes: the report to `out`, the progress bar and errors to `err`. */
export interface RunCommandIo {
  /** Receives the report (stdout by default). */
  out: { write(chunk: string): unknown };
  /** Receives the progress bar (stderr by default; drawn only on a TTY). */
  err: ProgressStream;
  /** Variables read for servers no flag names (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Where the report's total starts on the `performance.now()` clock (default: when the run starts). */
  startedAtMs?: number;
}

/** The command's own streams; its total counts from the process's start (0 on `performance.now()`'s clock). */
const DEFAULT_IO: RunCommandIo = { out: process.stdout, err: process.stderr, startedAtMs: 0 };

/**
 * Runs the parity proof with parsed options, prints the report and writes `--json` / `--html` when asked.
 * @returns the exit status (0 all pass, 1 any payload difference, 2 when a run failed on a server problem or the two
 *   sides are configured differently).
 * @throws CliExit with status 2 on a start-up error or an unwritable `--json` file.
 */
export async function executeRun(options: RunCommandOptions, io: RunCommandIo = DEFAULT_IO): Promise<{ exitCode: number; report: ParityReport }> {
  let pairs: [SessionParityRun | Error, SessionParityRun | Error][] = [];
  // Loaded here, not at the top: the parity run pulls in the servers, msw and the tokenizer, which
  // `session-parity --version`, `--help` and the other commands never need.
  const { runParity } = await import("./run-parity");
  const report = await runParity(options, {
    env: io.env,
    progress: io.err,
    notice: (line) => io.err.write(`${line}\n`),
    onPairs: options.html === undefined ? undefined : (all) => (pairs = all),
    // performance.now() counts from the process's start: the closing line's total is the whole wall time.
    startedAtMs: io.startedAtMs,
  });
  // The files first, so the verdict line stays the last line of the output; a file that cannot be written still
  // leaves the report printed, then exits 2 naming it.
  const notes: string[] = [];
  let unwritable: CliExit | null = null;
  if (options.html !== undefined) {
    const { renderRunHtml } = await import("./html-report");
    const page = await renderRunHtml(report, pairs);
    try {
      await writeFile(options.html, page);
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
  io.out.write(renderReport(report, { notes }));
  if (unwritable !== null) throw unwritable;
  const exitCode = report.summary.serverProblems > 0 || report.summary.configurationProblem ? EXIT_USAGE : report.summary.pass ? EXIT_PASS : EXIT_FAIL;
  return { exitCode, report };
}

/**
 * Builds the `run` subcommand. Its action sets `process.exitCode`; parse errors (an unknown flag, a bad value)
 * and start-up errors reject with a {@link CliExit} carrying status 2.
 */
export function runCommand(io: RunCommandIo = DEFAULT_IO): Command {
  const command = new Command("run")
    .description(
      "run the weather agent's retry trajectories through v1 and v2 session servers and check that every v2 training payload equals v1's bit for bit",
    )
    .option("--batch <n>", "trajectories per version", parseBatch, RUN_DEFAULTS.batch)
    .option("--cycles <n>", "agent schedule cycles (the expected retry tree is checked for every count)", parseCycles, RUN_DEFAULTS.cycles)
    .addOption(
      new Option("--tool-call-failure-mode <mode>", "what the agent does when a tool-result step finds no tool call (cycles after the first meet one)")
        .choices(TOOL_CALL_FAILURE_MODES)
        .default(RUN_DEFAULTS.toolCallFailureMode),
    )
    .option(
      "--verify-gate",
      "also apply the session-verify gate to each version's batch: mismatch report present, no forbidden mismatch, driver events, assistant_text ratio",
    )
    .option("--backend <url>", "SGLang-compatible backend (default: embedded mock; env SESSION_PARITY_BACKEND_URL)", parseUrl)
    .option(
      "--cassette <file>",
      "replay a cassette as the backend of the embedded servers (recorded with `session-parity mock --record`); excludes --backend",
      parseCassetteFile,
    )
    .option("--v1 <url>", "v1 session server URL(s), comma-separated (default: embedded; env SESSION_PARITY_V1_URL)", parseUrlList)
    .option("--v2 <url>", "v2 session server URL(s), comma-separated (default: embedded; env SESSION_PARITY_V2_URL)", parseUrlList)
    .option("--hf-checkpoint <dir>", "local checkpoint directory with tokenizer.json (env SESSION_PARITY_HF_CHECKPOINT)", parseCheckpointDir)
    .option("--latency-ms <ms>", "latency of the embedded mock backend", parseLatencyMs, RUN_DEFAULTS.latencyMs)
    .addOption(
      new Option("--message-matcher <name>", "history matcher of the embedded session servers (default strict; env SESSION_PARITY_MESSAGE_MATCHER)").choices(
        Object.keys(MESSAGE_MATCHERS),
      ),
    )
    .option("--json <file>", "also write the full report (verdicts, differences, timings, servers, versions) as JSON", parseJsonPath)
    .option("--html <file>", "also write a self-contained HTML report: retry trees, aligned tokens, differing leaves", parseJsonPath)
    .option(
      "--routing-replay",
      "replay MoE routing through the chain: the mock returns routed experts, the servers carry them as tensors (env SESSION_PARITY_ROUTING_REPLAY)",
    )
    .option("--num-layers <n>", "with --routing-replay: MoE layers per routed-experts row (default 4)", parseRoutingDim)
    .option("--topk <k>", "with --routing-replay: experts per token and layer of the embedded mock (default 2)", parseRoutingDim)
    .option("--indexer-replay", "with --routing-replay: also replay the indexer top-k")
    .option("--addition-r3", "with --routing-replay: additional R3 (only new rows per request, rebuilt at collect time)")
    .option("--wait <seconds>", "how long to wait for each given server to answer GET /health before giving up (default 30; 0 = probe once)", parseWaitSeconds)
    .option("--servers-thread", "run the embedded session servers on a worker thread, a second core (default from --batch 64 on)")
    .option("--no-servers-thread", "keep the embedded mock and servers on the main thread with the agents")
    .action(async (options: RunCommandOptions) => {
      const { exitCode } = await executeRun(options, io);
      process.exitCode = exitCode;
    });
  addModelOptions(command, SERVER_KWARGS_HELP, { toolCallParser: true, env: true });
  return withCliConventions(command, [
    "session-parity run --batch 16",
    "session-parity mock --port 30000 &",
    "session-parity serve v1 --backend http://127.0.0.1:30000 --port 8001 &",
    "session-parity serve v2 --backend http://127.0.0.1:30000 --port 8002 &",
    "session-parity run --cycles 3 --tool-call-failure-mode append_tool --verify-gate",
    "session-parity run --v1 http://127.0.0.1:8001 --v2 http://127.0.0.1:8002 --json report.json",
  ]);
}
