// The cached piecewise encode must give exactly the ids of @huggingface/tokenizers' encode of the whole text.
// The reference is an independent library tokenizer built from the same packaged files; files it cannot cover fall back.
import * as fs from "node:fs";
import * as path from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { beforeAll, describe, expect, it } from "@jest/globals";
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import fc from "fast-check";
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import {
  createTito,
  defaultTokenizerDirectory,
  loadTokenizer,
  Qwen3Tokenizer,
  ownedString,
  SegmentEncodeCache,
  segmentEncodingProblem,
  type AddedTokenSpec,
  type ChatMessage,
} from "../../src/tokenizer";
import { binaryString } from "../support/binary-unit";
import { expectEqual } from "../support/fast-expect";

let tokenizer: Qwen3Tokenizer;
let library: HfTokenizer;
let tokenizerJson: Record<string, unknown>;
let tokenizerConfig: Record<string, unknown>;
let addedTokens: AddedTokenSpec[];

function reference(text: string): number[] {
  return library.encode(text, { add_special_tokens: false }).ids;
}

/** A copy of the packaged tokenizer.json with `edit` applied. */
function editedJson(edit: (json: Record<string, unknown>) => void): Record<string, unknown> {
  const added = (tokenizerJson.added_tokens as Record<string, unknown>[]).map((token) => ({ ...token }));
  const copy: Record<string, unknown> = { ...tokenizerJson, added_tokens: added };
  edit(copy);
  return copy;
}

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  const directory = defaultTokenizerDirectory();
  tokenizerJson = JSON.parse(fs.readFileSync(path.join(directory, "tokenizer.json"), "utf8")) as Record<string, unknown>;
  tokenizerConfig = JSON.parse(fs.readFileSync(path.join(directory, "tokenizer_config.json"), "utf8")) as Record<string, unknown>;
  library = new HfTokenizer(tokenizerJson, tokenizerConfig);
  addedTokens = tokenizerJson.added_tokens as AddedTokenSpec[];
});

/** Every added-token string, special or not. */
const addedContents = () => addedTokens.map((token) => token.content);

const PARTIALS = [
  "<|im_",
  "<|im_start",
  "im_end|>",
  "<think",
  "think>",
  "</think",
  "<|",
  "|>",
  "<",
  ">",
  "</",
  "<tool_",
  "_call>",
  "<|endoftext",
  "|im_end|>",
  "<<|im_end|>>",
];
const SPACES = [" ", "  ", "\n", "\n\n", "\t", "\r\n", " \n", "\n ", "\u00a0", "\u3000", "\u2028", "\u200b"];
const EMOJI = ["😀", "👩‍👩‍👧", "🇨🇭", "🌦️", "👍🏽", "🧑‍💻", "\ud83d"];
const CJK = ["明天呢", "東京", "天气很好", "北京", "こんにちは", "서울", "ＡＢＣ１２３"];
const WORDS = [
  "Hello",
  "weather",
  "get_weather",
  "Beijing",
  "'s",
  "'ll",
  "don't",
  "123",
  "3.14",
  '{"location": "Zürich"}',
  "café",
  "e\u0301",
  "\u0301",
  "Å",
  "\u212b",
  "ﬁ",
  "x",
];

/** Fragments glued together without separators, so special tokens sit right next to text, spaces and partials. */
function fragmentText(contents: string[]): fc.Arbitrary<string> {
  const fragment = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...contents) },
    { weight: 3, arbitrary: fc.constantFrom(...PARTIALS) },
    { weight: 3, arbitrary: fc.constantFrom(...SPACES) },
    { weight: 2, arbitrary: fc.constantFrom(...EMOJI) },
    { weight: 2, arbitrary: fc.constantFrom(...CJK) },
    { weight: 3, arbitrary: fc.constantFrom(...WORDS) },
    { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 8 }) },
    { weight: 1, arbitrary: binaryString({ maxLength: 6 }) },
  );
  return fc.array(fragment, { maxLength: 40 }).map((parts) => parts.join(""));
}

describe("the packaged Qwen3 files", () => {
  it("qualify for the piecewise cache, and the wrapper uses it", () => {
    expect(segmentEncodingProblem(tokenizerJson)).toBeNull();
    expect(tokenizer.encodeCacheEnabled).toBe(true);
  });
});

describe("cached encode equals the library's encode of the whole text", () => {
  it("for random mixes of special tokens, partial-looking tokens, whitespace, emoji, CJK and arbitrary strings", () => {
    fc.assert(
      fc.property(fragmentText(addedContents()), (text) => {
        const expected = reference(text);
        expectEqual(tokenizer.encode(text), expected);
        expectEqual(tokenizer.encode(text), expected); // second time every piece comes from the cache
      }),
      { numRuns: 3000, seed: 20260803 },
    );
  });

  it("for texts that only look like special tokens, or hold one right next to text", () => {
    const texts = [
      "<|im_",
      "<|im_start",
      "<|im_start|",
      "<|im_start|>",
      "<|im_start|>>",
      "<<|im_start|>",
      "x<|im_start|>y",
      "<|im_start|><|im_end|>",
      "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
      "<think",
      "<think>",
      "</think>x",
      "a</think>b<think>c",
      "  <|im_end|>  ",
      "\n\n<|im_end|>\n\n",
      "<|im_end|>\u0301",
      "e<|im_end|>\u0301",
      "😀<|im_end|>😀",
      "明天<tool_call>呢</tool_call>",
      "",
      " ",
      "<|endoftext|><|endoftext|>",
      '<tool_response>\n{"temp": 20}\n</tool_response>',
    ];
    for (const text of texts) {
      expect({ text, ids: tokenizer.encode(text) }).toEqual({ text, ids: reference(text) });
    }
  });

  it("for real conversations rendered by the template, with random user and assistant texts", () => {
    const tito = createTito(tokenizer, { enable_thinking: false });
    const kwargs = tito.mergeKwargs({});
    const conversation = (userText: string, assistantText: string): ChatMessage[] => [
      ...buildInitialMessages(),
      {
        role: "assistant",
        content: "",
        reasoning_content: "让我查一下 🌦️ the weather…",
        tool_calls: [{ id: "call0", type: "function", function: { name: "get_weather", arguments: '{"location": "Zürich"}' } }],
      },
      { role: "tool", content: MOCK_TOOL_RESULTS[0], tool_call_id: "call0" },
      { role: "user", content: userText },
      { role: "assistant", content: assistantText },
      { role: "tool", content: MOCK_TOOL_RESULTS[1], tool_call_id: "call1" },
    ];
    fc.assert(
      fc.property(fragmentText(addedContents()), fragmentText(addedContents()), fc.boolean(), (user, assistant, generation) => {
        const text = tokenizer.renderChatTemplate(conversation(user, assistant), { tools: WEATHER_TOOLS, addGenerationPrompt: generation, kwargs });
        const expected = reference(text);
        expectEqual(tokenizer.encode(text), expected);
        expectEqual(tokenizer.encode(text), expected);
      }),
      { numRuns: 300, seed: 11 },
    );
  });

  it("returns a fresh array each time: editing a result changes no later result", () => {
    const text = "<|im_start|>user\nWhat's the weather in Beijing?<|im_end|>\n";
    const first = tokenizer.encode(text);
    const expected = [...first];
    first.push(1);
    first[0] = 7;
    expect(tokenizer.encode(text)).toEqual(expected);
    expect(tokenizer.encode(text)).not.toBe(tokenizer.encode(text));
  });
});

describe("the LRU bound", () => {
  it("keeps the cached characters within the bound, evicts least recently used pieces, and stays exact", () => {
    let encoded = 0;
    const cache = new SegmentEncodeCache(
      addedTokens,
      (text) => {
        encoded += 1;
        return reference(text);
      },
      40,
    );
    expect(cache.encode("<|im_start|>abcdefghij<|im_end|>")).toEqual(reference("<|im_start|>abcdefghij<|im_end|>"));
    expect([cache.size, cache.cachedChars, encoded]).toEqual([1, 10, 1]);
    cache.encode("0123456789012345678901234<|im_end|>"); // 25 chars: 35 in total
    cache.encode("abcdefghij"); // hit: now the most recently used
    expect(encoded).toBe(2);
    cache.encode("<think>ABCDEFGHIJ"); // 45 > 40: the 25-char piece (least recently used) goes
    expect([cache.size, cache.cachedChars, encoded]).toEqual([2, 20, 3]);
    cache.encode("abcdefghij");
    expect(encoded).toBe(3);
    cache.encode("0123456789012345678901234");
    expect(encoded).toBe(4);
    const tooLong = "x".repeat(41);
    expect(cache.encode(tooLong)).toEqual(reference(tooLong));
    expect(cache.cachedChars).toBeLessThanOrEqual(40);
    fc.assert(
      fc.property(fragmentText(["<|im_start|>", "<|im_end|>", "<think>"]), (text) => {
        expectEqual(cache.encode(text), reference(text));
        expect(cache.cachedChars).toBeLessThanOrEqual(40);
      }),
      { numRuns: 300, seed: 5 },
    );
    cache.clear();
    expect([cache.size, cache.cachedChars]).toEqual([0, 0]);
  });

  it("when every cached piece was used since insertion, evicts the oldest and keeps the new piece", () => {
    const encodedPieces: string[] = [];
    const cache = new SegmentEncodeCache(
      addedTokens,
      (text) => {
        encodedPieces.push(text);
        return reference(text);
      },
      40,
    );
    cache.encode("aaaaaaaaaa<|im_end|>bbbbbbbbbbbbbbbbbbbbbbbbb"); // 10 + 25 chars
    cache.encode("bbbbbbbbbbbbbbbbbbbbbbbbb<|im_end|>aaaaaaaaaa"); // both used
    cache.encode("cccccccccc"); // 45 > 40: the oldest ("a") goes
    expect([cache.size, cache.cachedChars]).toEqual([2, 35]);
    cache.encode("cccccccccc<|im_end|>bbbbbbbbbbbbbbbbbbbbbbbbb");
    expect(encodedPieces).toEqual(["aaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbb", "cccccccccc"]);
    cache.encode("aaaaaaaaaa");
    expect(encodedPieces).toHaveLength(4);
  });

  it("without added tokens caches whole texts", () => {
    const cache = new SegmentEncodeCache([], reference);
    expect(cache.encode("hello <|im_end|>")).toEqual(reference("hello <|im_end|>"));
    expect(cache.size).toBe(1);
  });
});

describe("cached pieces own their characters", () => {
  /** The engine's collector, reachable without starting Jest under --expose-gc. */
  function collector(): () => void {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as () => void;
  }

  it("a piece cut from a huge prompt keeps none of it alive once the prompt is dropped", () => {
    const gc = collector();
    const cache = new SegmentEncodeCache([{ id: 1, content: "<|sep|>" }], (text) => [text.length], 10_000);
    const parents = 20;
    const parentChars = 2_000_000;
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < parents; i += 1) {
      // the filler is longer than the bound (never cached); the short head is cached, cut out of this one string
      const text = `a piece of prompt number ${i}, cut out of a long render<|sep|>${String(i % 10).repeat(parentChars)}`;
      expect(cache.encode(text)).toEqual([text.indexOf("<|sep|>"), 1, parentChars]);
    }
    expect(cache.size).toBe(parents);
    gc();
    const retained = process.memoryUsage().heapUsed - before;
    // views into the prompts would keep 20 x 2 MB alive; owned copies keep about 20 x 60 characters
    expect(retained).toBeLessThan(parentChars * 4);
    expect(cache.encode("a piece of prompt number 7, cut out of a long render")).toEqual([52]);
    expect(cache.size).toBe(parents);
  });

  it("ownedString gives the same characters", () => {
    for (const text of ["", "short", "exactly 13 ch", "a longer text with 😀 and 東京 in it", "x".repeat(100)]) expect(ownedString(text)).toBe(text);
  });
});

describe("files where piecewise encoding is not provably exact", () => {
  it("are named with the reason", () => {
    const withToken = (patch: Record<string, unknown>) => editedJson((json) => Object.assign((json.added_tokens as Record<string, unknown>[])[1], patch));
    expect(segmentEncodingProblem(withToken({ lstrip: true }))).toBe('added token "<|im_start|>" strips its neighbours');
    expect(segmentEncodingProblem(withToken({ rstrip: true }))).toBe('added token "<|im_start|>" strips its neighbours');
    expect(segmentEncodingProblem(withToken({ normalized: true }))).toBe('added token "<|im_start|>" is normalized before matching');
    expect(segmentEncodingProblem(withToken({ normalized: undefined, special: false }))).toBe('added token "<|im_start|>" is normalized before matching');
    expect(
      segmentEncodingProblem(
        editedJson((json) => {
          json.pre_tokenizer = { type: "Sequence", pretokenizers: [{ type: "Metaspace", replacement: "▁", prepend_scheme: "first" }] };
        }),
      ),
    ).toBe('a Metaspace pre-tokenizer with prepend_scheme "first" depends on the section position');
    expect(segmentEncodingProblem(editedJson((json) => (json.normalizer = { type: "Sequence", normalizers: [{ type: "NFC" }, { type: "Mystery" }] })))).toBe(
      "normalizer type Mystery is not known to be section-local",
    );
    expect(segmentEncodingProblem(editedJson((json) => (json.post_processor = { type: "BertProcessing" })))).toBe(
      "post_processor type BertProcessing may change the ids",
    );
    expect(segmentEncodingProblem(editedJson((json) => (json.added_tokens = {})))).toBe("added_tokens is not a list");
    expect(segmentEncodingProblem(editedJson((json) => (json.normalizer = null)))).toBeNull();
  });

  it("fall back to the library, where a piecewise cache would have been wrong", () => {
    // <|im_end|> with lstrip: the library trims the whitespace before it, which a piecewise encode cannot see.
    const json = editedJson((copy) => Object.assign((copy.added_tokens as Record<string, unknown>[])[2], { lstrip: true }));
    const stripping = new HfTokenizer(json, tokenizerConfig);
    const wrapper = new Qwen3Tokenizer(json, tokenizerConfig, "edited tokenizer.json");
    expect(wrapper.encodeCacheEnabled).toBe(false);
    const text = "<|im_start|>user\nhi   <|im_end|>\n";
    const expected = stripping.encode(text, { add_special_tokens: false }).ids;
    expect(wrapper.encode(text)).toEqual(expected);
    const naive = new SegmentEncodeCache(json.added_tokens as AddedTokenSpec[], (piece) => stripping.encode(piece, { add_special_tokens: false }).ids);
    expect(naive.encode(text)).not.toEqual(expected);
  });
});
