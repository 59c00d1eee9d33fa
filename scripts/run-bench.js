#!/usr/bin/env node
// Runs every benchmark under bench/ (or the ones named on the command line) in its own Node process, compiled first
// (as the package runs: no TypeScript compiler in the measured processes' time or memory). Never part of `npm test`.
"use strict";
const { spawn, spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { copyAssets } = require("./copy-assets");

const root = path.join(__dirname, "..");
const benchDir = path.join(root, "bench");
const buildDir = path.join(root, ".bench-build");
const outDir = path.join(root, ".bench-out");
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

/** Runs one compiled benchmark, printing its output as it comes and saving it for `npm run readme:figures`. */
function runOne(file) {
  return new Promise((resolve) => {
    const name = file.replace(/\.bench\.ts$/, "");
    const script = path.join(buildDir, "bench", file.replace(/\.ts$/, ".js"));
    const cpus = os.cpus();
    const header =
      `\`npm run bench ${name}\` on ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, on ${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown CPU"} ` +
      `(Node ${process.version}; load average ${os.loadavg()[0].toFixed(2)} at its start):`;
    const child = spawn(process.execPath, ["--expose-gc", "--max-old-space-size=8192", script], { stdio: ["inherit", "pipe", "inherit"], env: process.env });
    let text = "";
    child.stdout.on("data", (chunk) => {
      process.stdout.write(chunk);
      text += chunk;
    });
    child.once("exit", (code) => {
      // Only a finished run is kept as the benchmark's capture (the docs show it through `npm run readme:figures`).
      if (code === 0) {
        fs.mkdirSync(outDir, { recursive: true });
        fs.writeFileSync(path.join(outDir, `bench-${name}.txt`), `${header}\n${text}`);
      }
      resolve(code);
    });
  });
}

(async () => {
  let failed = 0;
  for (const file of files) {
    process.stdout.write(`\n=== ${file} ===\n`);
    if ((await runOne(file)) !== 0) failed += 1;
  }
  process.exit(failed === 0 ? 0 : 1);
})();
