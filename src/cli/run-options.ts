// Flags of `session-parity run`: their parsed shape, defaults and the parsers commander calls.
// A parser rejects a bad value with a message; commander prefixes it with the flag's name.
import { existsSync, statSync } from "node:fs";
import * as path from "node:path";
import { InvalidArgumentError } from "commander";
import type { ToolCallFailureMode } from "../agent/weather-agent";
import { parseServerUrl, parseServerUrlList } from "../fixture/server-urls";
import type { MessageMatcherName } from "../server/message-matchers";
import type { ModelChoiceFlags } from "./model-options";

/** Parsed flags of `session-parity run`. */
export interface RunCommandOptions extends ModelChoiceFlags {
  /** Trajectories per session-server version (default 16). */
  batch: number;
  /** Agent schedule cycles (default 1); the expected retry tree, counters and record count are checked for every count. */
  cycles: number;
  /** What the agent does when a tool-result step finds no tool call (default `"rollback"`). */
  toolCallFailureMode?: ToolCallFailureMode;
  /** Also apply the session-verify gate to each version's batch (`checkSessionVerifyGate`); a failing gate fails the run. */
  verifyGate?: boolean;
  /** Backend URL (a real SGLang, or any SGLang-compatible server); default: the embedded weather mock. */
  backend?: string;
  /** A cassette file replayed as the backend of the embedded servers (excludes `backend`). */
  cassette?: string;
  /** v1 session server URL(s), comma-separated; default: an embedded v1 server. */
  v1?: string;
  /** v2 session server URL(s), comma-separated; default: an embedded v2 server. */
  v2?: string;
  /** Local Hugging Face checkpoint directory (tokenizer.json + tokenizer_config.json) of embedded parts. */
  hfCheckpoint?: string;
  /** Built-in history matcher of the embedded session servers (default env SESSION_PARITY_MESSAGE_MATCHER, else strict). */
  messageMatcher?: MessageMatcherName;
  /** Latency of the embedded mock backend in milliseconds (default 50). */
  latencyMs: number;
  /** Write the full report as JSON to this file. */
  json?: string;
  /** Write the self-contained HTML report to this file. */
  html?: string;
  /** Routing replay through the whole chain (default env SESSION_PARITY_ROUTING_REPLAY). */
  routingReplay?: boolean;
  /** MoE layers of the routing buffers (with `routingReplay`; default 4). */
  numLayers?: number;
  /** Experts per token and layer of the embedded mock (with `routingReplay`; default 2). */
  topk?: number;
  /** Also replay the indexer top-k (with `routingReplay`). */
  indexerReplay?: boolean;
  /** Additional R3: only new rows per request (with `routingReplay`). */
  additionR3?: boolean;
  /**
   * Run the embedded session servers on a worker thread (the mock stays beside the agents) so a run uses a second
   * core; false keeps everything on the main thread. Default: a thread from `--batch 64` on.
   */
  serversThread?: boolean;
  /** Seconds to keep probing each given server that does not answer yet (default {@link DEFAULT_WAIT_SECONDS}). */
  wait?: number;
}

/** Seconds `serve` and `run` keep probing a given server that does not answer yet (`--wait`). */
export const DEFAULT_WAIT_SECONDS = 30;

/** `--wait`: seconds from 0 (probe once) to 3600. */
export function parseWaitSeconds(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || n > 3600) throw new InvalidArgumentError("must be a number of seconds from 0 to 3600");
  return n;
}

/** `--num-layers` / `--topk`: an integer from 1 to 1024. */
export function parseRoutingDim(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || n < 1 || n > 1024) throw new InvalidArgumentError("must be an integer from 1 to 1024");
  return n;
}

/** Defaults of the flags that have one. */
export const RUN_DEFAULTS = Object.freeze({ batch: 16, cycles: 1, latencyMs: 50, toolCallFailureMode: "rollback" });

/** Largest accepted `--batch` (each trajectory holds its sessions, records and samples in memory). */
const MAX_BATCH = 4096;

/** `--batch`: an integer from 1 to {@link MAX_BATCH}. */
export function parseBatch(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1 || n > MAX_BATCH) {
    throw new InvalidArgumentError(`must be an integer from 1 to ${MAX_BATCH}`);
  }
  return n;
}

/** `--cycles`: an integer from 1 to 64. */
export function parseCycles(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || n < 1 || n > 64) throw new InvalidArgumentError("must be an integer from 1 to 64");
  return n;
}

/** `--latency-ms`: a finite number of milliseconds >= 0. */
export function parseLatencyMs(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || n > 600_000) throw new InvalidArgumentError("must be a number of milliseconds from 0 to 600000");
  return n;
}

/** `--backend`: one http(s) URL. */
export function parseUrl(value: string): string {
  const url = parseServerUrl(value);
  if (url === null) throw new InvalidArgumentError("must be an http(s) URL such as http://127.0.0.1:30000");
  return url;
}

/** `--v1` / `--v2`: one http(s) URL or a comma-separated list of them (several server instances). */
export function parseUrlList(value: string): string {
  const urls = parseServerUrlList(value);
  if (urls === null) throw new InvalidArgumentError("must be an http(s) URL or a comma-separated list of them");
  return urls.join(",");
}

/** `--hf-checkpoint`: an existing directory holding tokenizer.json. */
export function parseCheckpointDir(value: string): string {
  const dir = path.resolve(value);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InvalidArgumentError(`no such directory: ${dir}`);
  if (!existsSync(path.join(dir, "tokenizer.json"))) throw new InvalidArgumentError(`${dir} holds no tokenizer.json`);
  return dir;
}

/** `--json`: a file path whose directory exists. */
export function parseJsonPath(value: string): string {
  const file = path.resolve(value);
  const dir = path.dirname(file);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InvalidArgumentError(`the directory ${dir} does not exist`);
  if (existsSync(file) && statSync(file).isDirectory()) throw new InvalidArgumentError(`${file} is a directory`);
  return file;
}
