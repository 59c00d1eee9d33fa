// `session-parity run` in-process (executeRun / runParity): start-up errors with status 2 naming the flag, variable
// or server, the progress bar on a TTY-like stderr, and a multi-cycle run; the spawned-process suite covers the rest.
import { mkdtemp, rm } from "node:fs/promises";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { TOOL_CALL_FAILURE_MODES } from "../../src/agent";
import { startMockBackend, weatherScript } from "../../src/backend";
import { CliExit, executeRun, RUN_DEFAULTS, runParity, type RunCommandOptions } from "../../src/cli";
import { weatherRecordCount } from "../../src/matchers";
import { startSessionServer } from "../../src/server";
import { retokenizingV2Policy } from "../matchers/retokenizing-server";

jest.setTimeout(120_000);

const options = (extra: Partial<RunCommandOptions> = {}): RunCommandOptions => ({ ...RUN_DEFAULTS, batch: 1, latencyMs: 0, ...extra });

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The CliExit a promise rejects with (fails the test when it resolves or rejects with something else). */
async function exitOf(promise: Promise<unknown>): Promise<CliExit> {
  const error = await promise.then(
    () => new Error("expected a CliExit, but the run succeeded"),
    (reason: unknown) => reason,
  );
  if (!(error instanceof CliExit)) throw error;
  return error;
}

describe("start-up errors exit 2 and name what is at fault", () => {
  test.each(["v1", "v2"] as const)("an unreachable --%s names the server, the flag and the URL", async (version) => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const error = await exitOf(runParity(options({ [version]: url }), { env: {} }));
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(new RegExp(`^cannot reach the ${version} session server at ${url.replace(/\./g, "\\.")} \\(--${version}\\): .*ECONNREFUSED`));
  });

  test("one dead instance in a --v1 list is named alone", async () => {
    const dead = `http://127.0.0.1:${await closedPort()}`;
    const error = await exitOf(runParity(options({ v1: `${dead},${dead}` }), { env: {} }));
    expect(error.message).toContain(`cannot reach the v1 session server at ${dead} (--v1)`);
  });

  test("a malformed variable is named with its value", async () => {
    const error = await exitOf(runParity(options(), { env: { SESSION_PARITY_V2_URL: "localhost:8002" } }));
    expect(error).toMatchObject({
      exitCode: 2,
      message: 'SESSION_PARITY_V2_URL holds "localhost:8002", which must be an http(s) URL or a comma-separated list of them',
    });
  });

  test("a tokenizer checkpoint from the variable that cannot be loaded names the variable and the directory", async () => {
    const error = await exitOf(runParity(options(), { env: { SESSION_PARITY_HF_CHECKPOINT: "no/such/checkpoint" } }));
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(/^could not start the servers \(tokenizer from SESSION_PARITY_HF_CHECKPOINT no\/such\/checkpoint\): .*no\/such\/checkpoint/);
  });
});

describe("--message-matcher / SESSION_PARITY_MESSAGE_MATCHER", () => {
  test("a name that is no built-in, from the variable, stops the start naming the variable and the choices", async () => {
    const error = await exitOf(runParity(options(), { env: { SESSION_PARITY_MESSAGE_MATCHER: "fuzzy" } }));
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(
      /^could not start the servers: .*SESSION_PARITY_MESSAGE_MATCHER must name a built-in message matcher \(strict, loose_tool_call, split_assistant_turn, role_content_only\), got "fuzzy"/,
    );
  });

  test("the flag wins over the variable, and the weather agent's exact replays keep parity under split_assistant_turn", async () => {
    const report = await runParity(options({ messageMatcher: "split_assistant_turn" }), { env: { SESSION_PARITY_MESSAGE_MATCHER: "fuzzy" } });
    expect(report.trajectories[0].parity.pass).toBe(true);
  });
});

describe("executeRun", () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), "session-parity-execute-"));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  test("on a TTY stderr the bar counts both versions' trajectories and is erased before the report", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const { exitCode, report } = await executeRun(options({ batch: 2 }), {
      out: { write: (chunk: string) => out.push(chunk) },
      err: { isTTY: true, columns: 80, write: (chunk: string) => err.push(chunk) },
      env: {},
    });
    expect(exitCode).toBe(0);
    expect(report.summary).toEqual({
      trajectories: 2,
      passed: 2,
      failed: 0,
      pass: true,
      serverProblems: 0,
      firstServerProblem: null,
      configurationProblem: false,
    });
    // eslint-disable-next-line no-control-regex -- the progress line's terminal escape is under test
    expect(err[0]).toMatch(/^\r\x1b\[2K\[-+\] 0\/4 trajectories {2}\d+\.\d s$/);
    // eslint-disable-next-line no-control-regex -- the progress line's terminal escape is under test
    expect(err).toContainEqual(expect.stringMatching(/^\r\x1b\[2K\[#+\] 4\/4 trajectories {2}\d+\.\d s$/));
    expect(err[err.length - 1]).toBe("\r\x1b[2K");
    expect(out.join("")).toMatch(/^PASS: 2\/2 trajectories/m);
  });

  test("two cycles: 14 requests per run, the two-cycle retry tree and 10 records checked, sample parity judged", async () => {
    const out: string[] = [];
    const { exitCode, report } = await executeRun(options({ cycles: 2 }), {
      out: { write: (chunk: string) => out.push(chunk) },
      err: { write: () => true },
      env: {},
    });
    expect(exitCode).toBe(0);
    expect(report.runs.map((run) => run.requests)).toEqual([14, 14]);
    expect(report.trajectories[0].topology?.pass).toBe(true);
    expect(report.trajectories[0].parity.pass).toBe(true);
    expect(report.timings.floorMs).toBe(0);
    expect(out.join("")).toMatch(/^ +0 {2}pass {4}pass {6}10\/10 +14\/14 /m);
  });

  test.each(TOOL_CALL_FAILURE_MODES)("--cycles 3 --tool-call-failure-mode %s --verify-gate: tree, counters and gate pass", async (mode) => {
    const out: string[] = [];
    const { exitCode, report } = await executeRun(options({ batch: 2, cycles: 3, toolCallFailureMode: mode, verifyGate: true }), {
      out: { write: (chunk: string) => out.push(chunk) },
      err: { write: () => true },
      env: {},
    });
    expect(exitCode).toBe(0);
    expect(report.options).toMatchObject({ cycles: 3, toolCallFailureMode: mode, verifyGate: true });
    expect(report.trajectories.every((trajectory) => trajectory.topology?.pass === true && trajectory.parity.pass)).toBe(true);
    expect(report.runs.every((run) => run.records === weatherRecordCount(3, mode))).toBe(true);
    expect(report.gate).toEqual({ v1: { pass: true, failures: [] }, v2: { pass: true, failures: [] } });
    expect(out.join("")).toContain("Session-verify gate (--verify-gate):\n  v1  PASS\n  v2  PASS");
  });

  test("--verify-gate against a v2 server that re-tokenizes assistant turns fails, naming assistant_text and its span", async () => {
    const backend = await startMockBackend({ process: weatherScript });
    const planted = await startSessionServer({ version: "v2", backendUrl: backend.url, policy: retokenizingV2Policy(), logger: { warn: () => undefined } });
    try {
      const out: string[] = [];
      const { exitCode, report } = await executeRun(options({ batch: 2, cycles: 3, backend: backend.url, v2: planted.url, verifyGate: true }), {
        out: { write: (chunk: string) => out.push(chunk) },
        err: { write: () => true },
        env: {},
      });
      expect(exitCode).toBe(1);
      expect(report.gate?.v1.pass).toBe(true);
      expect(report.gate?.v2.failures.map((failure) => failure.part)).toEqual(["assistant_text ratio"]);
      expect(out.join("")).toMatch(
        /^ {6}\[assistant_text ratio\] assistant_text mismatch ratio 2\/2=1\.000 exceeds the qwen3 threshold 0\.25:\n {10}- sample 0 \(v2, session \w+\): assistant_text at token span \[\d+, \d+\)/m,
      );
    } finally {
      await planted.close();
      await backend.close();
    }
  });

  test("a --json file that cannot be written exits 2 after the report was printed", async () => {
    const out: string[] = [];
    const file = path.join(scratch, "gone", "report.json");
    const error = await exitOf(
      executeRun(options({ json: file }), { out: { write: (chunk: string) => out.push(chunk) }, err: { write: () => true }, env: {} }),
    );
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(new RegExp(`^cannot write the --json report to ${file.replace(/[.\\/]/g, "\\$&")}: ENOENT`));
    expect(out.join("")).toMatch(/^PASS: 1\/1 trajectory/m);
  });
});
