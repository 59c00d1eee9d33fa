#!/usr/bin/env node
// `npm run parity`: the main job, `session-parity run`, from the compiled JavaScript (no TypeScript compiler at start).
// `npm ci` builds dist/ through the `prepare` script; this rebuilds first when a source is newer than the build.
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.join(__dirname, "..");
const main = path.join(root, "dist", "src", "cli", "main.js");

/** The newest modification time under `dir` (files only), or 0 when it does not exist. */
function newest(dir) {
  let latest = 0;
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const file = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(file) : fs.statSync(file).mtimeMs);
  }
  return latest;
}

/** True when dist/ is missing or older than a source, a setup entry or the build's configuration. */
function stale() {
  if (!fs.existsSync(main)) return true;
  const built = fs.statSync(main).mtimeMs;
  const sources = Math.max(
    newest(path.join(root, "src")),
    newest(path.join(root, "setup")),
    ...["tsconfig.json", "tsconfig.build.json", "package.json"].map((file) => fs.statSync(path.join(root, file)).mtimeMs),
  );
  return sources > built;
}

if (stale()) {
  process.stderr.write("session-parity: the compiled files are missing or older than the sources; building them first (npm run build)\n");
  const build = spawnSync(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 2);
}
require(main).runCli([process.argv[0], main, "run", ...process.argv.slice(2)]);
