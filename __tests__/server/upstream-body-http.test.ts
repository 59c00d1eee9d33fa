// Every chat body a session server sends upstream must be the bytes of `json.dumps(body)` (Python's default spelling,
// what the shell spelled whole before the prompt ids were copied from the turn a request builds on): driven over real
// HTTP with the real tokenizer and the mock backend behind a recording proxy, through random trajectories of
// extensions, retries (v1 rollbacks, v2 siblings), branches from any earlier turn, refused deep rollbacks, mid-run
// views, deletes and routing replay's additional-R3 offset.
// mirrors miles/rollout/session/core.py::chat_completions (the body is `json.dumps`-ed for the backend).
import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import fc from "fast-check";
import { echoScript, startMockBackend, type MockBackend } from "../../src/backend";
import * as chatRequest from "../../src/server/chat-request";
import * as upstreamBody from "../../src/server/upstream-body";
import type { AnyTrajectoryPolicy } from "../../src/server/policy";
import { startSessionServer, type RunningSessionServer, type SessionServerOptions } from "../../src/server/session-server";
import { createV1Policy } from "../../src/server/v1";
import { createV2Policy } from "../../src/server/v2";
import { dumpsPy, PY_DEFAULT_JSON } from "../../src/wire/py-json";
import { startForwardingProxy } from "./support/forwarding-proxy";
import { call, createSession } from "./v2/support/harness";

const ROUTED = { numLayers: 2, topk: 2, numExperts: 4 };

/** A loopback proxy to the backend that keeps the raw bytes of every chat body it forwards. */
async function startRecordingProxy(backendUrl: string): Promise<{ url: string; bodies: Buffer[]; close(): Promise<void> }> {
  const bodies: Buffer[] = [];
  const forwarding = await startForwardingProxy(backendUrl, (body) => {
    bodies.push(body);
  });
  return { url: forwarding.url, bodies, close: forwarding.close };
}

let backend: MockBackend;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
const servers = new Map<string, RunningSessionServer>();
/** Every upstream body object the shell built, in order (the oracle spells them as the shell used to). */
const built: Record<string, unknown>[] = [];
/** How many bodies were spelled with a base whose ids they extend (so the copy was taken), and how many without. */
const spelled = { copied: 0, whole: 0 };

function extendsBase(base: upstreamBody.SentBody | undefined, ids: unknown): boolean {
  return base !== undefined && base.idsStart >= 0 && Array.isArray(ids) && base.ids.length > 0 && base.ids.every((id, i) => ids[i] === id);
}

/**
 * A policy that gives no base-record hint: the shell then tries the newest stored record, which a retry, a rollback
 * or a branch does not extend, so the shell's id-by-id prefix check decides.
 */
function withoutHint(policy: AnyTrajectoryPolicy): AnyTrajectoryPolicy {
  return {
    ...policy,
    prepare(state, request, ctx) {
      const { baseRecord: _hint, ...prepared } = policy.prepare(state, request, ctx);
      return prepared;
    },
  };
}

const SETUPS: Array<[string, Partial<SessionServerOptions>]> = [
  ["v1", { version: "v1" }],
  ["v1, miles 31f1ca96", { version: "v1", milesRevision: "31f1ca96" }],
  ["v2", { version: "v2" }],
  ["v1, additional R3", { version: "v1", useRoutingReplay: true, useAdditionR3: true, numLayers: ROUTED.numLayers }],
  ["v2, additional R3", { version: "v2", useRoutingReplay: true, useAdditionR3: true, numLayers: ROUTED.numLayers }],
  ["v1, a policy without the hint", { version: "v1", policy: withoutHint(createV1Policy()) }],
  ["v2, a policy without the hint", { version: "v2", policy: withoutHint(createV2Policy()) }],
];

beforeAll(async () => {
  const normalize = chatRequest.normalizeChatRequest;
  jest.spyOn(chatRequest, "normalizeChatRequest").mockImplementation((...args) => {
    const normalized = normalize(...args);
    built.push(normalized.upstreamBody);
    return normalized;
  });
  const spell = upstreamBody.spellUpstreamBody;
  jest.spyOn(upstreamBody, "spellUpstreamBody").mockImplementation((body, base) => {
    if (extendsBase(base, body.input_ids)) spelled.copied += 1;
    else spelled.whole += 1;
    return spell(body, base);
  });
  backend = await startMockBackend({ process: echoScript, routedExperts: ROUTED });
  proxy = await startRecordingProxy(backend.url);
  for (const [name, options] of SETUPS) {
    servers.set(
      name,
      await startSessionServer({
        version: "v1",
        backendUrl: proxy.url,
        chatTemplateKwargs: { enable_thinking: false },
        logger: { warn: () => undefined },
        ...options,
      }),
    );
  }
});
afterAll(async () => {
  for (const server of servers.values()) await server.close();
  await proxy.close();
  await backend.close();
  jest.restoreAllMocks();
});

/** One step of a client's trajectory. */
type Step =
  | { kind: "extend"; role: "user" | "tool"; text: string; stream: boolean; reorder: boolean }
  | { kind: "retry" }
  | { kind: "branch"; from: number; text: string }
  | { kind: "view" }
  | { kind: "restart" };

const text = fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom("Zürich — °C", '{"a": [1, 2]}\n', "\u0001\u007f", "🌦️ weather?", "plain words"));
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("extend" as const),
      role: fc.constantFrom("user" as const, "tool" as const),
      text,
      stream: fc.boolean(),
      reorder: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: "retry" as const }) },
  // a branch's text may be long, so its prompt outgrows the newest turn's without extending it
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("branch" as const),
      from: fc.nat(),
      text: fc.oneof(
        text,
        text.map((t) => `${t} `.repeat(40)),
      ),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "view" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "restart" as const }) },
);
/** Extra client body fields (floats, seeds, limits), sent on every request of a trajectory. */
/** A tool a client offers (its keys in the order clients write them). */
const WEATHER_TOOL = {
  type: "function",
  function: { name: "get_weather", description: "Weather for a city (°C).", parameters: { type: "object", properties: { city: { type: "string" } } } },
};
const extras = fc.record(
  {
    temperature: fc.oneof(fc.constant(1.0), fc.double({ min: 0, max: 2, noNaN: true })),
    seed: fc.nat(),
    max_tokens: fc.integer({ min: 1, max: 64 }),
    tools: fc.constantFrom([WEATHER_TOOL], [WEATHER_TOOL, { ...WEATHER_TOOL, function: { ...WEATHER_TOOL.function, name: "get_time" } }]),
  },
  { requiredKeys: [] },
);

/** The tools with each one's keys in another order: the same tools to a reader, another text. */
function reordered(tools: unknown): unknown {
  return Array.isArray(tools) ? tools.map((tool: Record<string, unknown>) => Object.fromEntries(Object.entries(tool).reverse())) : tools;
}

type Message = Record<string, unknown>;

/** Runs one trajectory; after every chat call, the bytes the proxy got must be the oracle's spelling of the body built. */
async function runTrajectory(base: string, steps: Step[], extra: Record<string, unknown>): Promise<number> {
  let id = await createSession(base);
  /** Message lists sent and answered so far (the last is what a retry sends again), with the reply appended. */
  const answered: Message[][] = [];
  let last: Message[] | null = null;
  let sentCalls = 0;
  const first = (content: string): Message[] => [
    { role: "system", content: "You are terse." },
    { role: "user", content },
  ];
  for (const s of steps) {
    if (s.kind === "view") {
      expect((await call("GET", `${base}/sessions/${id}`)).status).toBe(200);
      continue;
    }
    if (s.kind === "restart") {
      expect((await call("DELETE", `${base}/sessions/${id}`)).status).toBe(204);
      id = await createSession(base);
      answered.length = 0;
      last = null;
      continue;
    }
    let messages: Message[];
    let stream = false;
    if (s.kind === "retry") messages = last ?? first("hello");
    else if (s.kind === "branch") messages = answered.length === 0 ? first(s.text) : [...answered[s.from % answered.length], { role: "user", content: s.text }];
    else {
      const prior = answered.length === 0 ? null : answered[answered.length - 1];
      // the history re-sent with each message's keys in another order: the same turns to the matcher, another text
      const history = prior === null ? null : s.reorder ? prior.map((m) => Object.fromEntries(Object.entries(m).reverse())) : prior;
      messages =
        history === null
          ? first(s.text)
          : [...history, s.role === "tool" ? { role: "tool", content: s.text, tool_call_id: "call0" } : { role: "user", content: s.text }];
      stream = s.stream;
    }
    const builtBefore = built.length;
    const bodiesBefore = proxy.bodies.length;
    // a reordered history comes with reordered tools too
    const tools = s.kind === "extend" && s.reorder ? reordered(extra.tools) : extra.tools;
    const reply = await call("POST", `${base}/sessions/${id}/v1/chat/completions`, { messages, ...extra, tools, stream });
    expect(built.length).toBe(builtBefore + 1);
    const body = built[built.length - 1];
    if (body.input_ids === undefined) {
      // refused while positioning (a deep v1 rollback): nothing went upstream
      expect(reply.status).not.toBe(200);
      expect(proxy.bodies.length).toBe(bodiesBefore);
      continue;
    }
    expect(proxy.bodies.length).toBe(bodiesBefore + 1);
    expect(proxy.bodies[bodiesBefore].toString("latin1")).toBe(dumpsPy(body, PY_DEFAULT_JSON));
    sentCalls += 1;
    expect(reply.status).toBe(200);
    last = messages;
    const content = stream
      ? `echo: ${String(messages[messages.length - 1].content)}`
      : (reply.json as unknown as { choices: [{ message: Message }] }).choices[0].message.content;
    answered.push([...messages, { role: "assistant", content }]);
  }
  expect((await call("DELETE", `${base}/sessions/${id}`)).status).toBe(204);
  return sentCalls;
}

describe.each(SETUPS.map(([name]) => name))("%s", (name) => {
  test("every upstream body is byte for byte the whole body spelled anew, over random trajectories", async () => {
    const base = servers.get(name)?.url as string;
    let sentCalls = 0;
    const before = { ...spelled };
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 9 }), extras, async (steps, extra) => {
        sentCalls += await runTrajectory(base, steps, extra);
      }),
      { numRuns: 15 },
    );
    // the trajectories did reach the backend, and both ways were taken: ids copied from a base, and spelled whole
    expect(sentCalls).toBeGreaterThan(30);
    expect(spelled.copied - before.copied).toBeGreaterThan(10);
    expect(spelled.whole - before.whole).toBeGreaterThan(10);
    expect(servers.get(name)?.sessionUsage().sessions).toBe(0);
  });
});

describe("the session charge", () => {
  test("a v1 retry's rollback frees the discarded turn's sent bytes, and DELETE frees everything", async () => {
    const server = servers.get("v1") as RunningSessionServer;
    const id = await createSession(server.url);
    const turn = async (messages: Message[]): Promise<Message> => {
      const reply = await call("POST", `${server.url}/sessions/${id}/v1/chat/completions`, { messages });
      expect(reply.status).toBe(200);
      return (reply.json as unknown as { choices: [{ message: Message }] }).choices[0].message;
    };
    const start: Message[] = [
      { role: "system", content: "You are terse." },
      { role: "user", content: "one" },
    ];
    const a = await turn(start);
    const second = [...start, { role: "assistant", content: a.content }, { role: "user", content: "two" }];
    await turn(second);
    const afterTwo = server.sessionUsage().bytes;
    await turn(second); // the same request again: the stored second turn is rolled back and replaced by an equal one
    expect(server.sessionUsage().bytes).toBe(afterTwo);
    const longer = [...start, { role: "assistant", content: a.content }, { role: "user", content: "two, with many more words in it than before" }];
    await turn(longer); // a rollback to a longer second turn: charged more, the old second turn not at all
    const afterLonger = server.sessionUsage().bytes;
    expect(afterLonger).toBeGreaterThan(afterTwo);
    await turn(second);
    expect(server.sessionUsage().bytes).toBe(afterTwo);
    expect((await call("DELETE", `${server.url}/sessions/${id}`)).status).toBe(204);
    expect(server.sessionUsage().bytes).toBe(0);
  });
});
