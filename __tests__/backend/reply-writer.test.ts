// The mock's reply writer (per-token arrays spliced in as cached JSON text) against the reference path: the reply
// objects built and written by stringifyReplyJson. Every character must agree, for generated request and result shapes.
import fc from "fast-check";
import { loadTokenizer } from "../../src/tokenizer/load";
import type { Tokenizer, ToolSpec } from "../../src/tokenizer/types";
import {
  buildChatCompletion,
  buildGenerateReply,
  chatCompletionJson,
  chatCompletionSseText,
  chatCompletionToSse,
  generateReplyJson,
  type ReplyContext,
} from "../../src/backend/replies";
import { stringifyReplyJson } from "../../src/backend/reply-json";
import { numberJson } from "../../src/backend/reply-token-json";
import { resolveMockFormats } from "../../src/backend/mock-model";
import { WEATHER_SCRIPT_REPLIES } from "../../src/backend/scripts";
import { WEATHER_TOOLS } from "../../src/agent/texts";
import type { ProcessResult } from "../../src/backend/types";
import type { MockRoutingOptions } from "../../src/backend/routing-buffers";
import { binaryString } from "../support/binary-unit";

let tokenizer: Tokenizer;
let imEnd: number;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  imEnd = tokenizer.tokenToId("<|im_end|>") as number;
});

interface Shape {
  body: Record<string, unknown>;
  prompt: { text: string; ids: number[] };
  result: ProcessResult;
  emitStopToken: boolean;
  withStopToken: boolean;
  formats: "none" | "qwen3" | "qwennext";
  routing: boolean;
}

/** Two contexts that hand out the same ids and clock, so the reference and the fast writer can be compared. */
function contexts(shape: Shape): [ReplyContext, ReplyContext] {
  const routingOptions: MockRoutingOptions = { routedExperts: { numLayers: 2, topk: 2, numExperts: 8 }, indexerTopk: { numLayers: 1, topk: 2 } };
  const make = (): ReplyContext => {
    let next = 0;
    return {
      tokenizer,
      stopTokenId: shape.withStopToken ? imEnd : undefined,
      formats: shape.formats === "none" ? undefined : resolveMockFormats({ titoModel: shape.formats }).formats,
      emitStopToken: shape.emitStopToken,
      model: "mock-model",
      now: () => 1_800_000_000.75,
      newId: () => (next++).toString(16).padStart(8, "0"),
      routing: shape.routing ? { request: { routedExperts: true, startRow: 1, indexerTopk: true }, options: routingOptions } : undefined,
    };
  };
  return [make(), make()];
}

/** Strings with lone surrogates, controls, quotes and non-ASCII text among plain ones. */
const oddText = fc.oneof(
  fc.string(),
  binaryString(),
  fc.string({ unit: fc.constantFrom("\ud83d", "\ude00", "😀", "\u0000", '"', "\\", "\u2028", "é", "東", "a", " ") }),
);

const toolCallText = fc.tuple(fc.constantFrom("", "Calling.", "Let me look up Paris."), oddText, fc.boolean()).map(([lead, city, twice]) => {
  const block = `<tool_call>\n${JSON.stringify({ name: "get_weather", arguments: { location: city } })}\n</tool_call>`;
  return [lead, block, ...(twice ? [block] : [])].filter((part) => part !== "").join("\n");
});

const completionText = fc.oneof(
  fc.constantFrom(...Object.values(WEATHER_SCRIPT_REPLIES).map((reply) => reply.text)),
  toolCallText,
  oddText,
  fc.constant("<think>\nweighing it\n</think>\n\nBeijing is sunny."),
);

/** meta_info values: JSON values, negative zeros (alone and nested), undefined (dropped), and keys that override. */
const extraValue = fc.oneof(fc.jsonValue(), fc.constant(-0), fc.constant([[-0, 1], { z: -0 }]), fc.constant(undefined), oddText);
const extras = fc.dictionary(
  fc.constantFrom("weight_version", "output_token_logprobs", "prompt_tokens", "cached_tokens", "0", "7", "e2e_latency", "routed_experts"),
  extraValue,
  { maxKeys: 4 },
);

const shapes: fc.Arbitrary<Shape> = fc.record({
  body: fc.record(
    {
      tools: fc.constantFrom<ToolSpec[] | null | string>(WEATHER_TOOLS as ToolSpec[], [], null, "not a list"),
      model: fc.oneof(fc.string(), fc.constant(""), fc.constant(42)),
      return_prompt_token_ids: fc.boolean(),
    },
    { requiredKeys: [] },
  ),
  prompt: fc.record({
    text: fc.string(),
    ids: fc.array(fc.oneof(fc.nat({ max: 151_000 }), fc.constant(-0)), { maxLength: 12 }),
  }),
  result: fc.record(
    {
      text: completionText,
      finish_reason: fc.constantFrom("stop", "tool_calls", "length", "abort"),
      cached_tokens: fc.nat({ max: 64 }),
      meta_info: extras,
      output_logprobs_seed: fc.integer(),
    },
    { requiredKeys: ["text"] },
  ),
  emitStopToken: fc.boolean(),
  withStopToken: fc.boolean(),
  formats: fc.constantFrom("none", "qwen3", "qwennext"),
  routing: fc.boolean(),
});

/** Compares one shape twice in a row (the second reply reuses what the first one cached). */
function expectSameBytes(shape: Shape): void {
  const [reference, fast] = contexts(shape);
  for (let round = 0; round < 2; round++) {
    const chatReference = stringifyReplyJson(buildChatCompletion(shape.body, shape.prompt, shape.result, reference));
    expect(chatCompletionJson(shape.body, shape.prompt, shape.result, fast)).toBe(chatReference);
    const generateReference = stringifyReplyJson(buildGenerateReply(shape.prompt, shape.result, reference));
    expect(generateReplyJson(shape.prompt, shape.result, fast)).toBe(generateReference);
    const sseReference = chatCompletionToSse(buildChatCompletion(shape.body, shape.prompt, shape.result, reference));
    expect(chatCompletionSseText(shape.body, shape.prompt, shape.result, fast)).toBe(sseReference);
  }
}

test("chat, generate and stream replies: the same bytes as the reply objects written by stringifyReplyJson", () => {
  fc.assert(
    fc.property(shapes, (shape) => expectSameBytes(shape)),
    { numRuns: 300, seed: 29 },
  );
});

test("the kept array JSON belongs to one text and one ending: stop token or not, default or planned log-probs", () => {
  const text = WEATHER_SCRIPT_REPLIES.beijingSummary.text;
  const base: Shape = {
    body: {},
    prompt: { text: "p", ids: [1, 2, 3] },
    result: { text },
    emitStopToken: true,
    withStopToken: true,
    formats: "qwen3",
    routing: false,
  };
  // one text, several endings and log-prob sources, interleaved: a cache keyed on the text alone would mix them up
  for (const shape of [
    base,
    { ...base, emitStopToken: false },
    { ...base, result: { text, finish_reason: "length" as const } },
    { ...base, result: { text, output_logprobs_seed: 5 } },
    { ...base, result: { text, output_logprobs_seed: 6 } },
    base,
    { ...base, result: { text, meta_info: { output_token_logprobs: "overridden" } } },
    { ...base, withStopToken: false },
  ]) {
    expectSameBytes(shape);
  }
  const [, fast] = contexts(base);
  const pairs = (JSON.parse(chatCompletionJson({}, base.prompt, { text }, fast)) as { choices: { meta_info: Record<string, unknown> }[] }).choices[0].meta_info
    .output_token_logprobs as [number, number][];
  expect(pairs.map((pair) => pair[1])).toEqual([...tokenizer.encode(text), imEnd]);
  expect(Object.is(pairs[0][0], -0)).toBe(true);
});

test("token texts outside ASCII are written as the reference writes them (raw UTF-8, escapes for controls)", () => {
  const shape: Shape = {
    body: { tools: WEATHER_TOOLS },
    prompt: { text: "p", ids: [] },
    result: { text: '東京 ☀ café \u0001 "quoted" \\ 😀' },
    emitStopToken: true,
    withStopToken: true,
    formats: "none",
    routing: true,
  };
  expectSameBytes(shape);
});

test("numberJson spells every number as stringifyReplyJson does", () => {
  fc.assert(
    fc.property(fc.oneof(fc.double(), fc.integer(), fc.constantFrom(-0, 0, NaN, Infinity, -Infinity, 1e21, 5e-324)), (value) => {
      expect(numberJson(value)).toBe(stringifyReplyJson(value));
      expect(`[${numberJson(value)}]`).toBe(stringifyReplyJson([value]));
    }),
    { numRuns: 500, seed: 29 },
  );
});
