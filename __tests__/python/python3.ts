// Runs the reference Python (python3 with the standard library, optionally jinja2) from tests, once per batch.
// Tests that need it skip with a console warning naming what is missing, so a machine without Python stays green.
import { spawnSync } from "node:child_process";
import * as path from "node:path";

/** Why python3 (with `modules`) cannot run here, or null when it can. */
export function pythonMissing(modules: readonly string[] = []): string | null {
  const probe = spawnSync("python3", ["-c", `import json, struct${modules.map((m) => `, ${m}`).join("")}`], { encoding: "utf8" });
  if (probe.error) return `python3 is not available (${probe.error.message})`;
  if (probe.status !== 0) return `python3 lacks ${modules.join(", ")} (${probe.stderr.trim().split("\n").pop() ?? "import failed"})`;
  return null;
}

/** Runs `script` (a file next to this module) with `input` on stdin; returns stdout, throws with stderr on failure. */
export function runPythonScript(script: string, input: string | Buffer): string {
  const result = spawnSync("python3", [path.join(__dirname, script)], { input, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`python3 ${script} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}
