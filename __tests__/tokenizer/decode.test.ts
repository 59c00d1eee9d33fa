// The table decoder must give exactly what @huggingface/tokenizers' own decode gives, for every id and any sequence.
// The reference is an independent library tokenizer built from the same packaged files.
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "@jest/globals";
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import fc from "fast-check";
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import {
  byteLevelCharToByte,
  buildByteLevelTable,
  ByteLevelTableDecoder,
  createTito,
  defaultTokenizerDirectory,
  loadTokenizer,
  tableDecodable,
  vocabularyFromLibrary,
  type ChatMessage,
  type Qwen3Tokenizer,
} from "../../src/tokenizer";
import { expectSame } from "../support/fast-expect";

let tokenizer: Qwen3Tokenizer;
let library: HfTokenizer;
let tokenizerConfig: Record<string, unknown>;
let tokenizerJson: Record<string, unknown>;
/** Table decoder whose fallback is counted, to prove the table (not the library) produced the output. */
let table: ByteLevelTableDecoder;
let fallbacks = 0;
let vocabularySize = 0;
/** Ids of the 256 single-byte tokens (their sequences exercise UTF-8 split across tokens). */
let byteIds: number[];

function reference(ids: readonly number[], skip: boolean): string {
  return library.decode([...ids], { skip_special_tokens: skip });
}

function outcome(run: () => string): { text?: string; error?: string } {
  try {
    return { text: run() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  const directory = defaultTokenizerDirectory();
  tokenizerJson = JSON.parse(fs.readFileSync(path.join(directory, "tokenizer.json"), "utf8")) as Record<string, unknown>;
  tokenizerConfig = JSON.parse(fs.readFileSync(path.join(directory, "tokenizer_config.json"), "utf8")) as Record<string, unknown>;
  library = new HfTokenizer(tokenizerJson, tokenizerConfig);
  const vocabulary = vocabularyFromLibrary(library, tokenizerConfig);
  vocabularySize = vocabulary.size;
  table = new ByteLevelTableDecoder(buildByteLevelTable(vocabulary), (ids, skip) => {
    fallbacks += 1;
    return reference(ids, skip);
  });
  byteIds = [...byteLevelCharToByte().keys()].map((code) => library.token_to_id(String.fromCharCode(code))!);
});

describe("the byte-level alphabet", () => {
  it("maps 256 distinct stand-in characters to the 256 bytes, each a single-byte token of the vocabulary", () => {
    const map = byteLevelCharToByte();
    expect(map.size).toBe(256);
    expect(new Set(map.values()).size).toBe(256);
    expect(map.get("A".charCodeAt(0))).toBe(0x41);
    expect(map.get("Ċ".charCodeAt(0))).toBe(0x0a);
    expect(map.get("Ġ".charCodeAt(0))).toBe(0x20);
    expect(byteIds.every((id) => Number.isInteger(id))).toBe(true);
    expect(library.token_to_id("Ċ")).toBe(198);
  });

  it("the packaged Qwen3 files qualify for the table; other decoders or clean-up settings do not", () => {
    expect(tableDecodable(tokenizerJson, tokenizerConfig)).toBe(true);
    expect(tableDecodable({ ...tokenizerJson, decoder: { type: "Metaspace" } }, tokenizerConfig)).toBe(false);
    expect(tableDecodable(tokenizerJson, { ...tokenizerConfig, clean_up_tokenization_spaces: true })).toBe(false);
    expect(tableDecodable(tokenizerJson, { ...tokenizerConfig, clean_up_tokenization_spaces: undefined })).toBe(false);
  });
});

describe("table decode equals the library's decode", () => {
  it("for every single id of the vocabulary, with and without skipping specials, without falling back", () => {
    fallbacks = 0;
    const differing: number[] = [];
    for (let id = 0; id < vocabularySize; id += 1) {
      if (table.decode([id], false) !== reference([id], false)) differing.push(id);
      if (table.decode([id], true) !== reference([id], true)) differing.push(-id - 1);
    }
    expect(differing).toEqual([]);
    expect(fallbacks).toBe(0);
    expect(vocabularySize).toBe(151669);
  });

  it("for random sequences over the whole vocabulary, the specials and the single-byte tokens", () => {
    const special = fc.constantFrom(151643, 151644, 151645, 151657, 151658, 151667, 151668, 198);
    const id = fc.oneof(
      { arbitrary: fc.integer({ min: 0, max: vocabularySize - 1 }), weight: 3 },
      { arbitrary: special, weight: 2 },
      { arbitrary: fc.constantFrom(...byteIds), weight: 5 },
    );
    fallbacks = 0;
    fc.assert(
      fc.property(fc.array(id, { minLength: 1, maxLength: 300 }), fc.boolean(), (ids, skip) => {
        expectSame(table.decode(ids, skip), reference(ids, skip));
      }),
      { numRuns: 1500, seed: 20240611 },
    );
    expect(fallbacks).toBe(0);
  });

  it("for slices of real conversations (multilingual, emoji, think blocks, tool calls) cut at any token", () => {
    const tito = createTito(tokenizer, { enable_thinking: false });
    const messages: ChatMessage[] = [
      ...buildInitialMessages(),
      {
        role: "assistant",
        content: "",
        reasoning_content: "让我查一下 🌦️ the weather…",
        tool_calls: [{ function: { name: "get_weather", arguments: '{"location": "Zürich"}' } }],
      },
      { role: "tool", content: MOCK_TOOL_RESULTS[0] },
      { role: "user", content: "Und morgen? 明天呢？ 👩‍👩‍👧 café naïve \uFEFFbom ∑∫ 🇨🇭 <tool_call>literal</tool_call>" },
      { role: "assistant", content: "<think>\nCheck 東京 and São Paulo.\n</think>\n\nTomorrow: 18°C, clear — enjoy! 😀" },
    ];
    const ids = tito.canonicalIds(messages, WEATHER_TOOLS);
    fallbacks = 0;
    for (const skip of [false, true]) expect(table.decode(ids, skip)).toBe(reference(ids, skip));
    fc.assert(
      fc.property(fc.nat(ids.length - 1), fc.nat(ids.length - 1), fc.boolean(), (a, b, skip) => {
        const slice = ids.slice(Math.min(a, b), Math.max(a, b) + 1);
        expectSame(table.decode(slice, skip), reference(slice, skip));
      }),
      { numRuns: 1000, seed: 7 },
    );
    expect(fallbacks).toBe(0);
  });

  it("hands empty input, unknown, negative and fractional ids to the library, with the library's result or error", () => {
    for (const ids of [[], [5, vocabularySize], [151645, -1, 33], [1.5, 2], [200000], [33, Number.NaN]]) {
      for (const skip of [false, true]) {
        fallbacks = 0;
        expect(outcome(() => table.decode(ids, skip))).toEqual(outcome(() => reference(ids, skip)));
        expect(fallbacks).toBe(1);
      }
    }
  });
});

describe("Qwen3Tokenizer.decode", () => {
  it("gives the library's output on random sequences and keeps its errors", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: vocabularySize - 1 }), { minLength: 1, maxLength: 80 }), fc.boolean(), (ids, skip) => {
        expectSame(tokenizer.decode(ids, { skipSpecialTokens: skip }), reference(ids, skip));
      }),
      { numRuns: 300, seed: 99 },
    );
    expect(outcome(() => tokenizer.decode([]))).toEqual(outcome(() => reference([], false)));
    expect(outcome(() => tokenizer.decode([]))).toHaveProperty("error");
  });

  it("does not alter the caller's ids, and a scratch buffer reused across calls leaks nothing between them", () => {
    const long = tokenizer.encode("日本語のテキスト ".repeat(5000));
    const short = tokenizer.encode("ok");
    const frozen = Object.freeze([...long]);
    expect(tokenizer.decode(frozen)).toBe(reference(long, false));
    expect(tokenizer.decode(short)).toBe("ok");
    expect(frozen).toEqual(long);
  });
});
