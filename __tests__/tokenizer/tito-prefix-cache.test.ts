// The cached [dummySystem, dummyAssistant] prefix render: keys that never confuse different inputs, bounds, and
// tokenizeAppended results identical to an uncached computation while the prefix is rendered once per input.
import { beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import {
  exactDataKey,
  loadTokenizer,
  Qwen3Tito,
  TitoPrefixCache,
  type ChatMessage,
  type ChatTemplateKwargs,
  type Qwen3Tokenizer,
  type ToolCall,
  type ToolSpec,
} from "../../src/tokenizer";
import { countingTokenizer } from "./counting-tokenizer";
import { expectEqual, expectSame } from "../support/fast-expect";

let tokenizer: Qwen3Tokenizer;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
});

describe("exactDataKey", () => {
  it("keeps apart values that a lossy serialization would merge", () => {
    const groups: unknown[][] = [
      [0, -0],
      [null, Number.NaN, "NaN", undefined, "undefined", "null"],
      [Infinity, -Infinity, "Infinity", "-Infinity"],
      [{ a: undefined }, {}, { a: null }],
      [
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ],
      [
        [1, [2]],
        [[1], 2],
        [1, 2],
        ["1", 2],
      ],
      [{ "a:b": 1 }, { a: { b: 1 } }, { a: "b:1" }],
      [true, "true", 1],
    ];
    for (const group of groups) {
      const keys = group.map((value) => exactDataKey(value));
      expect(keys.every((key) => typeof key === "string")).toBe(true);
      expect(new Set(keys).size).toBe(group.length);
    }
    expect(exactDataKey([WEATHER_TOOLS, { enable_thinking: false }])).toBe(exactDataKey(structuredClone([WEATHER_TOOLS, { enable_thinking: false }])));
  });

  it("gives equal keys only to equal data (random JSON-like values)", () => {
    const value = fc.jsonValue();
    fc.assert(
      fc.property(value, value, (a, b) => {
        const same = exactDataKey(a) === exactDataKey(b);
        expectSame(same, Object.is(JSON.stringify(a), JSON.stringify(b)) && sameIncludingNegativeZero(a, b));
      }),
      { numRuns: 2000, seed: 3 },
    );
  });

  it("refuses what it cannot describe exactly", () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    let deep: unknown = 1;
    for (let i = 0; i < 70; i += 1) deep = [deep];
    class Point {
      x = 1;
    }
    // eslint-disable-next-line no-sparse-arrays -- a holey array is one of the values under test
    const odd = [() => 1, Symbol("s"), 1n, new Map(), new Date(0), new Uint8Array(2), new Point(), [1, , 3], cycle, deep, { f: () => 1 }];
    for (const value of odd) {
      expect(exactDataKey(value)).toBeUndefined();
    }
  });
});

function sameIncludingNegativeZero(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "number") return Object.is(a, b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => sameIncludingNegativeZero(item, b[i]));
  if (a && b && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((key, i) => key === kb[i] && sameIncludingNegativeZero((a as never)[key], (b as never)[key]));
  }
  return a === b;
}

describe("TitoPrefixCache", () => {
  const call = (city: string): ToolCall[] => [{ id: "c", type: "function", function: { name: "get_weather", arguments: { location: city } } }];

  it("renders once per distinct input and returns the cached render afterwards", () => {
    const cache = new TitoPrefixCache();
    let renders = 0;
    const render = (text: string) => () => {
      renders += 1;
      return text;
    };
    expect(cache.get(WEATHER_TOOLS, { a: 1 }, call("Beijing"), render("one"))).toBe("one");
    expect(cache.get(structuredClone(WEATHER_TOOLS), { a: 1 }, call("Beijing"), render("other"))).toBe("one");
    expect(cache.get(WEATHER_TOOLS, { a: 2 }, call("Beijing"), render("two"))).toBe("two");
    expect(cache.get(WEATHER_TOOLS, { a: 1 }, call("Shanghai"), render("three"))).toBe("three");
    expect(cache.get(null, { a: 1 }, call("Beijing"), render("four"))).toBe("four");
    expect(renders).toBe(4);
    expect(cache.size).toBe(4);
  });

  it("never caches inputs without an exact key, nor failed renders", () => {
    const cache = new TitoPrefixCache();
    let renders = 0;
    const odd = { when: new Date(0) } as ChatTemplateKwargs;
    cache.get(null, odd, [], () => `r${(renders += 1)}`);
    expect(cache.get(null, odd, [], () => `r${(renders += 1)}`)).toBe("r2");
    expect(() =>
      cache.get(null, {}, [], () => {
        throw new Error("template failed");
      }),
    ).toThrow("template failed");
    expect(cache.get(null, {}, [], () => "ok")).toBe("ok");
    expect(cache.size).toBe(1);
  });

  it("keeps within its entry and character bounds, dropping the least recently used first", () => {
    const byEntries = new TitoPrefixCache(2, 1_000_000);
    const renders: string[] = [];
    const get = (cache: TitoPrefixCache, n: number, text = `r${n}`) =>
      cache.get(null, { n }, [], () => {
        renders.push(text);
        return text;
      });
    get(byEntries, 1);
    get(byEntries, 2);
    get(byEntries, 1); // hit: 2 is now the least recently used
    get(byEntries, 3);
    expect(byEntries.size).toBe(2);
    get(byEntries, 1);
    get(byEntries, 2);
    expect(renders).toEqual(["r1", "r2", "r3", "r2"]);

    const byChars = new TitoPrefixCache(100, 100);
    const long = "x".repeat(30);
    for (let n = 0; n < 10; n += 1) get(byChars, n, long);
    expect(byChars.cachedChars).toBeLessThanOrEqual(100);
    expect(byChars.size).toBeGreaterThan(0);
    const huge = "y".repeat(200);
    expect(get(byChars, 99, huge)).toBe(huge);
    expect(byChars.cachedChars).toBeLessThanOrEqual(100);
  });
});

describe("tokenizeAppended with the cached prefix", () => {
  const cities = ["Beijing", "Shanghai", "Zürich", "東京"];
  const toolCallsOf = (pick: number): ToolCall[] | null | undefined => {
    if (pick === 0) return undefined;
    if (pick === 1) return null;
    if (pick === 2) return [];
    return [{ id: `call${pick}`, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ location: cities[pick % cities.length] }) } }];
  };
  const toolsOf = (pick: number): readonly ToolSpec[] | null => (pick === 0 ? null : pick === 1 ? WEATHER_TOOLS : [{ name: "noop", parameters: {} }]);
  const kwargsOf = (pick: number): ChatTemplateKwargs | undefined =>
    pick === 0 ? undefined : pick === 1 ? { enable_thinking: true } : { enable_thinking: false, extra: pick };

  it("gives the uncached result for random tools, kwargs, stored tool calls and appended messages, rendering each prefix once", () => {
    const { tokenizer: counting, renders: prefixRenders } = countingTokenizer(tokenizer, (options) => !options?.addGenerationPrompt);
    const cached = new Qwen3Tito(counting, { enable_thinking: false });
    const distinct = new Set<string>();
    fc.assert(
      fc.property(fc.nat(5), fc.nat(2), fc.nat(3), fc.nat(3), fc.string({ maxLength: 20 }), (callPick, toolPick, kwargPick, appendPick, text) => {
        const stored: ChatMessage = { role: "assistant", content: "ok", tool_calls: toolCallsOf(callPick) };
        const old: ChatMessage[] = [{ role: "user", content: "What's the weather?" }, stored];
        const appended: ChatMessage[] = [
          [{ role: "tool", content: MOCK_TOOL_RESULTS[0], tool_call_id: "call3" }],
          [{ role: "user", content: text }],
          [
            { role: "tool", content: text },
            { role: "system", content: "reminder" },
          ],
          [],
        ][appendPick];
        const tools = toolsOf(toolPick);
        const kwargs = kwargsOf(kwargPick);
        const fresh = new Qwen3Tito(tokenizer, { enable_thinking: false });
        const before = prefixRenders();
        expectEqual(cached.tokenizeAppended(old, [...old, ...appended], tools, kwargs), fresh.tokenizeAppended(old, [...old, ...appended], tools, kwargs));
        const key = JSON.stringify([callPick < 3 ? [] : toolCallsOf(callPick), toolPick, kwargPick]);
        expectSame(prefixRenders() - before, distinct.has(key) ? 0 : 1);
        distinct.add(key);
      }),
      { numRuns: 300, seed: 17 },
    );
    expect(prefixRenders()).toBe(distinct.size);
  });
});
