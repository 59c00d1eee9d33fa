// Spawns `session-parity` from the sources (Sucrase's require hook) and collects its exit status and output.
// The child gets no SESSION_PARITY_* variables, so the global setup's servers never leak into a run under test.
import { spawn } from "node:child_process";
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
