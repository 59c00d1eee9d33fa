// Spawns `session-parity` from the sources (Sucrase's require hook) and collects its exit status and output.
// The child gets no SESSION_PARITY_* variables, so the global setup's servers never leak into a run under test.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type AddressInfo } from "node:net";
import * as path from "node:path";

/** Repository root. */
export const ROOT = path.resolve(__dirname, "../..");

/** The CLI entry point (source). */
export const MAIN = path.join(ROOT, "src/cli/main.ts");

/**
 * Node flags that run the TypeScript sources in a child process. Sucrase's hook only strips types (the type check
 * is `npm run typecheck`); a spawned CLI starts in about a third of the CPU that ts-node's transpile-only mode takes.
 */
export const FROM_SOURCES: readonly string[] = ["-r", require.resolve("sucrase/register/ts")];

/** What a finished CLI process left behind. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The current environment without the variables that point a run at existing servers. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, TS_NODE_TRANSPILE_ONLY: "1", ...extra };
  for (const name of Object.keys(env)) if (name.startsWith("SESSION_PARITY_") && !(name in extra)) delete env[name];
  return env;
}

/** Runs `session-parity <args>` to completion; kills it (and fails) after `timeoutMs`. */
export function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...FROM_SOURCES, MAIN, ...args], { cwd: ROOT, env: options.env ?? cleanEnv() });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`session-parity ${args.join(" ")} did not exit within ${options.timeoutMs ?? 90_000} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, options.timeoutMs ?? 90_000);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A long-running `session-parity` process (mock, serve) that printed the URL it listens on. */
export interface RunningCli {
  url: string;
  child: ChildProcess;
  /** What it wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
}

/**
 * Spawns `session-parity <args>` and resolves once it prints `listening on <url>`; rejects (with its stderr) when
 * it exits first. `onStderr` sees every stderr chunk (e.g. to react to a "waiting" line).
 */
export function startCli(args: string[], options: { env?: NodeJS.ProcessEnv; onStderr?: (text: string) => void } = {}): Promise<RunningCli> {
  const child = spawn(process.execPath, [...FROM_SOURCES, MAIN, ...args], { cwd: ROOT, env: options.env ?? cleanEnv() });
  let stdout = "";
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    options.onStderr?.(stderr);
  });
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match !== null)
        resolve({
          url: match[1],
          child,
          stderr: () => stderr,
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
            return exited;
          },
        });
    });
    void exited.then((code) => reject(new Error(`session-parity ${args.join(" ")} exited with ${code} before listening\n${stderr}`)));
  });
}

/** A loopback port that was free a moment ago (for a server that must be started on a port named in advance). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
