// The `session-parity serve` subcommand: runs one reference session server as a standalone process.
// Checks the backend first (exit 2 naming it), prints one line with its URL, and exits 0 on SIGINT/SIGTERM.
import { Argument, Command, InvalidArgumentError, Option } from "commander";
import type { RunningSessionServer } from "../server/session-server";
import { MILES_REVISIONS, type MilesRevision, type SessionServerVersion } from "../server/types";
import type { PolicyLogger } from "../server/policy";
import type { MessageMatcherName } from "../server/message-matchers";
import { closeOnSignals, withCliConventions } from "./command-kit";
import { CliExit, EXIT_USAGE } from "./exit-codes";
import { parsePort } from "./mock-command";
import { DEFAULT_WAIT_SECONDS, parseWaitSeconds } from "./run-options";
import { redactUrlCredentials } from "../server/redaction";
import { addModelOptions, SERVER_KWARGS_HELP, type ModelChoiceFlags } from "./model-options";

/** Parsed options of `serve`. */
export interface ServeCommandOptions extends ModelChoiceFlags {
  version: SessionServerVersion;
  backend: string;
  port: number;
  host: string;
  hfCheckpoint?: string;
  instanceId?: string;
  messageMatcher: MessageMatcherName;
  samplePicker?: string;
  samplePostprocessor?: string;
  quiet?: boolean;
  /** Routing replay (miles' argument names). */
  useRolloutRoutingReplay?: boolean;
  useRolloutIndexerReplay?: boolean;
  useAdditionR3?: boolean;
  numLayers?: number;
  /** Probe `GET <backend>/health` before starting (default true; `--no-check-backend` turns it off). */
  checkBackend?: boolean;
  /** Seconds to keep retrying the backend probe while nothing answers there (default 30; 0 probes once). */
  wait?: number;
  maxBodyBytes?: number;
  maxReplyBytes?: number;
  upstreamTimeoutMs?: number;
  /** Session budget: heap bytes all sessions may hold, session count, idle expiry in seconds. */
  maxSessionBytes?: number;
  maxSessions?: number;
  sessionTtl?: number;
  /** Which miles revision the refusal rules follow. */
  milesRevision?: MilesRevision;
  /** miles' `--save-debug-trajectory-data` (metadata.messages on the last turn) and our dump file template. */
  saveDebugTrajectoryData?: boolean;
  saveTrajectories?: string;
  /** miles' `--sglang-speculative-algorithm`: sum the backend's speculative counters into spec_info. */
  sglangSpeculativeAlgorithm?: string;
  /** miles' LoRA arguments: either one on sends `lora_path: "miles_lora"` upstream. */
  loraRank?: number;
  loraAdapterPath?: string;
}

function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError("must be a positive integer");
  return n;
}

function parsePositiveInteger(value: string): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(parsed) || parsed <= 0) throw new InvalidArgumentError("must be a positive integer");
  return parsed;
}

/** Longest idle expiry in seconds whose milliseconds are still a safe integer (about 285,000 years). */
const MAX_TTL_SECONDS = Math.floor(Number.MAX_SAFE_INTEGER / 1000);

/** `--session-ttl`: a positive whole number of seconds, refused in seconds (not milliseconds) when too large. */
function parseTtlSeconds(value: string): number {
  const parsed = /^\d+$/.test(value) && Number(value) > MAX_TTL_SECONDS ? Number.POSITIVE_INFINITY : parsePositiveInteger(value);
  if (parsed > MAX_TTL_SECONDS) throw new InvalidArgumentError(`must be at most ${MAX_TTL_SECONDS} seconds (about 285,000 years; omit it for no expiry)`);
  return parsed;
}

function parseUrl(value: string): string {
  if (!/^https?:\/\/[^/]+/.test(value)) throw new InvalidArgumentError("must be an http(s) URL such as http://127.0.0.1:30000");
  return value;
}

/** Warnings always; info lines (session expiry, rollbacks, branching) only when idle expiry is on. */
function serveLogger(withInfo: boolean): PolicyLogger {
  const warn = (message: string): void => console.warn(`[session-server] ${message}`);
  return withInfo ? { warn, info: (message) => console.log(`[session-server] ${message}`) } : { warn };
}

/**
 * Starts the server described by `options` and wires the shutdown signals. Resolves once listening.
 * @throws CliExit (status 2) when the backend does not answer (unless `checkBackend` is false) or the server
 *   cannot start (port taken, tokenizer or hook that cannot be loaded).
 */
export async function runServe(
  options: ServeCommandOptions,
  io: { log: (line: string) => void; warn?: (line: string) => void } = { log: (line) => console.log(line), warn: (line) => console.error(line) },
): Promise<RunningSessionServer> {
  if (options.checkBackend !== false) {
    // Loaded on use (undici): `--version` and `--help` never pay for it.
    const { HealthReplyError, waitForHealth } = await import("../fixture/health-wait");
    const wait = options.wait ?? DEFAULT_WAIT_SECONDS;
    const backend = redactUrlCredentials(options.backend);
    try {
      await waitForHealth(options.backend, {
        target: "backend",
        deadlineMs: wait * 1000,
        onWaiting: (reason) => io.warn?.(`session-parity: waiting up to ${wait} s (--wait) for the backend at ${backend} to answer GET /health (${reason})`),
      });
    } catch (error) {
      throw new CliExit(
        EXIT_USAGE,
        error instanceof HealthReplyError
          ? `cannot use the backend at ${backend} (--backend): ${error.message}`
          : `cannot reach the backend at ${backend} (--backend): ${(error as Error).message}; start it first (e.g. session-parity mock), or pass --no-check-backend`,
      );
    }
  }
  let server: RunningSessionServer;
  // Loaded on use (server, msw, tokenizer): the program's other commands and --version never pay for it.
  const { startSessionServer } = await import("../server/session-server");
  try {
    server = await startSessionServer({
      version: options.version,
      backendUrl: options.backend,
      port: options.port,
      host: options.host,
      hfCheckpoint: options.hfCheckpoint,
      titoModel: options.titoModel,
      chatTemplatePath: options.chatTemplatePath,
      chatTemplateKwargs: options.chatTemplateKwargs,
      chatTemplate: options.chatTemplate,
      instanceId: options.instanceId,
      messageMatcher: options.messageMatcher,
      samplePicker: options.samplePicker,
      samplePostprocessor: options.samplePostprocessor,
      logger: options.quiet ? { warn: () => undefined } : serveLogger(options.sessionTtl !== undefined),
      useRoutingReplay: options.useRolloutRoutingReplay,
      useIndexerReplay: options.useRolloutIndexerReplay,
      useAdditionR3: options.useAdditionR3,
      numLayers: options.numLayers,
      maxBodyBytes: options.maxBodyBytes,
      maxReplyBytes: options.maxReplyBytes,
      upstreamTimeoutMs: options.upstreamTimeoutMs,
      maxSessionBytes: options.maxSessionBytes,
      maxSessions: options.maxSessions,
      sessionTtlMs: options.sessionTtl === undefined ? undefined : options.sessionTtl * 1000,
      milesRevision: options.milesRevision,
      saveDebugTrajectoryData: options.saveDebugTrajectoryData,
      saveTrajectories: options.saveTrajectories,
      sglangSpeculativeAlgorithm: options.sglangSpeculativeAlgorithm,
      loraRank: options.loraRank,
      loraAdapterPath: options.loraAdapterPath,
    });
  } catch (error) {
    throw new CliExit(EXIT_USAGE, `could not start the ${options.version} session server: ${(error as Error).message}`);
  }
  closeOnSignals(() => server.close(), "session server");
  io.log(`session-parity ${options.version} session server listening on ${server.url} (backend ${redactUrlCredentials(options.backend)})`);
  return server;
}

/** Builds the `serve` subcommand. */
export function serveCommand(): Command {
  const command = new Command("serve")
    .description("run a reference session server (v1 linear or v2 tree) in front of an SGLang-compatible backend")
    .usage("<v1|v2> --backend <url> [options]")
    .addArgument(new Argument("[version]", "session server version: v1 (linear trajectory) or v2 (retry tree)").choices(["v1", "v2"]))
    // The old spelling (`serve --version v1`) collided with the program's --version; it is refused with the new one.
    .addOption(new Option("--version <version>").hideHelp())
    .requiredOption("--backend <url>", "backend base URL, e.g. http://127.0.0.1:30000", parseUrl)
    .option("--port <n>", "port to listen on (0 = a free port)", parsePort, 0)
    .option("--host <host>", "interface to bind", "127.0.0.1")
    .option("--hf-checkpoint <dir>", "local checkpoint directory with tokenizer.json and tokenizer_config.json")
    .option("--instance-id <id>", "id reported by GET /health")
    .addOption(
      new Option("--message-matcher <name>", "history matcher")
        .choices(["strict", "loose_tool_call", "split_assistant_turn", "role_content_only"])
        .default("strict"),
    )
    .option("--sample-picker <spec>", 'v2 picker hook, "module/path#exportName"')
    .option("--sample-postprocessor <spec>", 'v2 post-processor hook, "module/path#exportName"')
    .option("--max-body-bytes <n>", "request body limit in bytes (413 beyond; default 67108864 = 64 MiB)", parsePositiveInteger)
    .option("--max-reply-bytes <n>", "backend reply cap in bytes after decompression (502 beyond; default 268435456 = 256 MiB)", parsePositiveInteger)
    .option("--upstream-timeout-ms <n>", "deadline of one backend call: headers and whole body (default 600000)", parsePositiveInteger)
    .option(
      "--max-session-bytes <n>",
      "heap bytes all sessions may hold; beyond it new sessions and turns get 503 (default: 80% of the free heap)",
      parsePositiveInteger,
    )
    .option("--max-sessions <n>", "most sessions held at once; beyond it POST /sessions gets 503 (default: no count limit)", parsePositiveInteger)
    .option(
      "--session-ttl <seconds>",
      "evict sessions idle this long since their last request ended, logged; a session with a request in flight is kept (default: never, as miles)",
      parseTtlSeconds,
    )
    .addOption(
      new Option("--miles-revision <rev>", "miles revision the refusal rules follow: 3311 (a refused retry keeps its history) or the 31f1ca96 snapshot")
        .choices([...MILES_REVISIONS])
        .default("3311"),
    )
    .option("--quiet", "do not print warnings")
    .option("--use-rollout-routing-replay", "ask the backend for routed experts and carry them as rollout_routed_experts (needs --num-layers)")
    .option("--use-rollout-indexer-replay", "ask the backend for indexer top-k and carry it as rollout_indexer_topk")
    .option("--use-addition-r3", "ask only for routed-expert rows the session lacks (routed_experts_start_len) and rebuild the tensor from patches")
    .option("--num-layers <n>", "MoE layers in a routed-experts buffer", parsePositiveInt)
    .option("--save-debug-trajectory-data", "attach the last turn's conversation to each sample as metadata.messages (as miles' flag of that name)")
    .option(
      "--save-trajectories <path-template>",
      "write miles' trajectory dump rows (JSONL) on each samples op; {rollout_id}/{session_id} is the session id (implies --save-debug-trajectory-data)",
    )
    .option("--sglang-speculative-algorithm <name>", "the backend decodes speculatively: sum its spec_* counters into spec_info")
    .option("--lora-rank <n>", "LoRA rank; above 0 every upstream body carries lora_path: miles_lora", parsePositiveInt)
    .option("--lora-adapter-path <path>", "a LoRA adapter is served: every upstream body carries lora_path: miles_lora")
    .option(
      "--wait <seconds>",
      `how long to wait for the backend to answer GET <backend>/health before giving up (0 = probe once)`,
      parseWaitSeconds,
      DEFAULT_WAIT_SECONDS,
    )
    .option("--no-check-backend", "start without probing GET <backend>/health first")
    .action(async (version: SessionServerVersion | undefined, options: Omit<ServeCommandOptions, "version"> & { version?: string }, self: Command) => {
      if (version === undefined) {
        const hint = options.version === undefined ? "" : ` (the version is the first word now: session-parity serve ${options.version} ...)`;
        self.error(`error: missing the session server version, v1 or v2${hint}`, { exitCode: EXIT_USAGE, code: "commander.missingArgument" });
      }
      if (options.version !== undefined) {
        self.error(`error: --version is not a serve flag; the version is the first word: session-parity serve ${version} ...`, { exitCode: EXIT_USAGE });
      }
      await runServe({ ...options, version });
    });
  addModelOptions(command, SERVER_KWARGS_HELP);
  return withCliConventions(command, [
    "session-parity mock --port 30000 & session-parity serve v2 --backend http://127.0.0.1:30000 --port 8002 --message-matcher loose_tool_call",
  ]);
}
