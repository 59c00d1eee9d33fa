// The Jest reporter entry end to end: a child Jest run with two test files in two workers (one pair passing, one
// with a tampered token) writes one HTML page holding both checks, pointing at the failing test.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";

jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, "../..");
const PROJECT = path.join(__dirname, "reporter-project");

function runJest(configFile: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, TS_NODE_TRANSPILE_ONLY: "1" };
    for (const name of Object.keys(env)) if (name.startsWith("SESSION_PARITY_")) delete env[name];
    const child = spawn(process.execPath, [require.resolve("jest/bin/jest"), "--config", configFile, "--maxWorkers=2"], { cwd: ROOT, env });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), "session-parity-reporter-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

test("two workers' verdicts land in one page; the failing test is named and its first differing token marked", async () => {
  const outputFile = path.join(scratch, "parity-report.html");
  const configFile = path.join(scratch, "jest.config.json");
  await writeFile(
    configFile,
    JSON.stringify({
      rootDir: ROOT,
      roots: [PROJECT],
      testMatch: ["**/*.parity.ts"],
      testEnvironment: "node",
      transform: { "^.+\\.(t|j|mj)s$": ["ts-jest", { tsconfig: { allowJs: true, esModuleInterop: true, isolatedModules: true }, diagnostics: false }] },
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the preset is plain CommonJS without typings
      transformIgnorePatterns: (require("../../jest-preset.js") as { transformIgnorePatterns: string[] }).transformIgnorePatterns,
      moduleFileExtensions: ["ts", "js", "mjs", "cjs", "json"],
      setupFilesAfterEnv: [path.join(ROOT, "setup/setup.ts")],
      reporters: [[path.join(PROJECT, "reporter-shim.js"), { outputFile }]],
    }),
  );
  const result = await runJest(configFile);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(`session-parity: HTML report of 2 parity checks (1 failing) written to`);
  expect(existsSync(outputFile)).toBe(true);
  const html = await readFile(outputFile, "utf8");
  expect(html.match(/<section class="pair /g)).toHaveLength(2);
  expect(html).toContain("weather pair keeps parity (toHaveTrainingPayloadParity)");
  expect(html).toMatch(/<div class="origin">__tests__\/report\/reporter-project\/failing\.parity\.ts — this test failed<\/div>/);
  expect(html).toMatch(/<section class="pair fail" id="pair-0"/);
  expect(html).toMatch(/<span class="tok [a-z ]*diff first-diff" id="pair-0-first-diff"[^>]* data-i="300"/);
  expect(html).toContain("[training sample] v1 samples[0] (left) is not bitwise equal to v2 samples[0] (right)");
  expect(html).toContain("sample.tokens[300]");
});

test("the Vitest reporter entry writes the same page from a child Vitest run", async () => {
  const outputFile = path.join(scratch, "vitest-report.html");
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, PARITY_REPORT_FILE: outputFile };
    for (const name of Object.keys(env)) if (name.startsWith("SESSION_PARITY_")) delete env[name];
    const config = path.join(PROJECT, "vitest", "vitest.config.mts");
    const child = spawn(process.execPath, [path.join(ROOT, "node_modules/vitest/vitest.mjs"), "run", "--config", config], { cwd: ROOT, env });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
  expect(result.code).toBe(1);
  expect(result.stderr).toContain("session-parity: HTML report of 2 parity checks (1 failing) written to");
  const html = await readFile(outputFile, "utf8");
  expect(html.match(/<section class="pair /g)).toHaveLength(2);
  expect(html).toMatch(/<div class="origin">pair\.vparity\.ts — this test failed<\/div>/);
  expect(html).toMatch(/<span class="tok [a-z ]*diff first-diff" id="pair-\d-first-diff"[^>]* data-i="300"/);
});
