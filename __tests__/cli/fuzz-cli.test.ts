// Fuzzing one's own servers from the shell, as documented: `session-parity mock`, two `serve`, then `fuzz --backend
// --v1 --v2`. A v2 started with a keep-all picker is caught (exit 1) and `fuzz --replay` reproduces it. Real processes.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { runCli, startCli, type RunningCli } from "./run-cli";

jest.setTimeout(240_000);

/** The picker that keeps every leaf, superseded retries included (a planted design bug). */
const KEEP_ALL = "__tests__/server/v2/support/hook-fixtures.ts#keepAll";

let mock: RunningCli;
let v1: RunningCli;
let v2: RunningCli;

beforeAll(async () => {
  mock = await startCli(["mock", "--port", "0"]);
  [v1, v2] = await Promise.all([
    startCli(["serve", "v1", "--backend", mock.url, "--port", "0", "--quiet"]),
    startCli(["serve", "v2", "--backend", mock.url, "--port", "0", "--quiet", "--sample-picker", KEEP_ALL]),
  ]);
});

afterAll(async () => {
  await Promise.all([v1?.stop(), v2?.stop()]);
  await mock?.stop();
});

test("fuzz against the servers finds the kept retry leaves (exit 1), and --replay reproduces them", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "session-parity-fuzz-"));
  const file = path.join(dir, "counterexample.json");
  const servers = ["--backend", mock.url, "--v1", v1.url, "--v2", v2.url];
  const found = await runCli(["fuzz", ...servers, "--seed", "7", "--runs", "64", "--max-steps", "6", "--json", file], { timeoutMs: 200_000 });
  expect(found.stderr).toBe("");
  expect(found.code).toBe(1);
  expect(found.stdout).toMatch(/^FAIL: /);
  expect(found.stdout).toContain("v2 keeps several leaves");
  expect(found.stdout).toContain(`Counterexample written to ${file}; replay it with: session-parity fuzz --replay ${file}`);
  const written = JSON.parse(readFileSync(file, "utf8")) as { counterexample: { failures: { message: string }[] } };
  expect(written.counterexample.failures.map((failure) => failure.message).join("\n")).toMatch(/the picker kept leaves/);

  const replayed = await runCli(["fuzz", ...servers, "--replay", file]);
  expect(replayed.stderr).toBe("");
  expect(replayed.code).toBe(1);
  expect(replayed.stdout).toMatch(new RegExp(`^FAIL: replayed ${file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} \\(`));
  expect(replayed.stdout).toContain("the picker kept leaves");
});

test("the same fuzz against the reference picker passes; a v2 whose backend is gone is exit 2, not a counterexample", async () => {
  const reference = await startCli(["serve", "v2", "--backend", mock.url, "--port", "0", "--quiet"]);
  try {
    const passed = await runCli(["fuzz", "--backend", mock.url, "--v1", v1.url, "--v2", reference.url, "--seed", "7", "--runs", "8", "--max-steps", "4"]);
    expect(passed.code).toBe(0);
    expect(passed.stdout).toMatch(/^PASS: /);
  } finally {
    await reference.stop();
  }
  const gone = await startCli(["mock", "--port", "0"]);
  const orphan = await startCli(["serve", "v2", "--backend", gone.url, "--port", "0", "--quiet"]);
  try {
    await gone.stop();
    // The plans go to the live mock, but the v2 server calls the dead one: its chat calls answer 502.
    const failed = await runCli(["fuzz", "--backend", mock.url, "--v1", v1.url, "--v2", orphan.url, "--seed", "7", "--runs", "4"]);
    expect(failed.code).toBe(2);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toMatch(new RegExp(`^session-parity: the v2 session server at ${orphan.url} answered chat call 0 with status 502: .*ECONNREFUSED`));
    const unreachable = await runCli(["fuzz", "--backend", gone.url, "--v1", v1.url, "--v2", orphan.url, "--wait", "0"]);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toContain(`cannot reach the mock backend at ${gone.url} (--backend): connect ECONNREFUSED`);
  } finally {
    await orphan.stop();
  }
});
