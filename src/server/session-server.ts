// Starts and stops the reference session server: options, policy and tokenizer setup, listening, shutdown.
// Request handling lives in session-shell.ts; version-specific behaviour behind the TrajectoryPolicy seam.
import { createServer, Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ModelChoice } from "../tokenizer/families/types";
import type { Tokenizer } from "../tokenizer/types";
import { sendError } from "./http-io";
import { MessageMatcherName, resolveMessageMatcher } from "./message-matchers";
import type { AnyTrajectoryPolicy, MessageMatcher, PolicyContext, PolicyLogger } from "./policy";
import { createPolicy, SamplePickerOption, SamplePostprocessorOption } from "./policy-factory";
import { resolveReplayOptions, type RoutingReplayServerOptions } from "./replay-options";
import { SessionShell, type ShellLimits } from "./session-shell";
import { loadTitoKit } from "./tito-kit";
import type { MilesRevision, SessionServerVersion } from "./types";
import { DEFAULT_MAX_REPLY_BYTES, DEFAULT_UPSTREAM_TIMEOUT_MS, UpstreamClient } from "./upstream";
import { checkMaxBodyBytes, DEFAULT_MAX_BODY_BYTES } from "./bounded-body";
import { redactAbsolutePaths, redactUrlCredentials } from "./redaction";
import { allowedHostsFor } from "./request-guard";
import { resolveSessionBudget } from "./session-budget";
import { TrajectoryDumpWriter } from "./trajectory-dump";

/** Options of {@link startSessionServer} (routing replay: see {@link RoutingReplayServerOptions}). */
export interface SessionServerOptions extends RoutingReplayServerOptions, ModelChoice {
  /** `"v1"` (linear trajectories) or `"v2"` (trajectory tree). */
  version: SessionServerVersion;
  /** The SGLang-compatible backend, e.g. `http://127.0.0.1:30000`. */
  backendUrl: string;
  /** Bind address (default 127.0.0.1). */
  host?: string;
  /** Port (default 0: a free port). */
  port?: number;
  /** Reported by `GET /health` as `session_server_instance_id`. */
  instanceId?: string;
  /** History matcher: a built-in name or a custom function (default `"strict"`). */
  messageMatcher?: MessageMatcherName | MessageMatcher;
  /** Upstream deadline in ms: status line, headers and the whole reply body of one call (default 600000). */
  upstreamTimeoutMs?: number;
  /** Request body limit in bytes, every route (default 64 MiB); a larger body is answered 413. */
  maxBodyBytes?: number;
  /** Cap on a backend reply after decompression, in bytes (default 256 MiB); a larger reply is answered 502. */
  maxReplyBytes?: number;
  /** Where warnings go (default: console.warn with a prefix). Pass `{warn() {}}` to silence. */
  logger?: PolicyLogger;
  /** v2 only: the samples-op picker (function or `"module/path#exportName"`). */
  samplePicker?: SamplePickerOption;
  /** v2 only: the samples-op post-processor (function or `"module/path#exportName"`). */
  samplePostprocessor?: SamplePostprocessorOption;
  /**
   * Which miles revision the refusal rules follow (default `"3311"`: a refused v1 retry keeps its history, PR #3311;
   * the v2 view follows the last committed node, PR #3258). `"31f1ca96"` restores the snapshot's order.
   */
  milesRevision?: MilesRevision;
  /**
   * Heap bytes all sessions of this server may hold (by the store's measured accounting). A session creation or chat
   * that would pass it is answered 503 with `Retry-After`, naming the budget; stored sessions stay fully usable and a
   * DELETE frees room at once. Default: servers without this option share one budget of 80% of the heap free when
   * the first of them started (`v8.getHeapStatistics()`), so the process answers 503 long before it runs out.
   */
  maxSessionBytes?: number;
  /** Most sessions held at once (default: no count limit besides the byte budget); beyond it `POST /sessions` is 503. */
  maxSessions?: number;
  /**
   * Idle expiry in ms: a session no request touched for that long is evicted (logged at info). Default: none, as miles
   * has none. A session with a request in flight is never evicted.
   */
  sessionTtlMs?: number;
  /**
   * The clock idle expiry reads, in ms (default `Date.now`). A session is idle from the end of its last request; tests
   * pass a clock of their own to drive {@link sessionTtlMs} without waiting.
   */
  clock?: () => number;
  /** Maximum sockets to the backend (default 1024). */
  upstreamConnections?: number;
  /**
   * A custom trajectory policy to serve instead of the built-in one for `version` (its `version` must match).
   * This is how a rewritten server design can reuse the shell, proxy, assembly and codec.
   */
  policy?: AnyTrajectoryPolicy;
  /**
   * miles' `--save-debug-trajectory-data` (set there to a path template): the samples op attaches the last turn's
   * conversation as `metadata.messages` (request messages + the response message; merge.py:87-88 at 31f1ca96).
   */
  saveDebugTrajectoryData?: boolean;
  /**
   * `--save-trajectories PATH_TEMPLATE`: implies `saveDebugTrajectoryData`, and each samples op writes miles' dump rows
   * (`trajectory_rows` of miles/ray/rollout/debug_data.py) to the file the template names (`{rollout_id}` /
   * `{session_id}`: the session id; see {@link TrajectoryDumpWriter}).
   */
  saveTrajectories?: string;
  /**
   * miles' `--sglang-speculative-algorithm` (e.g. `"EAGLE"`): when set, each turn's speculative-decoding counters in
   * `meta_info` are summed into the sample's `spec_info` (merge.py:136-137 at 31f1ca96).
   */
  sglangSpeculativeAlgorithm?: string;
}

/** A running session server. */
export interface RunningSessionServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** The version it serves. */
  version: SessionServerVersion;
  /** The tokenizer the server renders prompts with. */
  tokenizer: Tokenizer;
  /** What the session store holds now, by its byte accounting, and the budget it enforces. */
  sessionUsage(): SessionUsage;
  /** The family it serves (`--tito-model`). */
  titoModel: string;
  /** Ends in-flight requests, closes the backend pool and frees the port. */
  close(): Promise<void>;
}

/** A snapshot of a server's session store (see {@link RunningSessionServer.sessionUsage}). */
export interface SessionUsage {
  /** Sessions stored. */
  sessions: number;
  /** Heap bytes charged to them plus bytes reserved for chats in flight. */
  bytes: number;
  /** Bytes held by every server drawing from the same budget (the process-wide default is shared). */
  budgetHeldBytes: number;
  /** The byte budget. */
  budgetBytes: number;
}

const DEFAULT_LOGGER: PolicyLogger = {
  warn: (message) => console.warn(`[session-server] ${message}`),
};

/** Starts a session server; resolves once it listens. */
export async function startSessionServer(options: SessionServerOptions): Promise<RunningSessionServer> {
  if (options.version !== "v1" && options.version !== "v2") {
    throw new Error(`unknown session server version ${JSON.stringify(options.version)}; use "v1" or "v2"`);
  }
  if (typeof options.backendUrl !== "string" || !/^https?:\/\//.test(options.backendUrl)) {
    throw new Error(
      `backendUrl must be an http(s) URL, got ${JSON.stringify(typeof options.backendUrl === "string" ? redactUrlCredentials(options.backendUrl) : options.backendUrl)}`,
    );
  }
  const replay = resolveReplayOptions(options);
  const logger = options.logger ?? DEFAULT_LOGGER;
  const messagesMatch = resolveMessageMatcher(options.messageMatcher ?? "strict");
  if (options.policy && options.policy.version !== options.version) {
    throw new Error(`custom policy serves ${options.policy.version}, but the server was asked for ${options.version}`);
  }
  const policy =
    options.policy ??
    createPolicy(options.version, {
      logger,
      samplePicker: options.samplePicker,
      samplePostprocessor: options.samplePostprocessor,
      milesRevision: options.milesRevision,
    });
  const kit = await loadTitoKit({
    titoModel: options.titoModel,
    hfCheckpoint: options.hfCheckpoint,
    chatTemplatePath: options.chatTemplatePath,
    chatTemplateKwargs: options.chatTemplateKwargs,
    chatTemplate: options.chatTemplate,
  });
  const ctx: PolicyContext = {
    tokenizer: kit.tokenizer,
    tito: kit.tito,
    defaultChatTemplateKwargs: kit.defaultKwargs,
    messagesMatch,
    logger,
    replay: replay.assembly,
    sampleExtras: {
      debugMessages: options.saveDebugTrajectoryData === true || options.saveTrajectories !== undefined,
      specInfo: typeof options.sglangSpeculativeAlgorithm === "string" && options.sglangSpeculativeAlgorithm !== "",
    },
  };
  const dump = options.saveTrajectories === undefined ? undefined : new TrajectoryDumpWriter(options.saveTrajectories);
  const upstream = new UpstreamClient(options.backendUrl, {
    timeoutMs: checkPositiveInteger(options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS, "upstreamTimeoutMs"),
    connections: options.upstreamConnections ?? 1024,
    maxReplyBytes: checkPositiveInteger(options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES, "maxReplyBytes"),
  });
  const limits: ShellLimits = {
    maxBodyBytes: checkMaxBodyBytes(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES),
    allowedHosts: null,
    sessions: resolveSessionBudget(options, (message) => logger.warn(message)),
    now: options.clock,
  };
  const shell = new SessionShell(policy, ctx, kit, upstream, options.instanceId, logger, replay.request, limits, dump);
  const server = createServer((req, res) => {
    shell.handle(req, res).catch((error: unknown) => {
      // Neither the log line nor the reply carries an absolute path (stack frames name files by their base name).
      logger.warn(redactAbsolutePaths(`unhandled error: ${(error as Error)?.stack ?? String(error)}`));
      sendError(res, 500, `internal error: ${(error as Error)?.message ?? String(error)}`);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  limits.allowedHosts = allowedHostsFor(address.address, address.port);
  if (limits.allowedHosts === null) {
    logger.warn(
      `listening on non-loopback address ${host}:${address.port}: the session server has no authentication, so anyone who can reach this address can read and change sessions`,
    );
  }
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}`,
    version: options.version,
    tokenizer: kit.tokenizer,
    sessionUsage: () => shell.usage(),
    titoModel: kit.titoModel,
    close: () => {
      closing ??= closeServer(server, upstream, shell);
      return closing;
    },
  };
}

function checkPositiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got ${String(value)}`);
  return value;
}

async function closeServer(server: Server, upstream: UpstreamClient, shell: SessionShell): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await upstream.destroy();
  shell.clear();
  await closed;
}
