// Runs a command to completion in its own process group, so a timeout kills the command and everything it started.
// Used by the pack test for npm and the temp project's jest/vitest/tsc runs.
import { spawn } from "node:child_process";

/** A finished command. */
export interface ShellResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const running = new Set<number>();

/**
 * Runs `command args` in `cwd` and resolves when it exits (any status). After `timeoutMs` its whole process group
 * is killed and the promise rejects with its output so far.
 */
export function sh(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<ShellResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const pid = child.pid;
    if (pid !== undefined) running.add(pid);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      killGroup(pid);
      reject(new Error(`${command} ${args.join(" ")} timed out after ${options.timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      if (pid !== undefined) running.delete(pid);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      // The command is done; stop anything it left behind in its group.
      killGroup(pid);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Kills the process groups of every command still running (for afterAll). */
export function killAll(): void {
  for (const pid of [...running]) killGroup(pid);
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  running.delete(pid);
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // the group is already gone
  }
}
