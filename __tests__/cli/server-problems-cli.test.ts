// ERROR is not FAIL, from a user's shell: a backend given with /v1, a backend that dies under running servers, a
// misspelt command, a closed stdout, and servers started a moment after the command that needs them. Real processes.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { CliExit, RUN_DEFAULTS, runParity, type RunCommandOptions } from "../../src/cli";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import { startRawBackend } from "../server/helpers";
import { cleanEnv, freePort, FROM_SOURCES, MAIN, ROOT, runCli, startCli } from "./run-cli";

jest.setTimeout(120_000);

const QUIET = { warn: () => undefined };

/** The table rows of a `run` report (the lines under the dashes, up to the first blank line). */
function tableRows(stdout: string): string[] {
  const lines = stdout.split("\n");
  const start = lines.findIndex((line) => /^-+ {2}-+/.test(line));
  const rows: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === "") break;
    rows.push(line);
  }
  return rows;
}

describe("a backend URL ending in /v1", () => {
  test("answering 404 on /v1/health: exit 2 before any trajectory, naming the fix", async () => {
    const mock = await startMockBackend({ process: weatherScript });
    try {
      const result = await runCli(["run", "--batch", "1", "--backend", `${mock.url}/v1`]);
      expect(result.code).toBe(2);
      expect(result.stdout).not.toContain("FAIL");
      expect(result.stderr).toContain(`cannot use the backend at ${mock.url}/v1 (--backend): GET /v1/health answered 404`);
      expect(result.stderr).toContain(
        `the URL ends in /v1, but /health, /generate and /v1/chat/completions are added to the base URL: pass ${mock.url} instead`,
      );
    } finally {
      await mock.close();
    }
  });

  test("whose /health answers but whose chat route is 404: ERROR rows, only the cause, exit 2", async () => {
    // A proxy that answers /v1/health (so the probe passes) and 404 everywhere else, as a wrong base path does.
    const proxy = await startRawBackend((req) => (req.url === "/v1/health" ? { status: 200, body: '{"status":"ok"}' } : { status: 404, body: "Not Found" }));
    try {
      const result = await runCli(["run", "--batch", "2", "--backend", `${proxy.url}/v1`, "--latency-ms", "0"]);
      expect(result.code).toBe(2);
      expect(
        tableRows(result.stdout).map((row) =>
          row
            .trim()
            .split(/\s{2,}/)
            .slice(1, 3),
        ),
      ).toEqual([
        ["ERROR", "-"],
        ["ERROR", "-"],
      ]);
      expect(result.stdout).not.toContain("FAIL");
      expect(result.stdout).not.toContain("record count");
      expect(result.stdout).toMatch(
        /\[v1 run\] agent failed for session [0-9a-f]+ on http:\/\/127\.0\.0\.1:\d+: weather agent: initial chat call failed \(status 404\): Not Found\n/,
      );
      const last = result.stdout.trimEnd().split("\n").pop();
      expect(last).toMatch(/^ERROR: 4 of 4 runs failed on a server problem, so their payloads were never compared \(.*\)\. First cause: trajectory 0 \(v1\): /);
      expect(
        last?.endsWith(
          `(status 404): Not Found (--backend the URL ends in /v1, but /health, /generate and /v1/chat/completions are added to the base URL: pass ${proxy.url} instead)`,
        ),
      ).toBe(true);
    } finally {
      await proxy.close();
    }
  });
});

describe("a backend that dies while the servers are up", () => {
  let mock: MockBackend;
  let v1: RunningSessionServer;
  let v2: RunningSessionServer;
  beforeAll(async () => {
    mock = await startMockBackend({ process: weatherScript });
    v1 = await startSessionServer({ version: "v1", backendUrl: mock.url, logger: QUIET });
    v2 = await startSessionServer({ version: "v2", backendUrl: mock.url, logger: QUIET });
    await mock.close();
  });
  afterAll(async () => {
    await Promise.all([v1.close(), v2.close()]);
  });

  test("every row is ERROR with the cause, no difference is listed, exit 2, the closing line last", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "session-parity-dead-"));
    const json = path.join(dir, "r.json");
    const result = await runCli(["run", "--batch", "2", "--v1", v1.url, "--v2", v2.url, "--json", json]);
    expect(result.code).toBe(2);
    const rows = tableRows(result.stdout);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatch(/^\s+\d {2}ERROR {3}- /);
    expect(result.stdout).toContain("Server problems:\nTrajectory 0: ERROR, the payloads were never compared\n  [v1 run] agent failed");
    expect(result.stdout).toContain("(status 502)");
    expect(result.stdout).not.toMatch(/FAIL|differences in total|missing on the left/);
    const lines = result.stdout.split("\n").filter((line) => line !== "");
    expect(lines.at(-2)).toBe(`Full report written to ${json}`);
    expect(lines.at(-1)).toMatch(/^ERROR: 4 of 4 runs failed on a server problem/);
    const report = JSON.parse(readFileSync(json, "utf8")) as { summary: { serverProblems: number }; trajectories: { error: string | null }[] };
    expect(report.summary.serverProblems).toBe(4);
    expect(report.trajectories.every((trajectory) => trajectory.error?.startsWith("v1 run: agent failed"))).toBe(true);
  });
});

test("a misspelt command exits 2 whatever flags follow it, and never prints the version", async () => {
  const result = await runCli(["serv", "--version", "v1", "--backend", "http://127.0.0.1:9"]);
  expect(result.code).toBe(2);
  expect(result.stdout).toBe("");
  expect(result.stderr).toContain("unknown command 'serv'");
});

test("a closed stdout ends the run quietly with its normal exit status", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "session-parity-epipe-"));
  const json = path.join(dir, "r.json");
  const child = spawn(process.execPath, [...FROM_SOURCES, MAIN, "run", "--batch", "1", "--latency-ms", "0", "--json", json], {
    cwd: ROOT,
    env: cleanEnv(),
  });
  // The reader is gone before the report is written, as with `| head -4` once head has its lines.
  child.stdout.destroy();
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  expect(stderr).toBe("");
  expect(code).toBe(0);
  expect((JSON.parse(readFileSync(json, "utf8")) as { summary: { pass: boolean } }).summary.pass).toBe(true);
});

describe("servers started a moment after the command that needs them", () => {
  test("serve waits for its backend, saying what it waits for", async () => {
    const port = await freePort();
    const stand: { mock: Promise<MockBackend> | null } = { mock: null };
    const serve = await startCli(["serve", "v1", "--backend", `http://127.0.0.1:${port}`, "--port", "0", "--quiet"], {
      onStderr: (text) => {
        // Started only once serve says it is waiting: the order a pasted `mock & serve &` can end up in.
        if (stand.mock === null && text.includes("waiting up to 30 s (--wait) for the backend")) {
          stand.mock = startMockBackend({ process: weatherScript, port });
        }
      },
    });
    try {
      expect(serve.stderr()).toMatch(
        new RegExp(
          `^session-parity: waiting up to 30 s \\(--wait\\) for the backend at http://127\\.0\\.0\\.1:${port} to answer GET /health \\(.*ECONNREFUSED`,
        ),
      );
      expect(await serve.stop()).toBe(0);
    } finally {
      await serve.stop();
      await (await stand.mock)?.close();
    }
  });

  test("--wait 0 probes once and exits 2 naming the backend", async () => {
    const port = await freePort();
    const result = await runCli(["serve", "v2", "--backend", `http://127.0.0.1:${port}`, "--wait", "0"]);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain("waiting");
    expect(result.stderr).toContain(`cannot reach the backend at http://127.0.0.1:${port} (--backend): connect ECONNREFUSED`);
  });

  test("run waits for each given server in turn", async () => {
    const mock = await startMockBackend({ process: weatherScript });
    const ports = { v1: await freePort(), v2: await freePort() };
    const servers: Promise<RunningSessionServer>[] = [];
    const notices: string[] = [];
    const options: RunCommandOptions = { ...RUN_DEFAULTS, batch: 1, v1: `http://127.0.0.1:${ports.v1}`, v2: `http://127.0.0.1:${ports.v2}` };
    try {
      const report = await runParity(options, {
        env: {},
        notice: (line) => {
          notices.push(line);
          const version = line.includes("v1 session server") ? "v1" : "v2";
          servers.push(startSessionServer({ version, backendUrl: mock.url, port: ports[version], logger: QUIET }));
        },
      });
      expect(report.summary.pass).toBe(true);
      expect(notices).toEqual([
        expect.stringMatching(
          /^session-parity: waiting up to 30 s \(--wait\) for the v1 session server at http:\/\/127\.0\.0\.1:\d+ \(--v1\) to answer GET \/health/,
        ),
        expect.stringMatching(
          /^session-parity: waiting up to 30 s \(--wait\) for the v2 session server at http:\/\/127\.0\.0\.1:\d+ \(--v2\) to answer GET \/health/,
        ),
      ]);
    } finally {
      for (const server of await Promise.all(servers)) await server.close();
      await mock.close();
    }
  });
});

describe("one session server given, the other started here", () => {
  test("without --backend it is refused: the started one could not share the given one's backend", async () => {
    const mock = await startMockBackend({ process: weatherScript });
    const v1 = await startSessionServer({ version: "v1", backendUrl: mock.url, logger: QUIET });
    try {
      const error = await runParity({ ...RUN_DEFAULTS, batch: 1, v1: v1.url }, { env: {} }).then(
        () => null,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(CliExit);
      expect((error as CliExit).exitCode).toBe(2);
      expect((error as CliExit).message).toBe(
        "--v1 was given alone: the v2 session server started here would call a mock backend of its own, which your server does not call, " +
          "so their payloads could never match; pass --backend <the backend your server calls> (the v2 server started here uses it too), or give --v1 and --v2 both",
      );
    } finally {
      await v1.close();
      await mock.close();
    }
  });

  test("with --backend the header says the started side runs on it", async () => {
    const mock = await startMockBackend({ process: weatherScript });
    // The embedded v1 renders with the fixture's kwargs ({"enable_thinking": false}); a server alone defaults to
    // miles' {} (README, "Kwargs"), so the user's v2 is started with the fixture's to be comparable.
    const v2 = await startSessionServer({ version: "v2", backendUrl: mock.url, logger: QUIET, chatTemplateKwargs: { enable_thinking: false } });
    try {
      const result = await runCli(["run", "--batch", "1", "--backend", mock.url, "--v2", v2.url]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/\n {2}v1 {7}http:\/\/127\.0\.0\.1:\d+ \(embedded, on the backend above; your v2 server must call that backend too\)\n/);
    } finally {
      await v2.close();
      await mock.close();
    }
  });
});
