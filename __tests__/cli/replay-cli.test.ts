// `session-parity replay` as separate processes: both corpus formats PASS on the embedded servers; a malformed line
// and an unrenderable conversation are one ERROR row each and the run completes; against the user's servers a v2
// that keeps superseded retry leaves is caught under --retries, and the printed command replays that failure.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { gzipSync } from "node:zlib";
import type { ReplayReport } from "../../src/cli/replay-report";
import { runCli, startCli, type RunningCli } from "./run-cli";

jest.setTimeout(240_000);

const CORPUS = ["examples/replay/conversations.jsonl", "examples/replay/trajectory-dump.jsonl"];
const KEEP_ALL = "__tests__/server/v2/support/hook-fixtures.ts#keepAll";
const dir = mkdtempSync(path.join(tmpdir(), "session-parity-replay-"));

function report(file: string): ReplayReport {
  return JSON.parse(readFileSync(file, "utf8")) as ReplayReport;
}

test("both formats from the shipped corpus replay PASS through the embedded v1 and v2 (exit 0), shards split the indices", async () => {
  const json = path.join(dir, "all.json");
  const all = await runCli(["replay", ...CORPUS, "--json", json]);
  expect(all.stderr).toBe("");
  expect(all.code).toBe(0);
  expect(all.stdout).toMatch(/PASS: 11\/11 conversations — the v2 training payload equals v1's bit for bit/);
  const rows = report(json).rows;
  expect(rows.map((row) => [row.index, row.format, row.verdict.status])).toEqual(
    [...Array(11).keys()].map((index) => [index, index < 8 ? "openai" : "miles", "PASS"]),
  );
  const shard = path.join(dir, "shard.json");
  const second = await runCli(["replay", ...CORPUS, "--shard", "2/3", "--json", shard]);
  expect(second.code).toBe(0);
  expect(report(shard).rows.map((row) => row.index)).toEqual([1, 4, 7, 10]);
});

test("a malformed line and an unrenderable conversation are one ERROR row each, the rest still replays (exit 1)", async () => {
  const good = readFileSync(CORPUS[0], "utf8").split("\n")[1];
  const image = JSON.stringify({
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "What is in the picture?" },
          { type: "image_url", image_url: { url: "data:," } },
        ],
      },
      { role: "assistant", content: "A cat." },
    ],
  });
  const file = path.join(dir, "mixed.jsonl.gz");
  writeFileSync(file, gzipSync(`${good}\n{"messages": [\n\n${image}\n${good}\n`));
  const json = path.join(dir, "mixed.json");
  const result = await runCli(["replay", file, "--json", json]);
  expect(result.code).toBe(1);
  expect(result.stdout).toMatch(/FAIL: 0 of 4 conversations differ, 2 could not be replayed/);
  expect(report(json).rows.map((row) => [row.index, row.line, row.verdict.status, row.verdict.kind, row.verdict.messageIndex])).toEqual([
    [0, 1, "PASS", null, null],
    [1, 2, "ERROR", "malformed line", null],
    [2, 4, "ERROR", "unrenderable conversation", 0],
    [3, 5, "PASS", null, null],
  ]);
  expect(result.stdout).toContain(`${file}:2: not valid JSON`);
  expect(result.stdout).toContain('conversation 2, message 0: content part of type "image_url"');
});

test("--chat-template reaches the embedded servers and the printed command (an unrenderable row prints it too)", async () => {
  const file = path.join(dir, "template.jsonl");
  const ends = JSON.stringify({ messages: [{ role: "user", content: "Hi" }] });
  writeFileSync(file, `${readFileSync(CORPUS[0], "utf8").split("\n")[0]}\n${ends}\n`);
  const json = path.join(dir, "template.json");
  const result = await runCli(["replay", file, "--tito-model", "qwen3", "--chat-template", "checkpoint", "--json", json]);
  expect(result.code).toBe(1);
  expect(result.stdout).toContain(`replay it alone: session-parity replay ${file} --tito-model qwen3 --chat-template checkpoint --conversation 1\n`);
  expect(report(json).options.serverFlags).toEqual(["--tito-model", "qwen3", "--chat-template", "checkpoint"]);
  expect(report(json).rows.map((row) => row.verdict.status)).toEqual(["PASS", "ERROR"]);
});

test("a message the family's template refuses is one ERROR row naming the conversation and the message index", async () => {
  // Qwen3.5 has no system turn to append (its TITO family refuses it, miles/utils/chat_template_utils/message_matcher_hub/funcs.py::assert_messages_append_only_with_allowed_role)
  const file = path.join(dir, "refused.jsonl");
  const late = JSON.stringify({
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello." },
      { role: "system", content: "Be brief from now on." },
      { role: "user", content: "Weather?" },
      { role: "assistant", content: "Sunny." },
    ],
  });
  const good = JSON.stringify({
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello." },
    ],
  });
  writeFileSync(file, `${good}\n${late}\n`);
  const json = path.join(dir, "refused.json");
  const result = await runCli(["replay", file, "--tito-model", "qwen35", "--json", json]);
  expect(result.code).toBe(1);
  const rows = report(json).rows;
  expect(rows.map((row) => [row.index, row.verdict.status, row.verdict.kind, row.verdict.messageIndex])).toEqual([
    [0, "PASS", null, null],
    [1, "ERROR", "refused by both servers", 4],
  ]);
  expect(rows[1].verdict.cause).toMatch(
    /^both servers refused call 1 \(conversation 1, message 4\) with status 400: .*has role=.system.*does not support appending this role/,
  );
  expect(result.stdout).toContain("refused by both servers at message 4");
});

test("usage problems exit 2 naming the flag or file", async () => {
  const missing = await runCli(["replay", path.join(dir, "nope.jsonl")]);
  expect({ code: missing.code, stderr: missing.stderr }).toEqual({ code: 2, stderr: expect.stringContaining("no such corpus file") });
  const shard = await runCli(["replay", CORPUS[0], "--shard", "3/2"]);
  expect({ code: shard.code, stderr: shard.stderr }).toEqual({ code: 2, stderr: expect.stringContaining("must be i/n with 1 <= i <= n") });
});

describe("against the user's servers", () => {
  let mock: RunningCli;
  let v1: RunningCli;
  let v2: RunningCli;

  beforeAll(async () => {
    mock = await startCli(["mock", "--port", "0"]);
    [v1, v2] = await Promise.all([
      startCli(["serve", "v1", "--backend", mock.url, "--port", "0", "--quiet"]),
      startCli(["serve", "v2", "--backend", mock.url, "--port", "0", "--quiet", "--sample-picker", KEEP_ALL]),
    ]);
  });

  afterAll(async () => {
    await Promise.all([v1?.stop(), v2?.stop()]);
    await mock?.stop();
  });

  test("--retries catches a v2 that keeps superseded retry leaves, and the printed command replays that very failure", async () => {
    const servers = ["--backend", mock.url, "--v1", v1.url, "--v2", v2.url];
    const clean = await runCli(["replay", ...CORPUS, ...servers]);
    expect(clean.code).toBe(0);
    const json = path.join(dir, "retries.json");
    const html = path.join(dir, "retries.html");
    const caught = await runCli(["replay", ...CORPUS, ...servers, "--retries", "7", "--json", json, "--html", html]);
    expect(caught.code).toBe(1);
    // one page for the corpus, failing conversations first (the index table lists them in page order)
    const verdicts = [...readFileSync(html, "utf8").matchAll(/<tr class="(pass|fail)"><td><a href="#pair-\d+">/g)].map((match) => match[1]);
    expect(verdicts).toHaveLength(11);
    expect(verdicts.join(",")).toMatch(/^(fail,)+(pass,)*pass$/);
    const failing = report(json).rows.filter((row) => row.verdict.status === "FAIL");
    expect(failing.length).toBeGreaterThan(0);
    for (const row of failing) {
      expect(row.verdict.kind).toBe("sample count");
      expect(row.retries.length).toBeGreaterThan(0);
    }
    const printed = new RegExp(`replay it alone: (session-parity replay .* --conversation ${failing[0].index})\\n`).exec(caught.stdout);
    expect(printed).not.toBeNull();
    const args = printed![1].split(" ").slice(1);
    expect(args).toEqual(["replay", ...CORPUS, "--retries", "7", "--retry-rate", "0.5", ...servers, "--conversation", String(failing[0].index)]);
    const one = path.join(dir, "one.json");
    const again = await runCli([...args, "--json", one]);
    expect(again.code).toBe(1);
    const rows = report(one).rows;
    expect(rows.map((row) => [row.index, row.verdict.status, row.verdict.cause, row.retries])).toEqual([
      [failing[0].index, "FAIL", failing[0].verdict.cause, failing[0].retries],
    ]);
  });
});

describe("two differently configured sides", () => {
  let mock: RunningCli;
  let v1: RunningCli;

  beforeAll(async () => {
    mock = await startCli(["mock", "--port", "0"]);
    v1 = await startCli(["serve", "v1", "--backend", mock.url, "--port", "0", "--quiet", "--chat-template", "checkpoint"]);
  });

  afterAll(async () => {
    await v1?.stop();
    await mock?.stop();
  });

  test("a FAIL between servers whose /health reports different templates is a configuration problem (exit 2) naming the flag", async () => {
    const json = path.join(dir, "configuration.json");
    const result = await runCli(["replay", CORPUS[0], "--backend", mock.url, "--v1", v1.url, "--json", json]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain("Configuration problem: v1 and v2 render with different settings (template checkpoint");
    expect(result.stdout).toContain("pass --chat-template checkpoint to this run");
    expect(result.stdout).toMatch(/ERROR: \d+ of 8 conversations differ between two differently configured sides/);
    const summary = report(json).summary;
    expect(summary.failed).toBeGreaterThan(0);
    expect(summary.configurationProblem).toMatch(/^Configuration problem/);
  });
});
