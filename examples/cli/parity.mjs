// Starts the mock backend and a v1 and a v2 session server as separate processes (port 0: each prints the URL it
// got), runs the parity check against them with `session-parity run`, stops them all and exits with run's status.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import * as path from "node:path";

const require = createRequire(import.meta.url);
const CLI = path.join(path.dirname(require.resolve("jest-session-parity/package.json")), "dist", "src", "cli", "main.js");
const started = [];

/** Starts `session-parity <args>` and resolves with the URL from its "listening on" line. */
function start(args) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  started.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const url = /listening on (http:\/\/[\d.]+:\d+)/.exec(out)?.[1];
      if (url !== undefined) resolve(url);
    });
    child.on("exit", (code) => reject(new Error(`session-parity ${args[0]} exited with ${code} before listening:\n${out}`)));
  });
}

let status = 2;
try {
  const backend = await start(["mock", "--port", "0", "--latency-ms", "0"]);
  const [v1, v2] = await Promise.all([
    start(["serve", "v1", "--backend", backend, "--port", "0"]),
    start(["serve", "v2", "--backend", backend, "--port", "0"]),
  ]);
  const run = spawn(process.execPath, [CLI, "run", "--batch", "2", "--v1", v1, "--v2", v2], { stdio: "inherit" });
  status = await new Promise((resolve) => run.on("exit", (code) => resolve(code ?? 2)));
} finally {
  for (const child of started) child.kill("SIGTERM");
}
process.exitCode = status;
