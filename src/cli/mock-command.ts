// The `session-parity mock` subcommand: the SGLang-compatible mock backend alone, so your own session servers
// can be pointed at it without code. Prints one line with its URL; SIGINT/SIGTERM close it and exit 0.
import { Command, InvalidArgumentError, Option } from "commander";
import type { MockBackend } from "../backend/mock-backend";
import type { ProcessFunction } from "../backend/types";
import { withCliConventions, closeOnSignals } from "./command-kit";
import { CliExit, EXIT_USAGE } from "./exit-codes";
import { parseCheckpointDir, parseLatencyMs, parseUrl } from "./run-options";
import { addModelOptions, type ModelChoiceFlags } from "./model-options";
import { addCassetteOption, parseRecordFile, startCassetteFromFlags } from "./cassette-option";

/** The scripts `--script` can name. */
type MockScriptName = "weather" | "echo";

function parseDraftTokens(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError("must be a positive integer");
  return n;
}

/** Parsed options of `mock`. */
interface MockCommandOptions extends ModelChoiceFlags {
  port: number;
  host: string;
  latencyMs: number;
  /** Draft tokens per step of a speculating engine: report spec_* counters. */
  speculativeDraftTokens?: number;
  script: MockScriptName;
  hfCheckpoint?: string;
  cassette?: string;
  record?: string;
  upstream?: string;
}

/** Parses a port flag (0 = a free port). */
export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(port) || port > 65535) throw new InvalidArgumentError("must be an integer between 0 and 65535");
  return port;
}

async function scriptFor(name: MockScriptName): Promise<ProcessFunction> {
  const scripts = await import("../backend/scripts");
  return name === "weather" ? scripts.weatherScript : scripts.echoScript;
}

/**
 * Starts the mock backend described by `options` and wires the shutdown signals. Resolves once listening.
 * @throws CliExit (status 2) when the port is taken or the tokenizer cannot be loaded.
 */
async function runMock(options: MockCommandOptions, io: { log: (line: string) => void } = { log: (line) => console.log(line) }): Promise<MockBackend> {
  const { startMockBackend } = await import("../backend/mock-backend");
  let backend: MockBackend;
  try {
    backend = await startMockBackend({
      process: await scriptFor(options.script),
      latencyMs: options.latencyMs,
      speculativeDraftTokens: options.speculativeDraftTokens,
      host: options.host,
      port: options.port,
      hfCheckpoint: options.hfCheckpoint,
      // Another process drives this mock: `session-parity fuzz --backend` registers its reply plans, a test reads the stats.
      statsRoutes: true,
      planRoutes: true,
      titoModel: options.titoModel,
      chatTemplatePath: options.chatTemplatePath,
      chatTemplateKwargs: options.chatTemplateKwargs,
      chatTemplate: options.chatTemplate,
      toolCallParser: options.toolCallParser,
    });
  } catch (error) {
    throw new CliExit(EXIT_USAGE, `could not start the mock backend on ${options.host}:${options.port}: ${(error as Error).message}`);
  }
  closeOnSignals(() => backend.close(), "mock backend");
  io.log(`session-parity mock backend (${options.script} script, ${options.latencyMs} ms latency) listening on ${backend.url}`);
  return backend;
}

/** Serves a cassette (replay, or record through `--upstream`) instead of the scripted mock; resolves once listening. */
async function runCassette(options: MockCommandOptions, io: { log: (line: string) => void } = { log: (line) => console.log(line) }): Promise<void> {
  const backend = await startCassetteFromFlags(options);
  closeOnSignals(() => backend.close(), "cassette backend");
  const file = options.cassette ?? options.record;
  const what = backend.mode === "record" ? `recording into ${file} from ${options.upstream}` : `replaying ${file}`;
  io.log(`session-parity mock backend (cassette, ${backend.size} interactions, ${what}) listening on ${backend.url}`);
}

/** Builds the `mock` subcommand. */
export function mockCommand(): Command {
  const command = new Command("mock")
    .description(
      "run the SGLang-compatible mock backend alone (the family's real tokenizer and formats, scripted replies), e.g. for your own session servers; " +
        "it also serves the control routes `session-parity fuzz --backend` uses (PUT/DELETE /_mock/plans/{key}, GET /_mock/stats, POST /_mock/reset)",
    )
    .option("--port <n>", "port to listen on (0 = a free port)", parsePort, 0)
    .option("--host <host>", "interface to bind", "127.0.0.1")
    .option("--latency-ms <ms>", "delay before each generation reply", parseLatencyMs, 0)
    .option("--speculative-draft-tokens <k>", "report SGLang's spec_* counters in meta_info as an engine drafting k tokens a step", parseDraftTokens)
    .addOption(
      new Option("--script <name>", "what the model answers: the weather agent's script, or `echo: <last user message>`")
        .choices(["weather", "echo"])
        .default("weather"),
    )
    .option("--hf-checkpoint <dir>", "local checkpoint directory with tokenizer.json and tokenizer_config.json", parseCheckpointDir)
    .option(
      "--record <file>",
      "record a cassette: proxy each generation call to --upstream and append the exchange (only what the file lacks)",
      parseRecordFile,
    )
    .option("--upstream <url>", "the SGLang-compatible server --record proxies to", parseUrl)
    .action(async (options: MockCommandOptions) => {
      if (options.cassette !== undefined || options.record !== undefined || options.upstream !== undefined) await runCassette(options);
      else await runMock(options);
    });
  addCassetteOption(command);
  addModelOptions(command, "{}", { toolCallParser: true });
  return withCliConventions(command, [
    "session-parity mock --port 30000 --latency-ms 50 --script weather",
    "session-parity serve v1 --backend http://127.0.0.1:30000 --port 8001",
    "session-parity mock --port 30001 --record agent.cassette.jsonl --upstream http://127.0.0.1:30000",
    "session-parity mock --port 30002 --cassette agent.cassette.jsonl",
  ]);
}
