#!/usr/bin/env node
// Runs every benchmark under bench/ (or the ones named on the command line) in its own Node process.
// Benchmarks print side-by-side ratios; they are never part of `npm test`.
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const benchDir = path.join(__dirname, "..", "bench");
const filter = process.argv.slice(2);
const files = fs
  .readdirSync(benchDir)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => filter.length === 0 || filter.some((name) => f.includes(name)))
  .sort();

let failed = 0;
for (const file of files) {
  process.stdout.write(`\n=== ${file} ===\n`);
  const result = spawnSync(
    process.execPath,
    ["--expose-gc", "--max-old-space-size=8192", "-r", "ts-node/register/transpile-only", path.join(benchDir, file)],
    { stdio: "inherit", env: { ...process.env, TS_NODE_PROJECT: path.join(__dirname, "..", "tsconfig.json") } },
  );
  if (result.status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
