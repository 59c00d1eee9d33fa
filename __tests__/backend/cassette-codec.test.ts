// The cassette format alone: header, interaction lines, keys, and every bad input named by file and line.
import {
  CASSETTE_FORMAT_VERSION,
  CassetteError,
  decodeCassette,
  encodeHeader,
  encodeInteraction,
  readInteraction,
  readReply,
} from "../../src/backend/cassette-codec";
import { describeDeparture, keyRequest, nearness } from "../../src/backend/cassette-key";

const VOCAB = { family: "qwen3", vocabulary: "sha256:abc" };
const header = encodeHeader(VOCAB);
const reply = (body: string) => ({ status: 200, contentType: "application/json", body });
const line = (ids: number[], body: string, extra: Record<string, unknown> = {}) =>
  encodeInteraction({ request: keyRequest("/v1/chat/completions", { input_ids: ids, temperature: 0, ...extra }), reply: reply(body) });

describe("keys", () => {
  test("the key follows the prompt ids and sampling fields, not the model name, the messages beside input_ids or the key order", () => {
    const a = keyRequest("/v1/chat/completions", { input_ids: [1, 2], temperature: 0, model: "a", messages: [{ role: "user", content: "x" }] });
    const b = keyRequest("/v1/chat/completions", { messages: [], model: "b", temperature: 0, input_ids: [1, 2] });
    expect(a.key).toBe(b.key);
    expect(a.key).toMatch(/^[0-9a-f]{64}$/);
    expect(keyRequest("/v1/chat/completions", { input_ids: [1, 2], temperature: 0.5 }).key).not.toBe(a.key);
    expect(keyRequest("/v1/chat/completions", { input_ids: [1, 3], temperature: 0 }).key).not.toBe(a.key);
    expect(keyRequest("/generate", { input_ids: [1, 2], temperature: 0 }).key).not.toBe(a.key);
    // without input_ids the messages are the prompt
    expect(keyRequest("/v1/chat/completions", { messages: [{ role: "user", content: "x" }] }).key).not.toBe(
      keyRequest("/v1/chat/completions", { messages: [{ role: "user", content: "y" }] }).key,
    );
  });

  test("the departure of the nearest request names the first differing id, or the differing field", () => {
    const missing = keyRequest("/v1/chat/completions", { input_ids: [1, 2, 3, 9], temperature: 0 });
    const recorded = keyRequest("/v1/chat/completions", { input_ids: [1, 2, 3, 4, 5], temperature: 0 });
    expect(describeDeparture(missing, recorded, nearness(missing, recorded))).toBe(
      "it shares the first 3 of the request's 4 input ids (recorded prompt: 5); at index 3 the request has 9, the recording 4",
    );
    const hot = keyRequest("/v1/chat/completions", { input_ids: [1, 2, 3, 9], temperature: 0.7 });
    expect(describeDeparture(missing, hot, nearness(missing, hot))).toBe("same prompt, but temperature: 0 (request) vs 0.7 (recorded)");
  });
});

describe("decodeCassette", () => {
  test("a header and lines round-trip: each reply exactly as recorded, indexed by key", () => {
    const body = '{"id":"x","choices":[{"meta_info":{"output_token_logprobs":[[-0.0,5]]}}],"text":"caf\u00e9 \u2028"}';
    const text = `${header}\n${line([1, 2], body)}\n${line([1, 2, 3], "{}")}\n`;
    const decoded = decodeCassette(text, "c.jsonl");
    expect(decoded.header).toEqual({ format: CASSETTE_FORMAT_VERSION, ...VOCAB });
    expect(decoded.entries.size).toBe(2);
    const key = keyRequest("/v1/chat/completions", { input_ids: [1, 2], temperature: 0 }).key;
    const entry = decoded.entries.get(key)!;
    expect(entry.line).toBe(2);
    expect(readReply(entry, "c.jsonl").body).toBe(body);
    expect(readInteraction(entry, "c.jsonl").request.keyed).toEqual({ input_ids: [1, 2], temperature: 0 });
    expect(decoded.truncatedTail).toBeNull();
  });

  test("a truncated last line is set apart with its line number; every line before it stays indexed", () => {
    const full = line([7], '{"a":1}');
    const text = `${header}\n${line([1], "{}")}\n${full.slice(0, full.length - 9)}`;
    const decoded = decodeCassette(text, "c.jsonl");
    expect(decoded.truncatedTail).toEqual({ line: 3, text: full.slice(0, full.length - 9), offset: header.length + 1 + line([1], "{}").length + 1 });
    expect(decoded.lineCount).toBe(2);
    expect(decoded.entries.size).toBe(1);
  });

  test("an unknown format version is refused naming both versions", () => {
    const text = `${JSON.stringify({ session_parity_cassette: 2, family: "qwen3", vocabulary: "sha256:abc" })}\n`;
    expect(() => decodeCassette(text, "cassette c.jsonl")).toThrow(
      new CassetteError(
        "cassette c.jsonl has cassette format version 2; this session-parity reads version 1 only (record it again with this version, or use the session-parity that wrote it)",
      ),
    );
  });

  test("a file that is not a cassette, an empty one, and a line without a key are named", () => {
    expect(() => decodeCassette('{"a":1}\n', "c")).toThrow('c line 1 is not a cassette header (no "session_parity_cassette" field): is this file a cassette?');
    expect(() => decodeCassette("", "c")).toThrow("c is empty: a cassette starts with its header line");
    expect(() => decodeCassette(`${header}\n{"nokey":1}\n`, "c")).toThrow(
      'c line 2 is not a recorded interaction (no "key" of 64 hex digits): "{\\"nokey\\":1}"',
    );
  });

  test("a key recorded twice with one reply is served once; with two different replies it is refused naming both lines", () => {
    const same = decodeCassette(`${header}\n${line([1], "{}")}\n${line([1], "{}")}\n`, "c");
    expect(same.entries.size).toBe(1);
    expect(same.duplicates).toBe(1);
    const key = keyRequest("/v1/chat/completions", { input_ids: [1], temperature: 0 }).key;
    expect(() => decodeCassette(`${header}\n${line([1], '{"t":"a"}')}\n${line([2], "{}")}\n${line([1], '{"t":"b"}')}\n`, "c")).toThrow(
      `c records key ${key} twice with different replies (lines 2 and 4, bodies differ from character 6: "a\\"}" vs "b\\"}"); a cassette answers each request one way: delete the line that is wrong`,
    );
  });
});
