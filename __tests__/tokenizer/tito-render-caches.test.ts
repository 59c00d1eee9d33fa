// Render caches shared by several TITO rule sets (an embedded v1 and v2 server in one process): every rule set gets
// exactly the ids an unshared one computes, a conversation is rendered once for all of them, and the bounds still hold.
import { afterEach, beforeAll, describe, expect, it, jest } from "@jest/globals";
import fc from "fast-check";
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import {
  loadTitoModel,
  loadTokenizer,
  Qwen3Tito,
  RenderedIdsMemo,
  sharedTitoRenderCaches,
  TitoPrefixCache,
  TitoRenderCaches,
  type ChatMessage,
  type ChatTemplateKwargs,
  type Qwen3Tokenizer,
  type ToolSpec,
} from "../../src/tokenizer";
import { countingTokenizer } from "./counting-tokenizer";

let tokenizer: Qwen3Tokenizer;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
});

afterEach(() => {
  jest.restoreAllMocks();
});

function history(turns: number, city: string): ChatMessage[] {
  const messages = buildInitialMessages();
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push({
      role: "assistant",
      content: turn === 0 ? "Checking." : "",
      tool_calls: [{ id: `call${turn}`, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ location: city }) } }],
    });
    messages.push({ role: "tool", content: MOCK_TOOL_RESULTS[turn % 4], tool_call_id: `call${turn}` });
  }
  messages.push({ role: "assistant", content: `It is ${MOCK_TOOL_RESULTS[turns % 4]} in ${city}.` });
  return messages;
}

describe("TitoRenderCaches shared by two rule sets", () => {
  it("give each rule set exactly the ids of an unshared one, whatever the defaults, tools and kwargs", () => {
    const caches = new TitoRenderCaches();
    const first = countingTokenizer(tokenizer);
    const second = countingTokenizer(tokenizer);
    // different server defaults: their merged kwargs differ, so their entries never meet
    const sharedA = new Qwen3Tito(first.tokenizer, { enable_thinking: false }, { memoizeRenders: true, renderCaches: caches });
    const sharedB = new Qwen3Tito(second.tokenizer, {}, { memoizeRenders: true, renderCaches: caches });
    const plainA = new Qwen3Tito(tokenizer, { enable_thinking: false });
    const plainB = new Qwen3Tito(tokenizer, {});
    fc.assert(
      fc.property(
        fc.nat(3),
        fc.constantFrom("Beijing", "Zürich", "東京"),
        fc.boolean(),
        fc.constantFrom<ChatTemplateKwargs | undefined>(undefined, { enable_thinking: true }, { enable_thinking: false }),
        fc.string({ maxLength: 12 }),
        (turns, city, withTools, kwargs, text) => {
          const old = history(turns, city);
          const next = [...old, { role: "user", content: text } as ChatMessage];
          const tools: readonly ToolSpec[] | null = withTools ? WEATHER_TOOLS : null;
          for (const [shared, plain] of [
            [sharedA, plainA],
            [sharedB, plainB],
          ] as const) {
            expect(shared.renderPromptIds(next, tools, kwargs)).toEqual(plain.renderPromptIds(next, tools, kwargs));
            expect(shared.mergeTokens(old, next, [1, 151645], tools, kwargs)).toEqual(plain.mergeTokens(old, next, [1, 151645], tools, kwargs));
            expect(shared.canonicalIds(old, tools, kwargs)).toEqual(plain.canonicalIds(old, tools, kwargs));
          }
        },
      ),
      { numRuns: 80, seed: 46 },
    );
    expect(caches.renderedIds.size).toBeGreaterThan(0);
  });

  it("render a conversation once for both: the second rule set finds the first one's renders", () => {
    const caches = new TitoRenderCaches();
    const first = countingTokenizer(tokenizer);
    const second = countingTokenizer(tokenizer);
    const v1 = new Qwen3Tito(first.tokenizer, { enable_thinking: false }, { memoizeRenders: true, renderCaches: caches });
    const v2 = new Qwen3Tito(second.tokenizer, { enable_thinking: false }, { memoizeRenders: true, renderCaches: caches });
    const old = history(2, "Lisbon");
    const next = [...old, { role: "user", content: "And tomorrow?" } as ChatMessage];
    const fromV1 = [v1.renderPromptIds(old, WEATHER_TOOLS), v1.mergeTokens(old, next, [7, 151645], WEATHER_TOOLS), v1.canonicalIds(old, WEATHER_TOOLS)];
    expect(first.renders()).toBeGreaterThan(0);
    const fromV2 = [v2.renderPromptIds(old, WEATHER_TOOLS), v2.mergeTokens(old, next, [7, 151645], WEATHER_TOOLS), v2.canonicalIds(old, WEATHER_TOOLS)];
    expect(fromV2).toEqual(fromV1);
    expect(second.renders()).toBe(0);
    // unshared: the second rule set renders everything again
    const own = countingTokenizer(tokenizer);
    const alone = new Qwen3Tito(own.tokenizer, { enable_thinking: false }, { memoizeRenders: true });
    expect([
      alone.renderPromptIds(old, WEATHER_TOOLS),
      alone.mergeTokens(old, next, [7, 151645], WEATHER_TOOLS),
      alone.canonicalIds(old, WEATHER_TOOLS),
    ]).toEqual(fromV1);
    expect(own.renders()).toBe(first.renders());
  });

  it("keep the bounds of the set as a whole, however many rule sets fill it", () => {
    const caches = new TitoRenderCaches(new TitoPrefixCache(2, 1_000_000), new RenderedIdsMemo(3, 1_000_000));
    const titos = [0, 1, 2].map(() => new Qwen3Tito(tokenizer, {}, { memoizeRenders: true, renderCaches: caches }));
    for (let i = 0; i < 12; i += 1) {
      const tito = titos[i % titos.length];
      const old = history(1 + (i % 3), `City ${i}`);
      tito.renderPromptIds(old, WEATHER_TOOLS);
      tito.mergeTokens(old, [...old, { role: "user", content: `question ${i}` }], [151645], WEATHER_TOOLS);
    }
    expect(caches.renderedIds.size).toBe(3);
    expect(caches.prefixRenders.size).toBeLessThanOrEqual(2);
  });

  it("without memoizeRenders, a rule set uses only the shared prefix renders", () => {
    const caches = new TitoRenderCaches();
    const tito = new Qwen3Tito(tokenizer, {}, { renderCaches: caches });
    const old = history(1, "Oslo");
    tito.mergeTokens(old, [...old, { role: "user", content: "Thanks" }], [151645], WEATHER_TOOLS);
    expect([caches.renderedIds.size, caches.prefixRenders.size]).toEqual([0, 1]);
  });
});

describe("sharedTitoRenderCaches", () => {
  it("is one set per vocabulary, template and family object, and another for any other", () => {
    const vocabulary = {};
    const template = {};
    const set = sharedTitoRenderCaches(vocabulary, template, "qwen3");
    expect(sharedTitoRenderCaches(vocabulary, template, "qwen3")).toBe(set);
    expect(sharedTitoRenderCaches(vocabulary, {}, "qwen3")).not.toBe(set);
    expect(sharedTitoRenderCaches({}, template, "qwen3")).not.toBe(set);
    expect(sharedTitoRenderCaches(vocabulary, template, "glm47")).not.toBe(set);
  });

  it("lets two models loaded with shareRenderCaches render a conversation once, and keeps unshared loads apart", async () => {
    const a = await loadTitoModel({ titoModel: "qwen3", tito: { memoizeRenders: true }, shareRenderCaches: true });
    const b = await loadTitoModel({ titoModel: "qwen3", tito: { memoizeRenders: true }, shareRenderCaches: true });
    const c = await loadTitoModel({ titoModel: "qwen3", tito: { memoizeRenders: true } });
    expect(b.tokenizer.chatTemplate).toBe(a.tokenizer.chatTemplate); // the bundled template is parsed once per process
    const render = jest.spyOn(a.tokenizer.chatTemplate, "render");
    const messages = history(3, "Reykjavík"); // no other test of this file renders it
    const ids = a.tito.renderPromptIds(messages, WEATHER_TOOLS);
    expect(render).toHaveBeenCalledTimes(1);
    expect(b.tito.renderPromptIds(messages, WEATHER_TOOLS)).toEqual(ids);
    expect(render).toHaveBeenCalledTimes(1);
    expect(c.tito.renderPromptIds(messages, WEATHER_TOOLS)).toEqual(ids);
    expect(render).toHaveBeenCalledTimes(2);
  });
});
