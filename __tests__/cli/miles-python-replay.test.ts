// The unseen corpus replayed through miles' own Python session servers (FastAPI, real transformers) against ours, on
// one mock backend, in both configurations (`_serve_session`'s checkpoint template and production's fixed template).
// Optional: needs a checkout of radixark/miles at 31f1ca96 (MILES_CHECKOUT) and a Python with its server packages.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import type { ReplayReport } from "../../src/cli/replay-report";
import { defaultTokenizerDirectory } from "../../src/tokenizer/load";
import { writeUnseenCorpus } from "../replay/support/unseen-corpus";
import { runCli, startCli, type RunningCli } from "./run-cli";

const PYTHON = process.env.MILES_PYTHON ?? "python3";
const MILES = process.env.MILES_CHECKOUT;
const LAUNCHER = path.join(__dirname, "..", "python", "serve_miles_session.py");
const MODULES = ["fastapi", "uvicorn", "httpx", "pydantic", "numpy", "transformers", "torch"];

/** Why miles' servers cannot run here, or null. */
function missing(): string | null {
  if (MILES === undefined || MILES.trim() === "")
    return "MILES_CHECKOUT is not set (a checkout of radixark/miles at 31f1ca96; MILES_PYTHON names the interpreter)";
  const probe = spawnSync(PYTHON, ["-c", `import ${MODULES.join(", ")}`], { encoding: "utf8" });
  if (probe.error) return `${PYTHON} is not available (${probe.error.message})`;
  if (probe.status !== 0) return `${PYTHON} lacks one of ${MODULES.join(", ")} (${probe.stderr.trim().split("\n").pop() ?? "import failed"})`;
  return null;
}

const why = missing();
if (why !== null) console.warn(`replay through miles' Python session servers skipped: ${why}`);
const describeWithMiles = why === null ? describe : describe.skip;

interface PythonServer {
  url: string;
  child: ChildProcessWithoutNullStreams;
}

function startPython(version: "v1" | "v2", config: "serve-session" | "production", backend: string): Promise<PythonServer> {
  const child = spawn(PYTHON, [LAUNCHER, MILES as string, version, config, backend, defaultTokenizerDirectory()], {
    env: { ...process.env, HF_HUB_OFFLINE: "1", TRANSFORMERS_OFFLINE: "1" },
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match !== null) resolve({ url: match[1], child });
    });
    child.once("exit", (code) => reject(new Error(`miles' ${version} server (${config}) exited with ${code} before listening\n${stderr}`)));
  });
}

describeWithMiles("the unseen corpus through miles' Python servers", () => {
  let mock: RunningCli;
  const python: Record<string, PythonServer> = {};
  let files: string[] = [];
  let dir = "";

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "session-parity-miles-replay-"));
    files = writeUnseenCorpus(dir, 46);
    mock = await startCli(["mock", "--port", "0"]);
    const started = await Promise.all(
      (["serve-session", "production"] as const).flatMap((config) =>
        (["v1", "v2"] as const).map(async (version) => [`${version} ${config}`, await startPython(version, config, mock.url)] as const),
      ),
    );
    for (const [key, server] of started) python[key] = server;
  }, 240_000);

  afterAll(async () => {
    for (const server of Object.values(python)) {
      const exited = new Promise((resolve) => server.child.once("exit", resolve));
      server.child.kill("SIGTERM");
      await exited;
    }
    await mock?.stop();
  });

  // tests/session_parity_utils.py::_serve_session runs the checkpoint's template; miles/utils/arguments.py installs the
  // fixed one for --tito-model qwen3 with --apply-chat-template-kwargs defaulting to {}
  const CONFIGS = {
    "serve-session": ["--chat-template", "checkpoint"],
    production: ["--chat-template-kwargs", "{}"],
  } as const;

  test.each([
    ["_serve_session's configuration", "serve-session", "ours v1 + Python v2", "--v2", "v2"],
    ["_serve_session's configuration", "serve-session", "Python v1 + ours v2", "--v1", "v1"],
    ["production configuration", "production", "ours v1 + Python v2", "--v2", "v2"],
    ["production configuration", "production", "Python v1 + ours v2", "--v1", "v1"],
  ] as const)(
    "%s, %s: PASS without retries and with a retry before every reply",
    async (_name, config, _pair, flag, version) => {
      const servers = ["--backend", mock.url, flag, python[`${version} ${config}`].url, ...CONFIGS[config]];
      for (const retries of [[], ["--retries", "5", "--retry-rate", "1"]]) {
        const json = path.join(dir, `${config}-${version}-${retries.length}.json`);
        const result = await runCli(["replay", ...files, ...servers, ...retries, "--json", json], { timeoutMs: 280_000 });
        const failing = (JSON.parse(readFileSync(json, "utf8")) as ReplayReport).rows.filter((row) => row.verdict.status !== "PASS");
        expect(failing.map((row) => `${row.index}: ${row.verdict.kind} ${row.verdict.cause}`)).toEqual([]);
        expect(result.stdout).toMatch(/PASS: 40\/40 conversations/);
        expect(result.code).toBe(0);
      }
    },
    600_000,
  );
});
