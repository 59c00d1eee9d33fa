// The render-ids memo: exact keys, bounds, fresh copies, failures never remembered, and a memoizing Qwen3Tito
// that returns exactly what an unmemoized one does while rendering a repeated conversation only once.
import { beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import { loadTokenizer, Qwen3Tito, RenderedIdsMemo, type ChatMessage, type ChatTemplateKwargs, type Qwen3Tokenizer, type ToolSpec } from "../../src/tokenizer";
import { countingTokenizer } from "./counting-tokenizer";

let tokenizer: Qwen3Tokenizer;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
});

describe("RenderedIdsMemo", () => {
  it("computes once per exact input and hands out fresh copies nobody can use to alter the memo", () => {
    const memo = new RenderedIdsMemo();
    let computed = 0;
    const compute = () => {
      computed += 1;
      return [computed, 7];
    };
    const first = memo.get(["a", { n: 1 }], compute);
    first.push(99);
    const again = memo.get(["a", { n: 1 }], compute);
    expect(again).toEqual([1, 7]);
    again[0] = -1;
    expect(memo.get(["a", { n: 1 }], compute)).toEqual([1, 7]);
    expect(memo.get(["a", { n: -0 }], compute)).toEqual([2, 7]); // -0 is not 0
    expect(memo.get(["a", { n: 1, m: undefined }], compute)).toEqual([3, 7]);
    expect(computed).toBe(3);
    expect(memo.size).toBe(3);
  });

  it("never remembers inputs without an exact key, nor failed computations", () => {
    const memo = new RenderedIdsMemo();
    let computed = 0;
    const odd = [{ when: new Date(0) }];
    memo.get(odd, () => [(computed += 1)]);
    expect(memo.get(odd, () => [(computed += 1)])).toEqual([2]);
    expect(() =>
      memo.get(["x"], () => {
        throw new Error("render failed");
      }),
    ).toThrow("render failed");
    expect(memo.get(["x"], () => [5])).toEqual([5]);
    expect(memo.size).toBe(1);
    memo.clear();
    expect(memo.size).toBe(0);
  });

  it("keeps within its entry and unit bounds, dropping the least recently used first", () => {
    const computed: number[] = [];
    const get = (memo: RenderedIdsMemo, n: number, length = 1) =>
      memo.get([n], () => {
        computed.push(n);
        return new Array<number>(length).fill(n);
      });
    const byEntries = new RenderedIdsMemo(2, 1_000_000);
    get(byEntries, 1);
    get(byEntries, 2);
    get(byEntries, 1); // hit: 2 is now the least recently used
    get(byEntries, 3);
    get(byEntries, 1);
    get(byEntries, 2);
    expect(computed).toEqual([1, 2, 3, 2]);
    expect(byEntries.size).toBe(2);

    const byUnits = new RenderedIdsMemo(100, 100);
    for (let n = 10; n < 20; n += 1) get(byUnits, n, 30);
    expect(byUnits.size).toBeGreaterThan(0);
    expect(byUnits.size).toBeLessThanOrEqual(3);
    expect(get(byUnits, 99, 500)).toHaveLength(500); // larger than the whole bound: returned, not remembered
    const before = computed.length;
    get(byUnits, 99, 500);
    expect(computed.length).toBe(before + 1);
  });
});

describe("Qwen3Tito with memoizeRenders", () => {
  const history = (turns: number, city: string): ChatMessage[] => {
    const messages = buildInitialMessages();
    for (let turn = 0; turn < turns; turn += 1) {
      messages.push({
        role: "assistant",
        content: "",
        tool_calls: [{ id: `call${turn}`, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ location: city }) } }],
      });
      messages.push({ role: "tool", content: MOCK_TOOL_RESULTS[turn % 4], tool_call_id: `call${turn}` });
    }
    messages.push({ role: "assistant", content: `It is ${MOCK_TOOL_RESULTS[turns % 4]} in ${city}.` });
    return messages;
  };
  const toolsOf = (pick: number): readonly ToolSpec[] | null => (pick === 0 ? null : WEATHER_TOOLS);
  const kwargsOf = (pick: number): ChatTemplateKwargs | undefined =>
    pick === 0 ? undefined : pick === 1 ? { enable_thinking: true } : { enable_thinking: false };

  it("returns what an unmemoized instance returns for prompts, appended suffixes and canonical ids", () => {
    const { tokenizer: counting } = countingTokenizer(tokenizer);
    const memoized = new Qwen3Tito(counting, { enable_thinking: false }, { memoizeRenders: true });
    const plain = new Qwen3Tito(tokenizer, { enable_thinking: false });
    fc.assert(
      fc.property(
        fc.nat(3),
        fc.constantFrom("Beijing", "Zürich", "東京"),
        fc.nat(1),
        fc.nat(2),
        fc.string({ maxLength: 12 }),
        (turns, city, toolPick, kwargPick, text) => {
          const old = history(turns, city);
          const next = [...old, { role: "user", content: text } as ChatMessage];
          const tools = toolsOf(toolPick);
          const kwargs = kwargsOf(kwargPick);
          expect(memoized.renderPromptIds(next, tools, kwargs)).toEqual(plain.renderPromptIds(next, tools, kwargs));
          expect(memoized.mergeTokens(old, next, [1, 151645], tools, kwargs)).toEqual(plain.mergeTokens(old, next, [1, 151645], tools, kwargs));
          expect(memoized.canonicalIds(old, tools, kwargs)).toEqual(plain.canonicalIds(old, tools, kwargs));
        },
      ),
      { numRuns: 120, seed: 23 },
    );
  });

  it("renders a repeated conversation once, an equal copy of it too, and a changed one again", () => {
    const { tokenizer: counting, renders } = countingTokenizer(tokenizer);
    const tito = new Qwen3Tito(counting, { enable_thinking: false }, { memoizeRenders: true });
    const messages = history(2, "Beijing");
    const first = tito.canonicalIds(messages, WEATHER_TOOLS);
    expect(renders()).toBe(1);
    first.length = 0; // the caller's copy only
    expect(tito.canonicalIds(structuredClone(messages), structuredClone(WEATHER_TOOLS))).toEqual(
      tokenizer.encode(tokenizer.renderChatTemplate(messages, { tools: WEATHER_TOOLS, kwargs: tito.mergeKwargs({}) })),
    );
    expect(renders()).toBe(1);
    tito.canonicalIds(history(2, "Shanghai"), WEATHER_TOOLS);
    tito.canonicalIds(messages, WEATHER_TOOLS, { enable_thinking: true });
    tito.renderPromptIds(messages, WEATHER_TOOLS); // a prompt render is not a canonical one
    expect(renders()).toBe(4);

    const appended = [...messages, { role: "user", content: "And tomorrow?" } as ChatMessage];
    tito.tokenizeAppended(messages, appended, WEATHER_TOOLS);
    const afterFirst = renders(); // prefix + full render
    expect(tito.tokenizeAppended(history(3, "Beijing"), [...history(3, "Beijing"), appended[appended.length - 1]], WEATHER_TOOLS)).toEqual(
      new Qwen3Tito(tokenizer, { enable_thinking: false }).tokenizeAppended(messages, appended, WEATHER_TOOLS),
    );
    expect(renders()).toBe(afterFirst); // same appended message after the same stored tool calls (none): no render
  });

  it("still refuses what the unmemoized rules refuse, every time", () => {
    const tito = new Qwen3Tito(tokenizer, { enable_thinking: false }, { memoizeRenders: true });
    const messages = history(1, "Beijing");
    const bad = [...messages, { role: "developer", content: "x" } as ChatMessage];
    for (let i = 0; i < 2; i += 1) {
      expect(() => tito.tokenizeAppended(messages, bad, WEATHER_TOOLS)).toThrow(/role "developer"/);
      expect(() => tito.renderPromptIds(messages, WEATHER_TOOLS, { clear_thinking: true })).toThrow(/conflicts/);
    }
  });
});
