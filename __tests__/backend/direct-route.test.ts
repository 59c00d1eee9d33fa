// The loopback bridge's fast path (direct route: no Fetch objects, headers built only when read, the log keeping
// body bytes, replies written as bytes) against msw's handlers on the same kind of bridge, for generated requests.
import fc from "fast-check";
import { request as undiciRequest } from "undici";
import { startMockBackend, useMockBackend, type MockBackend } from "../../src/backend";
import { buildBackendHandlers, unknownPathResponse } from "../../src/backend/handlers";
import { serveHandlers, type HandlerBridge } from "../../src/backend/http-bridge";
import { ReplyPlanRegistry } from "../../src/backend/reply-plans";
import { resolveMockFormats } from "../../src/backend/mock-model";
import { LatencyWaits } from "../../src/backend/latency-waits";
import { loadTokenizer } from "../../src/tokenizer/load";
import type { Tokenizer } from "../../src/tokenizer/types";
import type { ProcessFunction } from "../../src/backend/types";
import { buildInitialMessages, WEATHER_TOOLS } from "../../src/agent/texts";

const fixedIds = (): (() => string) => {
  let next = 0;
  return () => (next++).toString(16).padStart(8, "0");
};
const clock = (): number => 1_800_000_000.5;

/** Echoes the prompt's tail and a request header it reads; "tool please" answers a tool call; "explode" throws. */
const process: ProcessFunction = (prompt, _request, context) => {
  if (prompt.includes("explode")) throw new Error("scripted failure");
  const seen = context?.headers.get("x-test-note") ?? "none";
  if (prompt.includes("tool please")) {
    return { text: 'Calling.\n<tool_call>\n{"name": "get_weather", "arguments": {"location": "Zürich"}}\n</tool_call>', meta_info: { seen } };
  }
  return { text: `echo ${prompt.slice(-24)}`, meta_info: { seen, weight_version: "w0" } };
};

let tokenizer: Tokenizer;
let direct: MockBackend;
let viaMsw: HandlerBridge;
let mswLog: () => Record<string, unknown>[];
const plans = { direct: new ReplyPlanRegistry(), msw: new ReplyPlanRegistry() };

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  direct = await startMockBackend({ tokenizer, process, clock, idSource: fixedIds(), plans: plans.direct });
  // the bare handlers in the family's formats, as startMockBackend resolves them (a planned reply thinks as the prompt asks)
  const built = buildBackendHandlers({ tokenizer, process, clock, idSource: fixedIds(), plans: plans.msw, formats: resolveMockFormats({}).formats });
  expect(built.directRoute).toBeDefined();
  // no direct route: every request becomes a Fetch Request and goes through msw
  viaMsw = await serveHandlers(built.handlers, { onUnhandled: (unmatched) => unknownPathResponse(built.stats, unmatched) });
  mswLog = () => built.stats.requestLog;
});

afterAll(async () => {
  await direct.close();
  await viaMsw.close();
});

/** Status, every header but the per-connection ones, in order, and the body bytes of one POST. */
async function raw(url: string, path: string, body: Buffer, headers: Record<string, string>) {
  const reply = await undiciRequest(`${url}${path}`, { method: "POST", body, headers });
  const kept = Object.entries(reply.headers).filter(([name]) => !["date", "connection", "keep-alive"].includes(name));
  return { status: reply.statusCode, headers: kept, body: Buffer.from(await reply.body.arrayBuffer()).toString("hex") };
}

const messages = (text: string) => [...buildInitialMessages().slice(0, 1), { role: "user", content: text }];
const userText = fc.oneof(fc.constantFrom("hello", "tool please", "explode", "Zürich ☀ 東京"), fc.string({ maxLength: 12 }));

/** Request bodies as bytes: JSON objects of many shapes, plus a BOM, invalid UTF-8, non-objects and broken JSON. */
const bodies = fc.oneof(
  fc
    .record(
      {
        messages: userText.map(messages),
        input_ids: fc.array(fc.integer({ min: 0, max: 151_000 }), { minLength: 1, maxLength: 8 }),
        text: userText,
        tools: fc.constantFrom<unknown>(WEATHER_TOOLS, [], "nope"),
        stream: fc.boolean(),
        model: fc.string({ maxLength: 6 }),
        return_prompt_token_ids: fc.boolean(),
        routed_experts_start_len: fc.integer({ min: -1, max: 3 }),
      },
      { requiredKeys: [] },
    )
    .map((value) => Buffer.from(JSON.stringify(value), "utf8")),
  userText.map((text) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ messages: messages(text) }))])),
  fc.constantFrom(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), Buffer.from("[1,2]"), Buffer.from("{oops"), Buffer.from(""), Buffer.from('"\ud83d"')),
);

test("direct route and msw's handlers answer every request with the same status, header lines and bytes, and log the same", async () => {
  const startDirect = direct.requestLog.length;
  const startMsw = mswLog().length;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom("/v1/chat/completions", "/generate"),
      bodies,
      fc.option(fc.constantFrom("a note", "Zürich"), { nil: undefined }),
      async (path, body, note) => {
        const headers: Record<string, string> = { "content-type": "application/json", ...(note === undefined ? {} : { "x-test-note": encodeURI(note) }) };
        const [a, b] = [await raw(direct.url, path, body, headers), await raw(viaMsw.url, path, body, headers)];
        expect(a).toEqual(b);
      },
    ),
    { numRuns: 120, seed: 29 },
  );
  expect(direct.requestLog.slice(startDirect)).toEqual(mswLog().slice(startMsw));
  expect(direct.requestLog.length - startDirect).toBe(120);
});

test("with a plan registered the direct route reads the routing headers and answers from the plan as msw's handlers do", async () => {
  const replies = [{ text: "planned one", weight_version: "p1", logprob_seed: 3 }];
  plans.direct.register("session-7", replies);
  plans.msw.register("session-7", replies);
  try {
    const body = Buffer.from(JSON.stringify({ messages: messages("hello") }));
    const headers = { "content-type": "application/json", "x-smg-routing-key": "session-7", "x-session-parity-call": "0" };
    const [a, b] = [await raw(direct.url, "/v1/chat/completions", body, headers), await raw(viaMsw.url, "/v1/chat/completions", body, headers)];
    expect(a).toEqual(b);
    expect(Buffer.from(a.body, "hex").toString("utf8")).toContain('"weight_version":"p1"');
  } finally {
    plans.direct.unregister("session-7");
    plans.msw.unregister("session-7");
  }
});

describe("latency waits", () => {
  test("a wait ends when its signal aborts; a wait on an aborted signal ends at once; other signals are untouched", async () => {
    const waits = new LatencyWaits();
    const first = new AbortController();
    const second = new AbortController();
    const ended = waits.wait(60_000, first.signal);
    const kept = waits.wait(5, second.signal);
    first.abort();
    await expect(ended).rejects.toThrow("aborted");
    await expect(waits.wait(5, first.signal)).rejects.toThrow("aborted");
    await expect(kept).resolves.toBeUndefined();
    await expect(waits.wait(1, undefined)).resolves.toBeUndefined();
  });

  test("the in-process backend ends a pending wait with 503 on close and waits again after listen() with its new signal", async () => {
    const backend = useMockBackend({ tokenizer, process, latencyMs: 30, origin: "http://latency-backend.localhost:4321" });
    const body = JSON.stringify({ messages: messages("hello") });
    backend.listen();
    try {
      const pending = fetch(`${backend.url}/v1/chat/completions`, { method: "POST", body });
      while (backend.currentConcurrent === 0) await new Promise((resolve) => setImmediate(resolve));
      backend.close();
      backend.listen();
      const ended = await pending;
      expect(ended.status).toBe(503);
      expect(((await ended.json()) as { message: string }).message).toBe("mock backend is shutting down");
      const again = await fetch(`${backend.url}/v1/chat/completions`, { method: "POST", body });
      expect(again.status).toBe(200);
    } finally {
      backend.close();
    }
  });
});

test("repeated byte-identical bodies answer alike even when the process function changes the body it is given", async () => {
  // echoes what it was given, then vandalizes it: a body shared between requests would show in the next echo
  const vandal: ProcessFunction = (_prompt, request) => {
    const echo = JSON.stringify(request);
    (request.input_ids as number[] | undefined)?.push(7);
    delete request.messages;
    (request as Record<string, unknown>).extra = { added: true };
    return { text: echo };
  };
  const repeated = await startMockBackend({ tokenizer, process: vandal, clock, idSource: fixedIds() });
  const built = buildBackendHandlers({ tokenizer, process: vandal, clock, idSource: fixedIds() });
  const mswOnly = await serveHandlers(built.handlers);
  try {
    const headers = { "content-type": "application/json" };
    const bodies = [{ messages: messages("again") }, { input_ids: [151644, 872, 198], messages: messages("ids") }];
    /** The reply without its id (the two backends hand out ids in their own order). */
    const withoutId = (reply: { status: number; body: string }) => {
      const json = JSON.parse(Buffer.from(reply.body, "hex").toString("utf8")) as Record<string, unknown>;
      delete json.id;
      return { status: reply.status, json };
    };
    for (const body of bodies) {
      const bytes = Buffer.from(JSON.stringify(body));
      const replies = [];
      for (let round = 0; round < 3; round++) replies.push(withoutId(await raw(repeated.url, "/v1/chat/completions", bytes, headers)));
      const reference = withoutId(await raw(mswOnly.url, "/v1/chat/completions", bytes, headers));
      // the echo shows the body each process call was given; prompt_tokens counts the ids the process left behind
      expect((reference.json.choices as { message: { content: string } }[])[0].message.content).toBe(JSON.stringify(body));
      expect(replies).toEqual([reference, reference, reference]);
    }
    // the log shows each body as it was sent
    expect(repeated.requestLog).toEqual(bodies.flatMap((body) => [body, body, body]));
  } finally {
    await repeated.close();
    await mswOnly.close();
  }
});
