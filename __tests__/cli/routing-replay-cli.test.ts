// Routing-replay flags of the command line, spawned for real: `serve` refuses replay without a layer count and
// asks the backend for routing with it; `run` refuses the shaping flags without --routing-replay.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { startMockBackend, type MockBackend } from "../../src/backend";
import { chat, createSession } from "../server/helpers";
import { cleanEnv, FROM_SOURCES, MAIN, ROOT, runCli } from "./run-cli";

let backend: MockBackend;

beforeAll(async () => {
  backend = await startMockBackend({ process: () => ({ text: "routed" }), routedExperts: { numLayers: 3, topk: 2, numExperts: 8 } });
});
afterAll(async () => {
  await backend.close();
});

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

test("serve --use-rollout-routing-replay without --num-layers does not start and says why", async () => {
  const result = await runCli(["serve", "v1", "--backend", backend.url, "--use-rollout-routing-replay"]);
  expect(result.code).not.toBe(0);
  expect(result.stderr).toContain("useRoutingReplay (--use-rollout-routing-replay) needs numLayers (--num-layers)");
  expect(result.stdout).not.toContain("listening on");
});

test("serve with routing replay and additional R3 asks the backend for routed experts from row 0", async () => {
  const args = ["serve", "v2", "--backend", backend.url, "--use-rollout-routing-replay", "--num-layers", "3", "--use-addition-r3"];
  const child = spawn(process.execPath, [...FROM_SOURCES, MAIN, ...args], { cwd: ROOT, env: cleanEnv() });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(await firstLine(child))![1];
    const id = await createSession(url);
    expect((await chat(url, id, { messages: [{ role: "user", content: "route me" }] })).status).toBe(200);
    const body = backend.requestLog[backend.requestLog.length - 1];
    expect(body).toMatchObject({ return_routed_experts: true, routed_experts_start_len: 0 });
  } finally {
    child.kill("SIGTERM");
  }
  expect(await exited).toBe(0);
});

test("run refuses --num-layers without --routing-replay with status 2", async () => {
  const result = await runCli(["run", "--batch", "1", "--num-layers", "4"]);
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("--num-layers, --topk, --indexer-replay and --addition-r3 need --routing-replay (got numLayers)");
});
