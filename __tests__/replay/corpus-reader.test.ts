// The corpus reader: a line's shape decides its format, malformed lines name their line number, `.gz` streams.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { parseCorpusLine } from "../../src/replay/corpus-line";
import { CorpusFileError, readCorpus } from "../../src/replay/corpus-files";
import type { CorpusEntry, RecordedConversation } from "../../src/replay/types";

const at = { file: "c.jsonl", line: 3, index: 2 };

function conversation(entry: CorpusEntry | null): RecordedConversation {
  if (entry?.kind !== "conversation") throw new Error(`expected a conversation, got ${JSON.stringify(entry)}`);
  return entry.conversation;
}

function problem(entry: CorpusEntry | null): string {
  if (entry?.kind !== "malformed") throw new Error(`expected a malformed line, got ${JSON.stringify(entry)}`);
  expect({ file: entry.malformed.file, line: entry.malformed.line, index: entry.malformed.index }).toEqual(at);
  return entry.malformed.problem;
}

const weatherCall = { id: "c1", type: "function", function: { name: "get_weather", arguments: '{"location": "Oslo"}' } };

describe("parseCorpusLine", () => {
  // mirrors miles/ray/rollout/debug_data.py::trajectory_rows: sample_index, group_index, status, reward, prompt, messages
  test("a trajectory dump row is read as miles', its prompt list marking the agent's own messages", () => {
    const prompt = [
      { role: "user", content: "Example?" },
      { role: "assistant", content: "Example answer." },
      { role: "user", content: "Real question?" },
    ];
    const row = { sample_index: 7, group_index: 1, status: "completed", reward: 1, prompt, messages: [...prompt, { role: "assistant", content: "Answer." }] };
    const read = conversation(parseCorpusLine(JSON.stringify(row), at));
    expect(read).toMatchObject({ ...at, format: "miles", promptLength: 3, label: "7", tools: [] });
    expect(read.messages).toHaveLength(4);
  });

  test("a dump row whose prompt is a string has no prompt prefix; tools are derived from the called names", () => {
    const messages = [
      { role: "user", content: "Weather?" },
      { role: "assistant", content: "", tool_calls: [weatherCall] },
    ];
    const read = conversation(parseCorpusLine(JSON.stringify({ sample_index: 0, status: "completed", prompt: "Weather?", messages }), at));
    expect(read.promptLength).toBe(0);
    expect(read.tools).toEqual([{ type: "function", function: { name: "get_weather", description: "", parameters: { type: "object", properties: {} } } }]);
  });

  test("an OpenAI chat record keeps its own tools and id", () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }];
    const read = conversation(parseCorpusLine(JSON.stringify({ id: "x1", messages: [{ role: "user", content: "hi" }], tools }), at));
    expect(read).toMatchObject({ format: "openai", promptLength: 0, label: "x1", tools });
  });

  test("blank lines are skipped", () => {
    expect(parseCorpusLine("   ", at)).toBeNull();
  });

  test.each([
    ["{not json", /^not valid JSON \(/],
    ["[1, 2]", /expected a JSON object .* got an array/],
    ['{"prompt": "x"}', /no "messages" array/],
    ['{"messages": [{"content": "no role"}]}', /messages\[0\] is not an object with a string "role"/],
    ['{"messages": [], "tools": {}}', /"tools" is not an array/],
  ])("malformed %s names its problem", (line, expected) => {
    expect(problem(parseCorpusLine(line, at))).toMatch(expected);
  });
});

describe("readCorpus", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "replay-corpus-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const good = (text: string): string =>
    JSON.stringify({
      messages: [
        { role: "user", content: text },
        { role: "assistant", content: "ok" },
      ],
    });

  test("plain and gzipped files stream in order; indices count non-blank lines over all files; a malformed line names its line", async () => {
    const plain = path.join(dir, "a.jsonl");
    const gz = path.join(dir, "b.jsonl.gz");
    await writeFile(plain, `${good("one")}\n\n{broken\r\n${good("three")}`);
    await writeFile(gz, gzipSync(`${good("four")}\n${good("fünf ✓")}\n`));
    const entries: CorpusEntry[] = [];
    for await (const entry of readCorpus([plain, gz])) entries.push(entry);
    const summary = entries.map((entry) =>
      entry.kind === "malformed"
        ? { kind: "malformed", file: entry.malformed.file, line: entry.malformed.line, index: entry.malformed.index }
        : {
            kind: "conversation",
            file: entry.conversation.file,
            line: entry.conversation.line,
            index: entry.conversation.index,
            first: entry.conversation.messages[0].content,
          },
    );
    expect(summary).toEqual([
      { kind: "conversation", file: plain, line: 1, index: 0, first: "one" },
      { kind: "malformed", file: plain, line: 3, index: 1 },
      { kind: "conversation", file: plain, line: 4, index: 2, first: "three" },
      { kind: "conversation", file: gz, line: 1, index: 3, first: "four" },
      { kind: "conversation", file: gz, line: 2, index: 4, first: "fünf ✓" },
    ]);
  });

  test("a missing file and a corrupt gzip are CorpusFileErrors naming the file", async () => {
    const missing = path.join(dir, "missing.jsonl");
    await expect(readCorpus([missing]).next()).rejects.toThrow(
      new CorpusFileError(`cannot read the corpus file ${missing}: ENOENT: no such file or directory, open '${missing}'`),
    );
    const corrupt = path.join(dir, "corrupt.jsonl.gz");
    await writeFile(corrupt, Buffer.from("definitely not gzip"));
    await expect(readCorpus([corrupt]).next()).rejects.toThrow(/cannot read the corpus file .*corrupt\.jsonl\.gz: incorrect header check/);
  });
});
