// Ours against miles' own Python session servers (FastAPI, real transformers), side by side on one mock backend, in
// both configurations: `_serve_session`'s (checkpoint template) and production's (fixed template), both mixed pairings.
// Optional: needs a checkout of radixark/miles at 31f1ca96 (MILES_CHECKOUT) and a Python with its server packages.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as path from "node:path";
import { defaultTokenizerDirectory } from "../../src/tokenizer/load";
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
if (why !== null) console.warn(`miles' Python session servers cross-check skipped: ${why}`);
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

describeWithMiles("miles' Python servers side by side with ours", () => {
  let mock: RunningCli;
  const python: Record<string, PythonServer> = {};

  beforeAll(async () => {
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

  const run = (args: string[]) => runCli(["run", "--batch", "2", "--backend", mock.url, ...args], { timeoutMs: 120_000 });

  // mirrors tests/session_parity_utils.py::_serve_session (tito_model="qwen3", chat_template_path=None)
  test.each([
    ["ours v1 + Python v2", "--v2", "v2"],
    ["Python v1 + ours v2", "--v1", "v1"],
  ])(
    "_serve_session's configuration, %s: PASS with --chat-template checkpoint",
    async (_name, flag, version) => {
      const result = await run([flag, python[`${version} serve-session`].url, "--chat-template", "checkpoint"]);
      expect(result.stdout).toMatch(/^PASS: 2\/2 trajectories/m);
      expect(result.stdout).toContain('qwen3, checkpoint template (tokenizer_config.json), kwargs {"enable_thinking": false, "clear_thinking": false}');
      expect(result.code).toBe(0);
    },
    150_000,
  );

  // miles/utils/arguments.py: --tito-model qwen3 installs the fixed template; --apply-chat-template-kwargs defaults to {}
  test.each([
    ["ours v1 + Python v2", "--v2", "v2"],
    ["Python v1 + ours v2", "--v1", "v1"],
  ])(
    "miles' production configuration, %s: PASS with miles' kwargs ('{}')",
    async (_name, flag, version) => {
      const result = await run([flag, python[`${version} production`].url, "--chat-template-kwargs", "{}"]);
      expect(result.stdout).toMatch(/^PASS: 2\/2 trajectories/m);
      expect(result.code).toBe(0);
    },
    150_000,
  );

  test("Python v1 + Python v2 (_serve_session's configuration) agree with each other", async () => {
    const result = await run(["--v1", python["v1 serve-session"].url, "--v2", python["v2 serve-session"].url]);
    expect(result.stdout).toMatch(/^PASS: 2\/2 trajectories/m);
  }, 150_000);

  test("ours with the fixed template against _serve_session's Python server fails, naming the think block and the flags", async () => {
    const result = await run(["--v2", python["v2 serve-session"].url]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("Likely cause: only v1 has 4 tokens at");
    expect(result.stdout).toContain("--chat-template family or checkpoint");
  }, 150_000);
});
