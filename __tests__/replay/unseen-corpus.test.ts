// A corpus the package has never seen (seeded, both formats, one file gzip-compressed) replays PASS through the
// reference servers as separate CLI processes, without retries and with a retry before every recorded reply.
import { describe, expect, test } from "@jest/globals";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import type { ReplayReport } from "../../src/cli/replay-report";
import { runCli } from "../cli/run-cli";
import { unseenCorpus, writeUnseenCorpus } from "./support/unseen-corpus";

jest.setTimeout(300_000);

const dir = mkdtempSync(path.join(tmpdir(), "session-parity-unseen-"));
const files = writeUnseenCorpus(dir, 46);

function report(file: string): ReplayReport {
  return JSON.parse(readFileSync(file, "utf8")) as ReplayReport;
}

describe("an unseen corpus (40 seeded conversations)", () => {
  test("the generator covers what real corpora hold", () => {
    const { openai, miles } = unseenCorpus(46);
    expect(openai.length + miles.length).toBe(40);
    const text = [...openai, ...miles].join("\n");
    const rows = [...openai, ...miles].map((line) => JSON.parse(line) as { messages: Array<Record<string, unknown>> });
    const maxCalls = Math.max(...rows.flatMap((row) => row.messages.map((m) => (Array.isArray(m.tool_calls) ? m.tool_calls.length : 0))));
    expect(maxCalls).toBeGreaterThanOrEqual(3);
    expect(Math.max(...rows.map((row) => row.messages.length))).toBeGreaterThanOrEqual(40);
    expect(rows.some((row) => row.messages.some((m) => typeof m.reasoning_content === "string"))).toBe(true);
    expect(rows.some((row) => row.messages.some((m) => m.role === "tool" && m.content === ""))).toBe(true);
    expect(rows.some((row) => row.messages.some((m) => Array.isArray(m.content)))).toBe(true);
    expect(text).toContain("12345678901234567890123");
    expect(text).toContain("東京");
  });

  test("replays PASS through the embedded v1 and v2, both formats", async () => {
    const json = path.join(dir, "plain.json");
    const result = await runCli(["replay", ...files, "--json", json], { timeoutMs: 280_000 });
    expect(result.stdout).toMatch(/PASS: 40\/40 conversations/);
    expect(result.code).toBe(0);
    const rows = report(json).rows;
    expect(new Set(rows.map((row) => row.format))).toEqual(new Set(["openai", "miles"]));
  });

  test("with --retries 5 --retry-rate 1 (a retry before every recorded reply) it still replays PASS", async () => {
    const json = path.join(dir, "retries.json");
    const result = await runCli(["replay", ...files, "--retries", "5", "--retry-rate", "1", "--json", json], { timeoutMs: 280_000 });
    expect(result.stdout).toMatch(/PASS: 40\/40 conversations/);
    expect(result.code).toBe(0);
    const rows = report(json).rows;
    expect(rows.every((row) => row.retries.length === row.replies)).toBe(true);
    expect(rows.some((row) => row.setAside > 0)).toBe(true);
  });
});
