// The `session-parity serve` subcommand: runs one reference session server as a standalone process.
// Checks the backend first (exit 2 naming it), prints one line with its URL, and exits 0 on SIGINT/SIGTERM.
import { Command, InvalidArgumentError, Option } from "commander";
import { startSessionServer, RunningSessionServer } from "../server/session-server";
import type { SessionServerVersion } from "../server/types";
import type { MessageMatcherName } from "../server/message-matchers";
import { describeTransportError, probeHealth } from "../fixture/health-probe";
import { closeOnSignals, withCliConventions } from "./command-kit";
import { CliExit, EXIT_USAGE } from "./exit-codes";
import { parsePort } from "./mock-command";
import { redactUrlCredentials } from "../server/redaction";
import { addModelOptions, type ModelChoiceFlags } from "./model-options";

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
  maxBodyBytes?: number;
  maxReplyBytes?: number;
  upstreamTimeoutMs?: number;
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

function parseUrl(value: string): string {
  if (!/^https?:\/\/[^/]+/.test(value)) throw new InvalidArgumentError("must be an http(s) URL such as http://127.0.0.1:30000");
  return value;
}

/**
 * Starts the server described by `options` and wires the shutdown signals. Resolves once listening.
 * @throws CliExit (status 2) when the backend does not answer (unless `checkBackend` is false) or the server
 *   cannot start (port taken, tokenizer or hook that cannot be loaded).
 */
export async function runServe(
  options: ServeCommandOptions,
  io: { log: (line: string) => void } = { log: (line) => console.log(line) },
): Promise<RunningSessionServer> {
  if (options.checkBackend !== false) {
    try {
      await probeHealth(options.backend);
    } catch (error) {
      throw new CliExit(
        EXIT_USAGE,
        `cannot reach the backend at ${redactUrlCredentials(options.backend)} (--backend): ${describeTransportError(error)}; start it first (e.g. session-parity mock), or pass --no-check-backend`,
      );
    }
  }
  let server: RunningSessionServer;
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
    .addOption(new Option("--version <version>", "session server version").choices(["v1", "v2"]).makeOptionMandatory())
    .requiredOption("--backend <url>", "backend base URL, e.g. http://127.0.0.1:30000", parseUrl)
    .option("--port <n>", "port to listen on (0 = a free port)", parsePort, 0)
    .option("--host <host>", "interface to bind", "127.0.0.1")
    .option("--hf-checkpoint <dir>", "local checkpoint directory with tokenizer.json and tokenizer_config.json")
    .option("--instance-id <id>", "id reported by GET /health")
    .addOption(new Option("--message-matcher <name>", "history matcher").choices(["strict", "loose_tool_call", "role_content_only"]).default("strict"))
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
    .option("--no-check-backend", "start without probing GET <backend>/health first")
    .action(async (options: ServeCommandOptions) => {
      await runServe(options);
    });
  addModelOptions(command, "{}");
  return withCliConventions(command, ["session-parity serve --version v2 --backend http://127.0.0.1:30000 --port 8002 --message-matcher loose_tool_call"]);
}
