#!/usr/bin/env node
// Runs every benchmark under bench/ (or the ones named on the command line) in its own Node process, compiled first
// (as the package runs: no TypeScript compiler in the measured processes' time or memory). Never part of `npm test`.
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { copyAssets } = require("./copy-assets");

const root = path.join(__dirname, "..");
const benchDir = path.join(root, "bench");
const buildDir = path.join(root, ".bench-build");
const filter = process.argv.slice(2);
const files = fs
  .readdirSync(benchDir)
  .filter((f) => f.endsWith(".bench.ts"))
  // a name that is a whole benchmark's runs that one alone (`replay` is not also `routing-replay`); else a substring
  .filter(
    (f) =>
      filter.length === 0 || filter.some((name) => f === `${name}.bench.ts` || (!fs.existsSync(path.join(benchDir, `${name}.bench.ts`)) && f.includes(name))),
  )
  .sort();

fs.rmSync(buildDir, { recursive: true, force: true });
const compiled = spawnSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", path.join(root, "tsconfig.bench.json")], { stdio: "inherit" });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);
copyAssets(path.join(root, "src"), path.join(buildDir, "src"));

let failed = 0;
for (const file of files) {
  process.stdout.write(`\n=== ${file} ===\n`);
  const script = path.join(buildDir, "bench", file.replace(/\.ts$/, ".js"));
  const result = spawnSync(process.execPath, ["--expose-gc", "--max-old-space-size=8192", script], { stdio: "inherit", env: process.env });
  if (result.status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
