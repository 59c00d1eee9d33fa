// A fixed-seed fuzz run through the embedded reference servers, plan routes of an external mock, and the CLI.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { request } from "undici";
import { startMockBackend, type MockBackend } from "../../src/backend";
import { executeFuzz } from "../../src/cli/fuzz-command";
import { fuzzAgenticParity, openFuzzEnvironment, replayAgentSchedule, type AgentSchedule, type FuzzEnvironment } from "../../src/fuzz";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import { keepSupersededLeaves } from "./planted-bugs";

const SEED = 20260803;

describe("fuzzAgenticParity on the reference servers", () => {
  let environment: FuzzEnvironment;
  beforeAll(async () => {
    environment = await openFuzzEnvironment();
  });
  afterAll(async () => {
    await environment?.close();
  });

  test("a fixed-seed run finds no counterexample and is deterministic", async () => {
    const first = await fuzzAgenticParity({ seed: SEED, runs: 16, maxSteps: 6, concurrency: 8, environment });
    expect(first.counterexample).toBeNull();
    expect(first).toHaveAgenticParity();
    expect(first.runs).toBe(16);
    const again = await fuzzAgenticParity({ seed: SEED, runs: 16, maxSteps: 6, concurrency: 8, environment });
    expect(again.outcomes).toEqual(first.outcomes);
    expect(Object.values(first.outcomes).reduce((a, b) => a + b, 0)).toBe(16);
  }, 60_000);

  // regression of the shrunk counterexample of the planted "keeps superseded leaves" picker: a pure retry
  test("the pure-retry counterexample passes on the reference servers", async () => {
    const schedule: AgentSchedule = {
      fewShot: false,
      first: { stream: false, tools: true, reply: { kind: "text", variant: 0 } },
      steps: [
        { action: { kind: "user", variant: 0 }, stream: false, tools: true, reply: { kind: "tool_calls", cities: [0] } },
        { action: { kind: "retry", depth: 1, divergent: false, variant: 0 }, stream: true, tools: true, reply: { kind: "text", variant: 1 } },
      ],
      maxSeqLen: null,
    };
    const verdict = await replayAgentSchedule(schedule, { environment });
    expect(verdict).toHaveAgenticParity();
    expect(verdict.outcome).toBe("payloads equal");
    expect(verdict.prediction.v2.tree.kept).toEqual([2]);
  }, 30_000);

  test("bad options are refused with a message naming them", async () => {
    await expect(fuzzAgenticParity({ runs: 0, environment })).rejects.toThrow("runs must be an integer >= 1, got 0");
    await expect(fuzzAgenticParity({ v1Url: "http://127.0.0.1:1" })).rejects.toThrow("a v1/v2 server URL needs the backend URL it calls");
  });
});

describe("an external mock driven over its plan control routes", () => {
  let mock: MockBackend;
  let v1: RunningSessionServer;
  let v2: RunningSessionServer;
  const silent = { warn(): void {} };
  beforeAll(async () => {
    mock = await startMockBackend({ process: () => ({ text: "unplanned" }), statsRoutes: true });
    v1 = await startSessionServer({ version: "v1", backendUrl: mock.url, logger: silent });
    v2 = await startSessionServer({ version: "v2", backendUrl: mock.url, logger: silent, samplePicker: keepSupersededLeaves });
  });
  afterAll(async () => {
    await v1?.close();
    await v2?.close();
    await mock?.close();
  });

  test("a malformed plan is refused with 400 and the registered plans are unchanged", async () => {
    mock.plans.register("kept", [{ text: "x", weight_version: "w0", logprob_seed: 1 }]);
    const reply = await request(`${mock.url}/_mock/plans/kept`, { method: "PUT", body: JSON.stringify({ replies: [{ text: 1 }] }) });
    expect(reply.statusCode).toBe(400);
    expect(((await reply.body.json()) as { message: string }).message).toBe("replies[0].text must be a string");
    expect(mock.plans.size).toBe(1);
    expect(mock.plans.answer("kept", 0)?.text).toBe("x");
    const missing = await request(`${mock.url}/_mock/plans/nope`, { method: "DELETE" });
    expect(missing.statusCode).toBe(404);
    await missing.body.text();
    mock.plans.unregister("kept");
  });

  test("the CLI finds the planted picker bug through URLs, writes the counterexample and replays it (exit 1)", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "fuzz-cli-"));
    let out = "";
    const io = { out: { write: (chunk: string) => (out += chunk) }, err: { write: () => true }, cwd: dir };
    const flags = { runs: 24, seed: 7, maxSteps: 5, concurrency: 8, backend: mock.url, v1: v1.url, v2: v2.url };
    const html = path.join(dir, "counterexample.html");
    expect(await executeFuzz({ ...flags, html }, io)).toBe(1);
    const file = path.join(dir, "fuzz-counterexample-7.json");
    // --html draws the shrunk counterexample like a parity pair: both runs, the failing parts, the v2 tree.
    const page = readFileSync(html, "utf8");
    expect(out).toContain(`HTML report written to ${html}`);
    expect(page.match(/<section class="pair fail"/g)).toHaveLength(1);
    expect(page).toContain("counterexample (seed 7, path ");
    expect(page).toMatch(/<pre class="failures">[^<]*the picker kept leaves/);
    expect(page).toContain(`<svg class="tree"`);
    const saved = JSON.parse(readFileSync(file, "utf8")) as { schedule: AgentSchedule; failures: Array<{ where: string }> };
    expect(saved.schedule.steps.length + 1).toBeLessThanOrEqual(5);
    expect(saved.failures.some((f) => f.where === "v2")).toBe(true);
    expect(out).toContain("the picker kept leaves");
    expect(mock.plans.size).toBe(0);
    out = "";
    expect(await executeFuzz({ ...flags, replay: file }, io)).toBe(1);
    expect(out).toMatch(/^FAIL: replayed /);
  }, 120_000);
});
