// The `session-parity serve` process: spawned for real, read its URL line, hit /health, stop it with a signal.
// Also checks the argument errors a user sees before anything starts.
import { spawn, ChildProcessWithoutNullStreams } from "node:child_process";
import * as path from "node:path";
import { echoScript, startMockBackend, type MockBackend } from "../../src/backend";
import { call, chat, createSession } from "../server/helpers";
import { FROM_SOURCES } from "./run-cli";

const ROOT = path.resolve(__dirname, "../..");
const MAIN = path.join(ROOT, "src/cli/main.ts");

function spawnCli(args: string[]): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [...FROM_SOURCES, MAIN, ...args], { cwd: ROOT, env: { ...process.env, TS_NODE_TRANSPILE_ONLY: "1" } });
}

function firstLine(child: ChildProcessWithoutNullStreams): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const newline = out.indexOf("\n");
      if (newline !== -1) resolve(out.slice(0, newline));
    });
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.once("exit", (code) => reject(new Error(`exited with ${code} before printing its URL: ${err}`)));
  });
}

function exitOf(child: ChildProcessWithoutNullStreams): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal, stderr })));
}

let backend: MockBackend;

beforeAll(async () => {
  backend = await startMockBackend({ process: echoScript });
});
afterAll(async () => {
  await backend.close();
});

test.each(["SIGTERM", "SIGINT"] as const)(
  "serve prints its URL, serves, and exits 0 on %s",
  async (signal) => {
    const child = spawnCli(["serve", "v1", "--backend", backend.url, "--port", "0", "--instance-id", `cli-${signal}`]);
    const exited = exitOf(child);
    try {
      const line = await firstLine(child);
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      expect(match).not.toBeNull();
      const url = match![1];
      const health = await call("GET", `${url}/health`);
      expect(health.json()).toMatchObject({ status: "ok", session_server_instance_id: `cli-${signal}`, session_server_version: "v1" });
      const id = await createSession(url);
      const reply = await chat(url, id, { messages: [{ role: "user", content: "from the cli" }] });
      expect(reply.status).toBe(200);
      child.kill(signal);
      const { code } = await exited;
      expect(code).toBe(0);
      await expect(call("GET", `${url}/health`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  },
  60_000,
);

test("serve v2 starts the tree server", async () => {
  const child = spawnCli(["serve", "v2", "--backend", backend.url]);
  const exited = exitOf(child);
  try {
    const line = await firstLine(child);
    expect(line).toContain("v2 session server listening on");
    child.kill("SIGTERM");
    expect((await exited).code).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}, 60_000);

test("serve --max-body-bytes answers an oversized chat with 413 naming the limit; the session keeps nothing", async () => {
  const child = spawnCli(["serve", "v1", "--backend", backend.url, "--max-body-bytes", "2048", "--upstream-timeout-ms", "30000"]);
  const exited = exitOf(child);
  try {
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(await firstLine(child))![1];
    const id = await createSession(url);
    const refused = await chat(url, id, { messages: [{ role: "user", content: "x".repeat(4096) }] });
    expect(refused.status).toBe(413);
    expect(refused.json()).toEqual({ error: expect.stringMatching(/^request body of \d+ bytes exceeds the 2048-byte limit/) });
    expect((await call("GET", `${url}/sessions/${id}`)).json()).toMatchObject({ records: [] });
    expect((await chat(url, id, { messages: [{ role: "user", content: "small" }] })).status).toBe(200);
    child.kill("SIGTERM");
    expect((await exited).code).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}, 60_000);

test.each([
  [["serve", "v1", "--backend", "http://127.0.0.1:1", "--max-body-bytes", "0"], "--max-body-bytes"],
  [["serve", "v1", "--backend", "http://127.0.0.1:1", "--max-reply-bytes", "lots"], "--max-reply-bytes"],
  [["serve", "v1", "--backend", "http://127.0.0.1:1", "--upstream-timeout-ms", "-5"], "--upstream-timeout-ms"],
  [["serve", "--backend", "http://127.0.0.1:1"], "missing the session server version"],
  [["serve", "v3", "--backend", "http://127.0.0.1:1"], "v3"],
  [["serve", "v1", "--backend", "not-a-url"], "--backend"],
  [["serve", "v1", "--backend", "http://127.0.0.1:1", "--port", "70000"], "--port"],
  [
    ["serve", "v1", "--backend", "http://127.0.0.1:1", "--no-check-backend", "--hf-checkpoint", "/nonexistent-checkpoint-dir"],
    "cannot read tokenizer checkpoint /nonexistent-checkpoint-dir: directory not found",
  ],
  [["serve", "v1", "--backend", "http://127.0.0.1:1", "--no-check-backend", "--sample-picker", "hooks#pick"], "v2 options"],
  [["serve", "v1", "--backend", "http://127.0.0.1:1", "--message-matcher", "fuzzy"], "--message-matcher"],
])(
  "bad arguments exit non-zero with a message naming the problem: %j",
  async (args, needle) => {
    const child = spawnCli(args);
    const { code, stderr } = await exitOf(child);
    expect(code).toBe(2);
    expect(stderr).toContain(needle);
  },
  60_000,
);
