// The published package as a newcomer gets it: build, pack, install the tarball into an empty project, and run the
// README's jest.config.ts and example test there (plus its Vitest setup and a strict typecheck of the example).
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { readmeSnippets } from "./readme-snippets";
import { killAll, sh } from "./shell";

const ROOT = path.resolve(__dirname, "../..");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const MINUTE = 60_000;

jest.setTimeout(15 * MINUTE);

/** Environment of every child: no servers from this suite's global setup leak into the temp project. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false", NO_COLOR: "1" };
  delete env.FORCE_COLOR;
  for (const name of Object.keys(env)) if (name.startsWith("SESSION_PARITY_") || name.startsWith("JEST_")) delete env[name];
  return env;
}

let scratch: string;
let project: string;
let snippets: Map<string, string>;

beforeAll(async () => {
  snippets = readmeSnippets(path.join(ROOT, "README.md"));
  scratch = await mkdtemp(path.join(os.tmpdir(), "session-parity-pack-"));
  project = path.join(scratch, "project");

  const build = await sh(NPM, ["run", "build"], { cwd: ROOT, env: childEnv(), timeoutMs: 5 * MINUTE });
  if (build.code !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
  const pack = await sh(NPM, ["pack", "--json", "--pack-destination", scratch], { cwd: ROOT, env: childEnv(), timeoutMs: 2 * MINUTE });
  if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
  const [packed] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf("["))) as { filename: string; files: { path: string }[] }[];
  const tarball = path.join(scratch, packed.filename);
  const packedPaths = packed.files.map((file) => file.path);
  for (const required of ["package.json", "README.md", "jest-preset.js", "dist/src/index.js", "dist/src/cli/main.js", "dist/setup/setup.js", "dist/setup/vitest.mjs", "docs/PROTOCOL.md"]) {
    expect(packedPaths).toContain(required);
  }
  expect(packedPaths.some((file) => file.startsWith("__tests__/") || file.startsWith("src/"))).toBe(false);

  // An empty project: the tarball plus the test toolchain, at the versions this repository pins, from the local cache when it can.
  const manifest = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
  const tools = ["jest", "ts-jest", "typescript", "ts-node", "@types/jest", "@types/node", "vitest"].map((name) => `${name}@${manifest.devDependencies[name]}`);
  await sh("mkdir", ["-p", project], { cwd: scratch, timeoutMs: MINUTE });
  await writeFile(path.join(project, "package.json"), `${JSON.stringify({ name: "pack-smoke", version: "1.0.0", private: true }, null, 2)}\n`);
  const install = await sh(NPM, ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball, ...tools], { cwd: project, env: childEnv(), timeoutMs: 10 * MINUTE });
  if (install.code !== 0) throw new Error(`npm install failed:\n${install.stdout}\n${install.stderr}`);
  for (const [name, text] of snippets) await writeFile(path.join(project, name), text);
  // Not from the README: a strict tsconfig that typechecks the example test alone.
  const tsconfig = { compilerOptions: { strict: true, module: "commonjs", target: "ES2022", esModuleInterop: true, skipLibCheck: true, types: ["jest", "node"] }, files: ["parity.test.ts"] };
  await writeFile(path.join(project, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`);
  // The README's Vitest typings advice: "types": ["jest-session-parity/vitest"] with moduleResolution bundler.
  const vitestTsconfig = {
    compilerOptions: { strict: true, module: "esnext", moduleResolution: "bundler", target: "ES2022", skipLibCheck: true, noEmit: true, types: ["jest-session-parity/vitest", "node"] },
    files: ["vitest-bitwise.test.ts"],
  };
  await writeFile(path.join(project, "tsconfig.vitest.json"), `${JSON.stringify(vitestTsconfig, null, 2)}\n`);
});

afterAll(async () => {
  killAll();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

test("the README marks the files this test runs", () => {
  expect([...snippets.keys()].sort()).toEqual(["jest.config.ts", "jest.explicit.config.ts", "parity.test.ts", "vitest-bitwise.test.ts", "vitest.config.mts"]);
});

test.each(["jest.config.ts", "jest.explicit.config.ts"])("the README's example test passes against the installed tarball with its %s", async (config) => {
  const jest = await sh(process.execPath, [path.join(project, "node_modules/jest/bin/jest.js"), "--ci", "--colors=false", "--config", config, "parity.test.ts"], {
    cwd: project,
    env: childEnv(),
    timeoutMs: 5 * MINUTE,
  });
  const output = `${jest.stdout}\n${jest.stderr}`;
  expect({ code: jest.code, output }).toEqual({ code: 0, output: expect.stringContaining("Tests:       1 passed, 1 total") });
  expect(output).toContain("v2 drop_retries keeps the v1 training payload bit for bit");
});

test("the README's example typechecks under strict TypeScript with the package's matcher typings", async () => {
  const tsc = await sh(process.execPath, [path.join(project, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", "."], { cwd: project, env: childEnv(), timeoutMs: 3 * MINUTE });
  expect({ code: tsc.code, output: tsc.stdout + tsc.stderr }).toEqual({ code: 0, output: "" });
});

test("the README's Vitest example typechecks with the typings entry the README names", async () => {
  const tsc = await sh(process.execPath, [path.join(project, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.vitest.json"], { cwd: project, env: childEnv(), timeoutMs: 3 * MINUTE });
  expect({ code: tsc.code, output: tsc.stdout + tsc.stderr }).toEqual({ code: 0, output: "" });
});

test("the README's Vitest setup registers the matchers from the installed tarball", async () => {
  const vitest = await sh(process.execPath, [path.join(project, "node_modules/vitest/vitest.mjs"), "run", "--config", "vitest.config.mts", "vitest-bitwise"], { cwd: project, env: childEnv(), timeoutMs: 3 * MINUTE });
  const output = `${vitest.stdout}\n${vitest.stderr}`;
  expect({ code: vitest.code, output }).toEqual({ code: 0, output: expect.stringMatching(/Tests\s+\d+ passed/) });
});

test("the installed bin runs the parity proof", async () => {
  const bin = await sh(path.join(project, "node_modules/.bin/session-parity"), ["run", "--batch", "2", "--latency-ms", "0"], { cwd: project, env: childEnv(), timeoutMs: 3 * MINUTE });
  expect(bin.code).toBe(0);
  expect(bin.stdout).toMatch(/^PASS: 2\/2 trajectories/m);
});
