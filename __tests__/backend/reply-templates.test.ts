// The mock's fast path for repeated bodies (no copy for a process function that ignores its request, the kept prompt,
// replies written from a template of the first reply) against the reference path, byte for byte: the same process
// unmarked (copied body, reply built and serialized), the msw transport, and the reference builders themselves.
import fc from "fast-check";
import { request as undiciRequest } from "undici";
import { startMockBackend, echoScript, weatherScript, type MockBackend } from "../../src/backend";
import { buildBackendHandlers, unknownPathResponse, type BackendOptions } from "../../src/backend/handlers";
import { serveHandlers, type HandlerBridge } from "../../src/backend/http-bridge";
import { chatCompletionJson, generateReplyJson, type PromptView, type ReplyContext } from "../../src/backend/replies";
import { fitsTemplate, makeTemplate, writeChatTemplate, writeGenerateTemplate, type ReplyTemplate } from "../../src/backend/reply-templates";
import { ignoresRequest, markRequestBlind } from "../../src/backend/request-blind";
import { WEATHER_SCRIPT_REPLIES } from "../../src/backend/scripts";
import type { MockReply } from "../../src/backend/errors";
import { resolveMockFormats } from "../../src/backend/mock-model";
import type { ProcessFunction, ProcessResult } from "../../src/backend/types";
import type { MockRoutingOptions } from "../../src/backend/routing-buffers";
import { loadTokenizer } from "../../src/tokenizer/load";
import type { ChatMessage, Tokenizer } from "../../src/tokenizer/types";
import { buildInitialMessages, MOCK_TOOL_RESULTS, USER_FOLLOWUP_TEXT, WEATHER_TOOLS } from "../../src/agent/texts";

let tokenizer: Tokenizer;
let imEnd: number;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  imEnd = tokenizer.tokenToId("<|im_end|>") as number;
});

/** An id source and a clock that give the same sequence to every backend made with them. */
function sequences(ids: readonly unknown[], times: readonly number[]): Pick<BackendOptions, "idSource" | "clock"> {
  let id = 0;
  let time = 0;
  return { idSource: () => ids[id++ % ids.length] as string, clock: () => times[time++ % times.length] };
}

/** A reply as the bridge would write it: status, header lines and body bytes (the text's UTF-8 when not written as bytes). */
function wire(reply: MockReply): { status: number; headers: Record<string, string>; body: string } {
  return {
    status: reply.status,
    headers: { ...reply.headers },
    body: (reply.parts ? Buffer.concat(reply.parts) : Buffer.from(reply.text, "utf8")).toString("hex"),
  };
}

/** Drives the direct route of handlers built with `options` (in-process: no socket). */
function directEngine(options: Omit<BackendOptions, "tokenizer">): (path: string, body: Buffer) => Promise<MockReply> {
  const { directRoute } = buildBackendHandlers({ tokenizer, ...options });
  if (directRoute === undefined) throw new Error("no direct route");
  return async (path, body) => (await directRoute("POST", path, Buffer.from(body), () => new Headers())) as MockReply;
}

/** The v2 server's chat body for a conversation so far: messages, tools and the rendered prompt's ids. */
function chatBody(messages: ChatMessage[]): Buffer {
  const text = tokenizer.renderChatTemplate(messages, { tools: WEATHER_TOOLS, addGenerationPrompt: true });
  const body = { messages, tools: WEATHER_TOOLS, temperature: 1, max_tokens: 256, logprobs: true, return_meta_info: true, input_ids: tokenizer.encode(text) };
  return Buffer.from(JSON.stringify(body));
}

/** The weather conversation's chat bodies, as an agent answering with the replies of `answer` would send them. */
async function weatherBodies(answer: (body: Buffer) => Promise<MockReply>): Promise<Buffer[]> {
  const messages = buildInitialMessages();
  const bodies: Buffer[] = [];
  let toolResult = 0;
  for (let step = 0; step < 7; step++) {
    const body = chatBody(messages);
    bodies.push(body);
    const reply = JSON.parse((await answer(body)).text) as {
      choices: { message: { content: string; tool_calls: { id: string; function: { name: string; arguments: string } }[] | null } }[];
    };
    const message = reply.choices[0].message;
    messages.push({ role: "assistant", content: message.content, ...(message.tool_calls ? { tool_calls: message.tool_calls } : {}) });
    if (message.tool_calls)
      messages.push({
        role: "tool",
        content: MOCK_TOOL_RESULTS[toolResult++ % MOCK_TOOL_RESULTS.length],
        tool_call_id: message.tool_calls[0].id,
      });
    else messages.push({ role: "user", content: USER_FOLLOWUP_TEXT });
  }
  return bodies;
}

describe("which process functions skip the copy", () => {
  test("the ready-made scripts are marked; a wrapper around one, or any other function, is not", () => {
    expect(ignoresRequest(weatherScript)).toBe(true);
    expect(ignoresRequest(echoScript)).toBe(true);
    expect(ignoresRequest((prompt, request, context) => weatherScript(prompt, request, context))).toBe(false);
    const marked = markRequestBlind(() => ({ text: "x" }));
    expect(ignoresRequest(marked)).toBe(true);
  });
});

describe("repeated weather bodies", () => {
  test("weatherScript's replies to a run's repeated bodies match the reference path byte for byte, and repeats take the template", async () => {
    const times = [1_800_000_000.25, 1_800_000_000.75, 1_800_000_001.5];
    const ids = ["0000abcd", "ffff0001", "12345678"];
    const fast = directEngine({ process: weatherScript, latencyMs: 1, ...sequences(ids, times) });
    const reference = directEngine({ process: (prompt, request, context) => weatherScript(prompt, request, context), latencyMs: 1, ...sequences(ids, times) });
    const bodies = await weatherBodies((body) => directEngine({ process: weatherScript })("/v1/chat/completions", body));
    expect(new Set(bodies.map((body) => body.toString())).size).toBe(bodies.length);
    let templated = 0;
    // each body as one of many trajectories sends it: four times, the steps interleaved
    for (let round = 0; round < 4; round++) {
      for (const body of bodies) {
        const [a, b] = [await fast("/v1/chat/completions", body), await reference("/v1/chat/completions", body)];
        expect(wire(a)).toEqual(wire(b));
        expect(a.text).toBe(b.text);
        expect(b.parts).toBeUndefined();
        if (a.parts !== undefined) templated++;
        // the first sight is parsed, the first repeat builds the template, later repeats are written from it
        expect([round, a.parts !== undefined]).toEqual([round, round >= 2]);
      }
    }
    expect(templated).toBe(2 * bodies.length);
  });

  test("over a loopback socket the bridge's bytes for templated replies match msw's handlers serving the same script", async () => {
    // both in the qwen3 family's formats (startMockBackend resolves them; the bare handlers are given them)
    const formats = resolveMockFormats({}).formats;
    const options = () => ({ tokenizer, process: weatherScript, formats, ...sequences(["00c0ffee", 'a\u00e9"b'], [1_800_000_000.5, -0.25]) });
    const direct: MockBackend = await startMockBackend(options());
    const built = buildBackendHandlers(options());
    const viaMsw: HandlerBridge = await serveHandlers(built.handlers, { onUnhandled: (unmatched) => unknownPathResponse(built.stats, unmatched) });
    try {
      const bodies = await weatherBodies((body) => directEngine({ process: weatherScript })("/v1/chat/completions", body));
      const raw = async (url: string, body: Buffer) => {
        const reply = await undiciRequest(`${url}/v1/chat/completions`, { method: "POST", body, headers: { "content-type": "application/json" } });
        const headers = Object.entries(reply.headers).filter(([name]) => !["date", "connection", "keep-alive"].includes(name));
        return { status: reply.statusCode, headers, body: Buffer.from(await reply.body.arrayBuffer()).toString("hex") };
      };
      for (let round = 0; round < 3; round++) {
        for (const body of bodies.slice(0, 4)) expect(await raw(direct.url, body)).toEqual(await raw(viaMsw.url, body));
      }
      expect(direct.requestLog).toEqual(built.stats.requestLog);
    } finally {
      await direct.close();
      await viaMsw.close();
    }
  });
});

test("a reply past the template size bound (routed experts of a long prompt) is built every time, with the same bytes", async () => {
  const routing = { routedExperts: { numLayers: 64, topk: 64, numExperts: 64 } };
  const ids = ["0000abcd"];
  const times = [1_800_000_000.5];
  const fast = directEngine({ process: weatherScript, ...routing, ...sequences(ids, times) });
  const reference = directEngine({ process: (prompt, request, context) => weatherScript(prompt, request, context), ...routing, ...sequences(ids, times) });
  const body = Buffer.from(JSON.stringify({ input_ids: Array.from({ length: 100 }, (_, i) => 1000 + i), return_routed_experts: true }));
  for (let round = 0; round < 3; round++) {
    const [a, b] = [await fast("/v1/chat/completions", body), await reference("/v1/chat/completions", body)];
    expect(a.text.length).toBeGreaterThan(1024 * 1024);
    expect(a.parts).toBeUndefined();
    expect(a.text).toBe(b.text);
  }
});

/** How a generated result is handed over: plain, or in a form whose reads the fast path must not trust. */
type ResultForm = "plain" | "null-prototype" | "same-object" | "flipping-getter" | "proxy" | "class" | "meta-getter" | "meta-object" | "throws";

interface ResultSpec {
  text: string;
  finish_reason?: "stop" | "tool_calls" | "length" | "abort";
  cached_tokens?: number;
  output_logprobs_seed?: number;
  meta?: [string, unknown][];
  form: ResultForm;
}

const texts = fc.oneof(
  fc.constantFrom(
    WEATHER_SCRIPT_REPLIES.beijingCall.text,
    WEATHER_SCRIPT_REPLIES.beijingSummary.text,
    "Zürich ☀ 東京",
    "lone \ud800 surrogate",
    "",
    'Calling.\n<tool_call>\n{"name": "get_weather", "arguments": {"location": "Zürich"}}\n</tool_call>',
  ),
  fc.string({ maxLength: 8 }),
);
const metaValues = fc.oneof(fc.constantFrom<unknown>(-0, 0, null, undefined, true, "w0", "w1", Number.NaN, 1e21, -1.5), fc.string({ maxLength: 4 }));
const resultSpecs: fc.Arbitrary<ResultSpec> = fc.record(
  {
    text: texts,
    finish_reason: fc.constantFrom("stop", "tool_calls", "length", "abort"),
    cached_tokens: fc.nat(4),
    output_logprobs_seed: fc.nat(3),
    meta: fc.array(fc.tuple(fc.constantFrom("weight_version", "completion_tokens", "output_token_logprobs", "x", "2", "1"), metaValues), { maxLength: 3 }),
    form: fc.constantFrom<ResultForm>(
      "plain",
      "plain",
      "plain",
      "null-prototype",
      "same-object",
      "flipping-getter",
      "proxy",
      "class",
      "meta-getter",
      "meta-object",
      "throws",
    ),
  },
  { requiredKeys: ["text", "form"] },
);

class ClassResult {
  constructor(private readonly spec: ResultSpec) {}
  get text(): string {
    return this.spec.text;
  }
}

/**
 * A process function answering its n-th call with the n-th spec (cycled), each backend's own counter: a getter that
 * alternates its value per read, a proxy whose reads alternate too, and the rest, so the two paths see equal results.
 */
function scheduled(specs: readonly ResultSpec[]): ProcessFunction {
  let calls = 0;
  const same = new Map<ResultSpec, ProcessResult>();
  return () => {
    const spec = specs[calls++ % specs.length];
    const meta = spec.meta === undefined ? undefined : Object.fromEntries(spec.meta);
    const base: ProcessResult = { text: spec.text };
    if (spec.finish_reason !== undefined) base.finish_reason = spec.finish_reason;
    if (spec.cached_tokens !== undefined) base.cached_tokens = spec.cached_tokens;
    if (spec.output_logprobs_seed !== undefined) base.output_logprobs_seed = spec.output_logprobs_seed;
    if (meta !== undefined) base.meta_info = meta;
    let reads = 0;
    switch (spec.form) {
      case "plain":
        return base;
      case "null-prototype":
        return Object.assign(Object.create(null) as ProcessResult, base);
      case "same-object":
        if (!same.has(spec)) same.set(spec, base);
        return same.get(spec) as ProcessResult;
      case "flipping-getter":
        return Object.defineProperty(base, "text", { get: () => (reads++ % 2 === 0 ? spec.text : `${spec.text}!`), enumerable: true });
      case "proxy":
        return new Proxy(base, { get: (target, key) => (key === "cached_tokens" ? reads++ % 3 : Reflect.get(target, key)) });
      case "class":
        return new ClassResult(spec);
      case "meta-getter":
        return { ...base, meta_info: Object.defineProperty({ ...meta }, "weight_version", { get: () => `w${reads++}`, enumerable: true }) };
      case "meta-object":
        return { ...base, meta_info: { ...meta, nested: { deep: [-0, "v"] } } };
      case "throws":
        throw new Error(`scripted failure for ${JSON.stringify(spec.text)}`);
    }
  };
}

/** Request bodies of many shapes (chat with ids, generate with ids or text, streams, bad ids, messages only). */
const bodyShapes = fc.oneof(
  fc.record(
    {
      input_ids: fc.oneof(
        { weight: 4, arbitrary: fc.array(fc.integer({ min: 0, max: 151_000 }), { minLength: 1, maxLength: 6 }) },
        { weight: 1, arbitrary: fc.constantFrom<unknown>([1, -2], "nope") },
      ),
      text: texts,
      messages: fc.constantFrom(buildInitialMessages()),
      tools: fc.constantFrom<unknown>(WEATHER_TOOLS, []),
      stream: fc.boolean(),
      model: fc.string({ maxLength: 4 }),
      return_prompt_token_ids: fc.boolean(),
      return_routed_experts: fc.boolean(),
      routed_experts_start_len: fc.integer({ min: 0, max: 2 }),
      return_indexer_topk: fc.boolean(),
    },
    { requiredKeys: [] },
  ),
);
const hex8 = fc.integer({ min: 0, max: 0xffffffff }).map((value) => value.toString(16).padStart(8, "0"));
const idValues = fc.oneof(hex8, fc.constantFrom<unknown>('a"b', "é", "\ud800", "", "x".repeat(40), 7, -0), fc.string({ maxLength: 3 }));
const timeValues = fc.constantFrom(1_800_000_000.5, 1_800_000_001.25, -0, -0.5, Number.NaN, 1e21, 0.999);
const routingOptions = fc.constantFrom<MockRoutingOptions>(
  {},
  { routedExperts: { numLayers: 2, topk: 2, numExperts: 8 }, indexerTopk: { numLayers: 1, topk: 2 } },
);

test("generated repeats through the fast path and the reference path give the same status, headers and bytes", async () => {
  let templated = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(bodyShapes, { minLength: 1, maxLength: 3 }),
      fc.array(fc.tuple(fc.nat(), fc.constantFrom("/v1/chat/completions", "/generate")), { minLength: 6, maxLength: 16 }),
      fc.array(resultSpecs, { minLength: 1, maxLength: 3 }),
      fc.array(idValues, { minLength: 1, maxLength: 3 }),
      fc.array(timeValues, { minLength: 1, maxLength: 3 }),
      fc.record({
        emitStopToken: fc.boolean(),
        model: fc.constantFrom(undefined, "served-model"),
        formats: fc
          .constantFrom(undefined, "qwen3", "qwennext")
          .map((family) => (family === undefined ? undefined : resolveMockFormats({ titoModel: family }).formats)),
      }),
      routingOptions,
      async (shapes, sends, specs, ids, times, engineOptions, routing) => {
        const fast = directEngine({ process: markRequestBlind(scheduled(specs)), ...engineOptions, ...routing, ...sequences(ids, times) });
        const reference = directEngine({ process: scheduled(specs), ...engineOptions, ...routing, ...sequences(ids, times) });
        const bodies = shapes.map((shape) => Buffer.from(JSON.stringify(shape)));
        for (const [pick, path] of sends) {
          const body = bodies[pick % bodies.length];
          const [a, b] = [await fast(path, body), await reference(path, body)];
          expect(wire(a)).toEqual(wire(b));
          expect(a.text).toBe(b.text);
          if (a.parts !== undefined) templated++;
        }
      },
    ),
    { numRuns: 150, seed: 29 },
  );
  // the property is not vacuous: many of the generated repeats were written from a template
  expect(templated).toBeGreaterThan(80);
});

describe("the rule that lets a template answer", () => {
  interface Inputs {
    result: ProcessResult;
    id: string;
    now: number;
    stopTokenId: number | undefined;
    emitStopToken: boolean;
    model: string;
    routing: boolean;
    numLayers: number;
    family: "qwen25" | "qwen3" | "qwennext";
  }

  const plainResults = resultSpecs.map((spec): ProcessResult => {
    const result: ProcessResult = { text: spec.text };
    if (spec.finish_reason !== undefined) result.finish_reason = spec.finish_reason;
    if (spec.cached_tokens !== undefined) result.cached_tokens = spec.cached_tokens;
    if (spec.output_logprobs_seed !== undefined) result.output_logprobs_seed = spec.output_logprobs_seed;
    if (spec.meta !== undefined) result.meta_info = Object.fromEntries(spec.meta);
    return result;
  });
  const inputs: fc.Arbitrary<Inputs> = fc.record({
    result: plainResults,
    id: fc.oneof(hex8, fc.constantFrom('a"b', "é", "\ud800")),
    now: timeValues,
    stopTokenId: fc.constantFrom(undefined, 151645, 151643),
    emitStopToken: fc.boolean(),
    model: fc.constantFrom("mock-model", "other"),
    routing: fc.boolean(),
    numLayers: fc.constantFrom(1, 2),
    family: fc.constantFrom<Inputs["family"]>("qwen25", "qwen3", "qwennext"),
  });
  /** A second request's inputs: the first's, or the first's with one field changed (the result's fields, the context's). */
  const changed = (first: Inputs): fc.Arbitrary<Inputs> =>
    fc.oneof(
      fc.constant({ ...first, result: { ...first.result, meta_info: first.result.meta_info && { ...first.result.meta_info } } }),
      fc.record({ id: inputs.map((x) => x.id), now: timeValues }).map((holes) => ({ ...first, ...holes })),
      inputs.map((other) => ({ ...first, result: { ...first.result, text: other.result.text } })),
      fc
        .constantFrom<Partial<ProcessResult>>(
          { finish_reason: "length" },
          { finish_reason: "stop" },
          { cached_tokens: 3 },
          { output_logprobs_seed: 1 },
          { output_logprobs_seed: undefined },
        )
        .map((field) => ({ ...first, result: { ...first.result, ...field } })),
      fc
        .tuple(fc.constantFrom("weight_version", "x", "1"), metaValues)
        .map(([key, value]) => ({ ...first, result: { ...first.result, meta_info: { ...first.result.meta_info, [key]: value } } })),
      fc.constant({ ...first, result: { ...first.result, meta_info: Object.fromEntries(Object.entries(first.result.meta_info ?? { a: 1, b: 2 }).reverse()) } }),
      inputs.map((other) => ({
        ...first,
        stopTokenId: other.stopTokenId,
        emitStopToken: other.emitStopToken,
        model: other.model,
        routing: other.routing,
        numLayers: other.numLayers,
        family: other.family,
      })),
    );

  /** One formats object per family, as an engine holds its own for every request. */
  const familyFormats = {
    qwen25: undefined,
    qwen3: resolveMockFormats({ titoModel: "qwen3" }).formats,
    qwennext: resolveMockFormats({ titoModel: "qwennext" }).formats,
  };
  const body = { tools: WEATHER_TOOLS, return_routed_experts: true, input_ids: [9707, 11, 1879] };
  const prompt: PromptView = { text: "Hello, world", ids: body.input_ids };
  const context = (input: Inputs): ReplyContext => ({
    tokenizer,
    formats: familyFormats[input.family],
    stopTokenId: input.stopTokenId,
    emitStopToken: input.emitStopToken,
    model: input.model,
    now: () => input.now,
    newId: () => input.id,
    routing: input.routing
      ? {
          request: { routedExperts: true, startRow: 0, indexerTopk: false },
          options: { routedExperts: { numLayers: input.numLayers, topk: 1, numExperts: 4 } },
        }
      : undefined,
  });
  const reference = (kind: "chat" | "generate", input: Inputs): string =>
    kind === "chat" ? chatCompletionJson(body, prompt, input.result, context(input)) : generateReplyJson(prompt, input.result, context(input));
  /** Integer-like `meta_info` keys go first in the `/generate` reply's `meta_info`, before its id: no template then. */
  const idFirst = (kind: "chat" | "generate", result: ProcessResult): boolean =>
    kind === "chat" || !Object.entries(result.meta_info ?? {}).some(([key, value]) => value !== undefined && /^(0|[1-9]\d*)$/.test(key));
  const templateOf = (kind: "chat" | "generate", input: Inputs): ReplyTemplate | undefined => {
    const template = makeTemplate(kind, reference(kind, input), input.result, context(input), input.id, input.now);
    expect([kind, input.result, template !== undefined]).toEqual([kind, input.result, idFirst(kind, input.result)]);
    return template;
  };
  const written = (kind: "chat" | "generate", template: ReplyTemplate, input: Inputs): MockReply =>
    kind === "chat" ? writeChatTemplate(template, context(input)) : writeGenerateTemplate(template, input.id);

  test.each(["chat", "generate"] as const)("a %s template fits a second request only when the reference writes the same reply around the holes", (kind) => {
    let fitted = 0;
    let refused = 0;
    fc.assert(
      fc.property(
        inputs.chain((first) => fc.tuple(fc.constant(first), changed(first))),
        ([first, second]) => {
          const template = templateOf(kind, first);
          if (template === undefined) return;
          expect(fitsTemplate(template, first.result, context(first))).toBe(true);
          const expected = reference(kind, second);
          if (fitsTemplate(template, second.result, context(second))) {
            fitted++;
            const reply = written(kind, template, second);
            expect(Buffer.concat(reply.parts as Buffer[]).toString("hex")).toBe(Buffer.from(expected, "utf8").toString("hex"));
            expect(reply.text).toBe(expected);
            expect(reply.headers).toEqual({ "content-type": "application/json", "content-length": String(Buffer.byteLength(expected, "utf8")) });
          } else {
            refused++;
          }
        },
      ),
      { numRuns: 400, seed: 29 },
    );
    expect(fitted).toBeGreaterThan(80);
    expect(refused).toBeGreaterThan(80);
  });

  test.each(["chat", "generate"] as const)("a %s template fits a copy of its result with any other id and time", (kind) => {
    fc.assert(
      fc.property(inputs, inputs, (first, holes) => {
        const second = {
          ...first,
          id: holes.id,
          now: holes.now,
          result: { ...first.result, meta_info: first.result.meta_info && { ...first.result.meta_info } },
        };
        const template = templateOf(kind, first);
        if (template === undefined) return;
        expect(fitsTemplate(template, second.result, context(second))).toBe(true);
        expect(written(kind, template, second).text).toBe(reference(kind, second));
      }),
      { numRuns: 200, seed: 29 },
    );
  });

  test("results whose reads could differ or call code make no template and fit none", () => {
    const plain: ProcessResult = { text: "hi", meta_info: { weight_version: "w0" } };
    const input: Inputs = {
      result: plain,
      id: "00000001",
      now: 1_800_000_000,
      stopTokenId: imEnd,
      emitStopToken: true,
      model: "m",
      routing: false,
      numLayers: 1,
      family: "qwen25",
    };
    const template = templateOf("chat", input) as ReplyTemplate;
    const awkward: ProcessResult[] = [
      Object.defineProperty({ meta_info: { weight_version: "w0" } }, "text", { get: () => "hi", enumerable: true }) as ProcessResult,
      new Proxy(plain, {}),
      { text: "hi", meta_info: Object.defineProperty({}, "weight_version", { get: () => "w0", enumerable: true }) },
      { text: "hi", meta_info: { weight_version: "w0", extra: { nested: true } } },
      { text: "hi", meta_info: new Proxy({ weight_version: "w0" }, {}) },
      Object.assign(Object.create({ finish_reason: "length" }) as ProcessResult, plain),
    ];
    for (const result of awkward) {
      expect(fitsTemplate(template, result, context(input))).toBe(false);
      expect(makeTemplate("chat", reference("chat", { ...input, result }), result, context(input), input.id, input.now)).toBeUndefined();
    }
    // an accessor has no value in its descriptor: it must not pass for a kept undefined
    const unset = { ...input, result: { text: "hi", meta_info: { weight_version: undefined } } };
    const withUnset = templateOf("chat", unset) as ReplyTemplate;
    const getter = { text: "hi", meta_info: Object.defineProperty({}, "weight_version", { get: () => "w1", enumerable: true }) };
    expect(fitsTemplate(withUnset, getter, context(unset))).toBe(false);
    expect(reference("chat", { ...unset, result: getter })).toContain('"weight_version":"w1"');
    // a non-string id or a non-number time makes none either (their spelling would have to be reproduced)
    expect(makeTemplate("chat", reference("chat", input), plain, context(input), 1, input.now)).toBeUndefined();
    expect(makeTemplate("chat", reference("chat", input), plain, context(input), input.id, "1800000000")).toBeUndefined();
  });
});
