// The parity benchmark's handle on one party child process (bench/parity-party-process.ts): start it, ask it for CPU
// and peak RSS, reset its backend log, stop it. The child is killed whenever this process ends.
import { spawn, type ChildProcess } from "node:child_process";
import * as path from "node:path";
import type { ChildStats, PartyRole, PartyUrls } from "./parity-party-process";

/** How long the child may take to load the tokenizer and start listening. */
const START_TIMEOUT_MS = 120_000;
/** How long the child may take to answer or to stop before it is killed. */
const STOP_TIMEOUT_MS = 10_000;

/** A running party child. */
export interface PartyProcess {
  /** Process id of the child. */
  readonly pid: number;
  /** What the party serves (its URL, or the v1/v2 URLs of the servers party). */
  readonly urls: PartyUrls;
  /** The child's CPU time so far and its peak RSS since the previous call. */
  stats(): Promise<ChildStats>;
  /** Clears a mock backend's request log (earlier bodies would only add heap to trace); no-op for other parties. */
  reset(): Promise<void>;
  /** Stops the child (SIGTERM, then SIGKILL after a grace period). Idempotent. */
  stop(): Promise<void>;
}

/** Starts one party (see {@link PartyRole}) in a child process with the same runtime flags as this one. */
export async function startPartyProcess(role: PartyRole, argument: string): Promise<PartyProcess> {
  // The same kind of file as this one: .ts under ts-node, .js when the benchmarks run compiled.
  const script = path.join(__dirname, `parity-party-process${path.extname(__filename)}`);
  // BENCH_CPU_PROF_DIR=<dir>: each party writes a V8 CPU profile into <dir>/<role> when it stops.
  const profileDir = process.env.BENCH_CPU_PROF_DIR;
  const profile = profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${path.join(profileDir, role)}`];
  const child = spawn(process.execPath, [...process.execArgv, ...profile, script, role, argument], {
    stdio: ["pipe", "pipe", "inherit"],
    env: process.env,
  });
  const killOnExit = (): void => {
    child.kill("SIGKILL");
  };
  process.once("exit", killOnExit);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => process.off("exit", killOnExit));

  const lines = readLines(child);
  let first: string;
  try {
    first = await withTimeout(lines.next(), START_TIMEOUT_MS, `the ${role} child did not print its URL`);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  const urls = JSON.parse(first) as PartyUrls;

  const ask = async <T>(command: string): Promise<T> => {
    child.stdin?.write(`${command}\n`);
    return JSON.parse(await withTimeout(lines.next(), STOP_TIMEOUT_MS, `the ${role} child did not answer ${command}`)) as T;
  };
  let stopping: Promise<void> | undefined;
  return {
    pid: child.pid as number,
    urls,
    stats: () => ask<ChildStats>("stats"),
    reset: async () => {
      await ask<{ ok: boolean }>("reset");
    },
    stop: () => {
      stopping ??= (async () => {
        child.stdin?.end();
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}

/** Lines of the child's stdout, one promise per line; rejects once the child exits without one. */
function readLines(child: ChildProcess): { next(): Promise<string> } {
  const ready: string[] = [];
  const waiting: { resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  let buffered = "";
  let ended: Error | null = null;
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const waiter = waiting.shift();
      if (waiter) waiter.resolve(line);
      else ready.push(line);
    }
  });
  child.once("exit", (code, signal) => {
    ended = new Error(`the party child exited (code ${String(code)}, signal ${String(signal)})`);
    for (const waiter of waiting.splice(0)) waiter.reject(ended);
  });
  return {
    next() {
      const line = ready.shift();
      if (line !== undefined) return Promise.resolve(line);
      if (ended) return Promise.reject(ended);
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
  };
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${message} within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
