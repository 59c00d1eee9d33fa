// Keys put together from the keys of their parts (exactDataKeyAt at the parts' depth) are exactDataKey's own text for
// the whole, on random and adversarial values (-0, NaN, undefined, class instances, nesting at the depth bound); the
// canonical render memo keyed by a caller's names for its inputs answers exactly what an unmemoized render does.
import { beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import { exactDataKey, exactDataKeyAt, loadTokenizer, Qwen3Tito, type ChatMessage, type Qwen3Tokenizer } from "../../src/tokenizer";
import { countingTokenizer } from "./counting-tokenizer";
import { PyFloat } from "../../src/wire/py-json";
import { expectSame } from "../support/fast-expect";

/** `depth` arrays around `inner`. */
function nested(depth: number, inner: unknown): unknown {
  let value = inner;
  for (let i = 0; i < depth; i += 1) value = [value];
  return value;
}

/** Leaves a lossy key would merge, and values without an exact key. */
const leaf = fc.oneof(
  fc.constantFrom<unknown>(0, -0, 1, 1.5, Number.NaN, Infinity, -Infinity, null, undefined, true, "", "0", "-0", "null", "undefined", '"', "\\"),
  fc.constantFrom<unknown>(new PyFloat(1), new Date(0)),
  fc.string({ maxLength: 4 }),
  fc.double(),
  fc.integer(),
);

/** JSON-like trees with the leaves above, now and then nested right at the bound (64 containers). */
const tree = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    leaf,
    fc.array(tie("node"), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom("a", "b", "role", "content", "__proto__x"), tie("node"), { maxKeys: 4 }),
    fc.tuple(fc.integer({ min: 56, max: 64 }), leaf).map(([depth, inner]) => nested(depth, inner)),
  ),
})).node;

/** The whole key from the parts' keys at depth 1, as the server's path keys build it; undefined when a part has none. */
function fromParts(parts: readonly unknown[]): string | undefined {
  const keys = parts.map((part) => exactDataKeyAt(part, 1));
  return keys.some((key) => key === undefined) ? undefined : `[${keys.join(",")}]`;
}

describe("exactDataKeyAt", () => {
  it("is exactDataKey at depth 0, and a list's key is its items' keys at depth 1 (random values)", () => {
    let keyed = 0;
    fc.assert(
      fc.property(fc.array(tree, { maxLength: 5 }), (parts) => {
        expectSame(exactDataKeyAt(parts, 0), exactDataKey(parts));
        const whole = exactDataKey(parts);
        expectSame(fromParts(parts), whole);
        if (whole !== undefined) keyed += 1;
      }),
      { numRuns: 3000, seed: 29 },
    );
    expect(keyed).toBeGreaterThan(500);
  });

  it("counts the depth bound from the outermost container: a part keyed at the wrong depth would differ", () => {
    // 63 arrays around 1 fit at depth 0 (the innermost array sits at depth 62), not at depth 1 or 2
    const deep = nested(63, 1);
    expect(exactDataKeyAt(deep, 0)).toBeDefined();
    expect(exactDataKeyAt(deep, 1)).toBeDefined();
    expect(exactDataKeyAt(deep, 2)).toBeUndefined();
    expect(exactDataKey([[deep]])).toBeUndefined();
    expect(fromParts([[deep]])).toBeUndefined();
    // the same part keyed standalone (depth 0) would have given the whole a key its exactDataKey does not have
    const wrong = `[[${exactDataKeyAt(deep, 0)}]]`;
    expect(wrong).not.toBe(exactDataKey([[deep]]));
  });

  it("keeps -0, NaN, undefined and key order apart in the parts as in the whole", () => {
    const groups: unknown[][] = [
      [0, -0],
      [null, Number.NaN, undefined],
      [
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ],
      [{ a: undefined }, {}],
    ];
    for (const group of groups) {
      const keys = group.map((value) => exactDataKeyAt(value, 2));
      expect(new Set(keys).size).toBe(group.length);
      group.forEach((value, i) => expect(`[[${keys[i]}]]`).toBe(exactDataKey([[value]])));
    }
  });
});

let tokenizer: Qwen3Tokenizer;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
});

describe("canonicalIds with the caller's names for its inputs", () => {
  const conversation = (city: string, extra: unknown): ChatMessage[] => [
    ...buildInitialMessages(),
    {
      role: "assistant",
      content: `Looking up ${city}.`,
      tool_calls: [{ id: "c0", type: "function", function: { name: "get_weather", arguments: `{"location": "${city}"}` } }],
    },
    { role: "tool", content: MOCK_TOOL_RESULTS[0], tool_call_id: "c0", extra },
  ];

  it("gives an unmemoized render's ids, rendering once per name and kwargs, apart from the exact keys' entries", () => {
    const { tokenizer: counting, renders } = countingTokenizer(tokenizer);
    const memoized = new Qwen3Tito(counting, { enable_thinking: false }, { memoizeRenders: true });
    const plain = new Qwen3Tito(tokenizer, { enable_thinking: false });
    const extras: unknown[] = [undefined, 0, -0, 1.5, { b: 1, a: 2 }, { a: 2, b: 1 }];
    let expected = 0;
    extras.forEach((extra, n) => {
      for (const tools of [WEATHER_TOOLS, null]) {
        const messages = conversation(n % 2 === 0 ? "Beijing" : "東京", extra);
        const name = `${n},${tools === null ? 0 : 1}`;
        const reference = plain.canonicalIds(messages, tools);
        // first by name (a render), then by name again and under other kwargs, then by value (its own entry)
        expect(memoized.canonicalIds(messages, tools, undefined, name)).toEqual(reference);
        expect(memoized.canonicalIds(structuredClone(messages), tools, undefined, name)).toEqual(reference);
        expect(memoized.canonicalIds(messages, tools, { enable_thinking: true }, name)).toEqual(plain.canonicalIds(messages, tools, { enable_thinking: true }));
        expect(memoized.canonicalIds(messages, tools)).toEqual(reference);
        expected += 3;
        expect(renders()).toBe(expected);
      }
    });
  });

  it("renders every time for a null name (inputs without an exact key)", () => {
    const { tokenizer: counting, renders } = countingTokenizer(tokenizer);
    const memoized = new Qwen3Tito(counting, {}, { memoizeRenders: true });
    const messages = conversation("Beijing", new PyFloat(1));
    const reference = new Qwen3Tito(tokenizer).canonicalIds(messages, WEATHER_TOOLS);
    for (let i = 0; i < 3; i += 1) expect(memoized.canonicalIds(messages, WEATHER_TOOLS, undefined, null)).toEqual(reference);
    expect(renders()).toBe(3);
  });
});
