// The `session-parity serve` subcommand: runs one reference session server as a standalone process.
// Prints one line with its URL once listening; SIGINT/SIGTERM close it and exit with status 0.
import { Command, InvalidArgumentError, Option } from "commander";
import { startSessionServer, RunningSessionServer } from "../server/session-server";
import type { SessionServerVersion } from "../server/types";
import type { MessageMatcherName } from "../server/message-matchers";
import { redactUrlCredentials } from "../server/redaction";

/** Parsed options of `serve`. */
export interface ServeCommandOptions {
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
  maxBodyBytes?: number;
  maxReplyBytes?: number;
  upstreamTimeoutMs?: number;
}

function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError("must be a positive integer");
  return n;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError("must be an integer between 0 and 65535");
  return port;
}

function parsePositiveInteger(value: string): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(parsed) || parsed <= 0) throw new InvalidArgumentError("must be a positive integer");
  return parsed;
}

function parseUrl(value: string): string {
  if (!/^https?:\/\/[^/]+/.test(value)) throw new InvalidArgumentError("must be an http(s) URL such as http://127.0.0.1:30000");
  return value;
}

/** Starts the server described by `options` and wires the shutdown signals. Resolves once listening. */
export async function runServe(options: ServeCommandOptions, io: { log: (line: string) => void } = { log: (line) => console.log(line) }): Promise<RunningSessionServer> {
  const server = await startSessionServer({
    version: options.version,
    backendUrl: options.backend,
    port: options.port,
    host: options.host,
    hfCheckpoint: options.hfCheckpoint,
    instanceId: options.instanceId,
    messageMatcher: options.messageMatcher,
    samplePicker: options.samplePicker,
    samplePostprocessor: options.samplePostprocessor,
    logger: options.quiet ? { warn: () => undefined } : undefined,
    useRoutingReplay: options.useRolloutRoutingReplay,
    useIndexerReplay: options.useRolloutIndexerReplay,
    useAdditionR3: options.useAdditionR3,
    numLayers: options.numLayers,
    maxBodyBytes: options.maxBodyBytes,
    maxReplyBytes: options.maxReplyBytes,
    upstreamTimeoutMs: options.upstreamTimeoutMs,
  });
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`session-parity: error while closing on ${signal}: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  io.log(`session-parity ${options.version} session server listening on ${server.url} (backend ${redactUrlCredentials(options.backend)})`);
  return server;
}

/** Builds the `serve` subcommand. */
export function serveCommand(): Command {
  return new Command("serve")
    .description("run a reference session server (v1 linear or v2 tree) in front of an SGLang-compatible backend")
    .addOption(new Option("--version <version>", "session server version").choices(["v1", "v2"]).makeOptionMandatory())
    .requiredOption("--backend <url>", "backend base URL, e.g. http://127.0.0.1:30000", parseUrl)
    .option("--port <n>", "port to listen on (0 = a free port)", parsePort, 0)
    .option("--host <host>", "interface to bind", "127.0.0.1")
    .option("--hf-checkpoint <dir>", "local checkpoint directory with tokenizer.json and tokenizer_config.json")
    .option("--instance-id <id>", "id reported by GET /health")
    .addOption(
      new Option("--message-matcher <name>", "history matcher").choices(["strict", "loose_tool_call", "role_content_only"]).default("strict"),
    )
    .option("--sample-picker <spec>", 'v2 picker hook, "module/path#exportName"')
    .option("--sample-postprocessor <spec>", 'v2 post-processor hook, "module/path#exportName"')
    .option("--max-body-bytes <n>", "request body limit in bytes (413 beyond; default 67108864 = 64 MiB)", parsePositiveInteger)
    .option("--max-reply-bytes <n>", "backend reply cap in bytes after decompression (502 beyond; default 268435456 = 256 MiB)", parsePositiveInteger)
    .option("--upstream-timeout-ms <n>", "deadline of one backend call: headers and whole body (default 600000)", parsePositiveInteger)
    .option("--quiet", "do not print warnings")
    .option("--use-rollout-routing-replay", "ask the backend for routed experts and carry them as rollout_routed_experts (needs --num-layers)")
    .option("--use-rollout-indexer-replay", "ask the backend for indexer top-k and carry it as rollout_indexer_topk")
    .option("--use-addition-r3", "ask only for routed-expert rows the session lacks (routed_experts_start_len) and rebuild the tensor from patches")
    .option("--num-layers <n>", "MoE layers in a routed-experts buffer", parsePositiveInt)
    .action(async (options: ServeCommandOptions) => {
      await runServe(options);
    });
}
