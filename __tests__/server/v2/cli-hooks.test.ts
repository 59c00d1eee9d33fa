// `session-parity serve v2` with --sample-picker / --sample-postprocessor, spawned as a real process.
// A custom picker given on the command line changes the samples reply; a bad hook stops the process at start.
import { afterAll, beforeAll, expect, test } from "@jest/globals";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as path from "node:path";
import { echoScript, startMockBackend, type MockBackend } from "../../../src/backend";
import type { ChatMessage } from "../../../src/tokenizer/types";
import { FROM_SOURCES } from "../../cli/run-cli";
import { collect, createSession, sampleLeafIds, turn } from "./support/harness";

const ROOT = path.resolve(__dirname, "../../..");
const FIXTURES = "__tests__/server/v2/support/hook-fixtures.ts";

let backend: MockBackend;

beforeAll(async () => {
  backend = await startMockBackend({ process: echoScript });
});

afterAll(async () => {
  await backend.close();
});

function serve(extra: string[]): { child: ChildProcessWithoutNullStreams; url: Promise<string>; exit: Promise<{ code: number | null; stderr: string }> } {
  const child = spawn(process.execPath, [...FROM_SOURCES, path.join(ROOT, "src/cli/main.ts"), "serve", "v2", "--backend", backend.url, "--quiet", ...extra], {
    cwd: ROOT,
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: "1" },
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<{ code: number | null; stderr: string }>((resolve) => child.once("exit", (code) => resolve({ code, stderr })));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match) resolve(match[1]);
    });
    void exit.then(({ code }) => reject(new Error(`serve exited with ${code} before listening: ${stderr}`)));
  });
  url.catch(() => undefined); // a test that expects an early exit never awaits the URL
  return { child, url, exit };
}

test("--sample-picker keepAll keeps the superseded retry leaf", async () => {
  const { child, url, exit } = serve(["--sample-picker", `${FIXTURES}#keepAll`, "--sample-postprocessor", `${FIXTURES}#identityPostprocess`]);
  try {
    const base = await url;
    const id = await createSession(base);
    const U: ChatMessage = { role: "user", content: "q" };
    const a = await turn(base, id, [U]);
    await turn(base, id, [U, a, { role: "tool", content: "r1", tool_call_id: "t" }]);
    await turn(base, id, [U, a, { role: "tool", content: "r2", tool_call_id: "t" }]);
    const reply = await collect(base, id);
    expect(sampleLeafIds(reply)).toEqual([1, 2]);
    // identityPostprocess: the shared root completion stays trainable in both samples.
    expect(reply.samples.map((s) => s.loss_mask?.[0])).toEqual([1, 1]);
    child.kill("SIGTERM");
    expect((await exit).code).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}, 60_000);

test("an async --sample-picker stops the process at start with a message naming it", async () => {
  const { child, exit } = serve(["--sample-picker", `${FIXTURES}#asyncPicker`]);
  try {
    const { code, stderr } = await exit;
    expect(code).toBe(2); // a start-up problem: every command exits 2 for usage or server problems
    expect(stderr).toContain(`picker hook "${FIXTURES}#asyncPicker" is async`);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}, 60_000);
