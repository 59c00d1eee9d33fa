// The refusals miles' own tests pin, replayed over loopback HTTP: exact status, exact body bytes, and the session
// state each refusal leaves behind (unchanged; at milesRevision "31f1ca96" the rollback / attach-node view it kept).
import { startSessionServer, type RunningSessionServer, type SessionServerVersion } from "../../src/server";
import type { ChatMessage } from "../../src/tokenizer/types";
import { assistantOf, call, chat, createSession, getSession, rawChatReply, recordingLogger, startRawBackend, type RawBackend } from "./helpers";

const ROLE_SUFFIX = "; the selected TITO fixed template does not support appending this role";

let mode = "ok";
let raw: RawBackend;
const servers = {} as Record<SessionServerVersion, RunningSessionServer>;
/** The same servers following the snapshot the pins were first read from (`milesRevision: "31f1ca96"`). */
const snapshotServers = {} as Record<SessionServerVersion, RunningSessionServer>;
let brokenMatcherServer: RunningSessionServer;
let matcherResult: unknown = true;

beforeAll(async () => {
  raw = await startRawBackend(() => {
    switch (mode) {
      case "null-content":
        return { status: 200, body: rawChatReply([1, 2], { content: null }) };
      case "length-mismatch":
        return { status: 200, body: rawChatReply([1, 2, 3], { completionTokens: 2 }) };
      case "no-meta":
        return { status: 200, body: rawChatReply([1, 2], { meta: null }) };
      default:
        return { status: 200, body: rawChatReply([9707, 151645]) };
    }
  });
  for (const version of ["v1", "v2"] as const) {
    servers[version] = await startSessionServer({ version, backendUrl: raw.url, logger: recordingLogger() });
    snapshotServers[version] = await startSessionServer({ version, backendUrl: raw.url, logger: recordingLogger(), milesRevision: "31f1ca96" });
  }
  brokenMatcherServer = await startSessionServer({
    version: "v1",
    backendUrl: raw.url,
    logger: recordingLogger(),
    messageMatcher: (stored, incoming) => {
      if (matcherResult === "throw") throw new Error("matcher bug");
      return (matcherResult === true ? stored.content === incoming.content : matcherResult) as boolean;
    },
  });
});

afterAll(async () => {
  await Promise.all([...Object.values(servers), ...Object.values(snapshotServers), brokenMatcherServer].map((server) => server.close()));
  await raw.close();
});

// The message fixtures of tests/fast/router/test_sessions_v1_pins.py::TestRollbackPins.
const U1: ChatMessage = { role: "user", content: "What is 1+2?" };
const T1: ChatMessage = { role: "tool", content: "tool-result-1", tool_call_id: "t0" };
const T1_DIFF: ChatMessage = { role: "tool", content: "tool-result-DIFFERENT", tool_call_id: "t0" };
const T2: ChatMessage = { role: "tool", content: "tool-result-2", tool_call_id: "t1" };
const T3: ChatMessage = { role: "tool", content: "tool-result-3", tool_call_id: "t2" };

async function turn(base: string, id: string, messages: ChatMessage[]): Promise<ChatMessage> {
  const reply = await chat(base, id, { messages });
  expect(reply.status).toBe(200);
  return assistantOf(reply);
}

/** `_two_turn_session`: stored history [U1, a1, T1, a2] with two records. */
async function twoTurnSession(base: string): Promise<{ id: string; a1: ChatMessage; a2: ChatMessage }> {
  const id = await createSession(base);
  const a1 = await turn(base, id, [U1]);
  const a2 = await turn(base, id, [U1, a1, T1]);
  expect((await getSession(base, id)).records).toHaveLength(2);
  return { id, a1, a2 };
}

const errorBody = (message: string): string => JSON.stringify({ error: message });

// mirrors tests/fast/router/test_sessions_v1_pins.py::test_deep_rollback_400_byte_exact_and_state_unchanged
test("v1 deep rollback: 400 with Python's bytes, state unchanged, the full history still extends", async () => {
  const base = servers.v1.url;
  const { id, a1, a2 } = await twoTurnSession(base);
  const a3 = await turn(base, id, [U1, a1, T1, a2, T2]);
  const before = await getSession(base, id);
  expect(before.records).toHaveLength(3);
  const sent = raw.requests.length;
  const reply = await chat(base, id, { messages: [U1, a1, T1_DIFF] });
  expect(reply.status).toBe(400);
  expect(reply.headers["content-type"]).toBe("application/json");
  expect(reply.text).toBe(errorBody("rollback failed: discard_count=2 exceeds max_assistant_rollback_steps=1 (stored has 6 messages, request has 3 messages)"));
  expect(raw.requests.length).toBe(sent);
  expect(await getSession(base, id)).toEqual(before);
  expect((await chat(base, id, { messages: [U1, a1, T1, a2, T2, a3, T3] })).status).toBe(200);
});

// mirrors miles PR #3311's reproduction ("complete two turns, retry the second with a forbidden field, inspect the
// session: two unchanged records"), with the refusals a retry meets after its rollback is found: a disallowed
// appended role (the append check) and tool-call arguments the chat template cannot render (the render step)
describe.each(["v1", "v2"] as const)("%s refused retries keep the history (miles PR #3311 / #3258)", (version) => {
  const refusedRetries: Array<[string, (a1: ChatMessage) => ChatMessage[], RegExp]> = [
    ["a disallowed appended role", (a1) => [U1, a1, { role: "developer", content: "another" }], /role='developer'/],
    [
      "tool-call arguments that are not JSON",
      (a1) => [
        U1,
        a1,
        T1,
        { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{not json" } }] },
        T2,
      ],
      /arguments/,
    ],
  ];
  test.each(refusedRetries)("%s: 400, no upstream call, two unchanged records afterwards", async (_name, retry, message) => {
    const base = servers[version].url;
    const { id, a1 } = await twoTurnSession(base);
    const before = await getSession(base, id);
    const sent = raw.requests.length;
    const reply = await chat(base, id, { messages: retry(a1) });
    expect(reply.status).toBe(400);
    expect(reply.json<{ error: string }>().error).toMatch(message);
    expect(raw.requests.length).toBe(sent);
    const after = await getSession(base, id);
    expect(after.records).toHaveLength(2);
    expect(after).toEqual(before);
    // The history is intact, so the plain continuation still extends both turns.
    expect((await chat(base, id, { messages: [U1, a1, T1, before.records[1].response.choices[0].message, T2] })).status).toBe(200);
    expect((await getSession(base, id)).records.slice(0, 2)).toEqual(before.records);
  });
});

// mirrors tests/fast/router/test_sessions_v1_pins.py::test_disallowed_append_role_400_with_rollback_side_effect (at 31f1ca96)
test('milesRevision "31f1ca96": v1 disallowed role after a retry is 400 with the full text, and the one-turn rollback stays applied', async () => {
  const base = snapshotServers.v1.url;
  const { id, a1 } = await twoTurnSession(base);
  const before = await getSession(base, id);
  const reply = await chat(base, id, { messages: [U1, a1, { role: "developer", content: "another" }] });
  expect(reply.status).toBe(400);
  expect(reply.text).toBe(
    errorBody(`appended message at index 2 has role='developer', allowed=frozenset({'tool', 'user', 'system', 'assistant'})${ROLE_SUFFIX}`),
  );
  const after = await getSession(base, id);
  expect(after.records).toEqual(before.records.slice(0, 1));
  // A later resend of the retried turn builds on the kept rollback: one regenerated record, two in all (as Python).
  expect((await chat(base, id, { messages: [U1, a1, T1] })).status).toBe(200);
  const resent = await getSession(base, id);
  expect(resent.records).toHaveLength(2);
  expect(resent.records[0]).toEqual(before.records[0]);
  expect(resent.records[1].request.messages.at(-1)).toEqual(T1);
});

test("v1 disallowed role after a retry: 400 with the full text; a resend then regenerates the retried turn", async () => {
  const base = servers.v1.url;
  const { id, a1 } = await twoTurnSession(base);
  const before = await getSession(base, id);
  const reply = await chat(base, id, { messages: [U1, a1, { role: "developer", content: "another" }] });
  expect(reply.status).toBe(400);
  expect(reply.text).toBe(
    errorBody(`appended message at index 2 has role='developer', allowed=frozenset({'tool', 'user', 'system', 'assistant'})${ROLE_SUFFIX}`),
  );
  expect(await getSession(base, id)).toEqual(before);
  // A resend of the retried turn rolls back then (it is valid): one regenerated record, two in all.
  expect((await chat(base, id, { messages: [U1, a1, T1_DIFF] })).status).toBe(200);
  const resent = await getSession(base, id);
  expect(resent.records).toHaveLength(2);
  expect(resent.records[0]).toEqual(before.records[0]);
  expect(resent.records[1].request.messages.at(-1)).toEqual(T1_DIFF);
});

// mirrors tests/fast/router/test_sessions_v2.py::test_disallowed_append_role_400_with_rollback_side_effect (at 31f1ca96)
test('milesRevision "31f1ca96": v2 disallowed role is 400 with the v2 text; GET and the samples op show the attach node', async () => {
  const base = snapshotServers.v2.url;
  const { id, a1 } = await twoTurnSession(base);
  const before = await getSession(base, id);
  const reply = await chat(base, id, { messages: [U1, a1, { role: "developer", content: "another" }] });
  expect(reply.status).toBe(400);
  expect(reply.text).toBe(errorBody(`appended message role='developer' not allowed (allowed=['assistant', 'system', 'tool', 'user'])${ROLE_SUFFIX}`));
  const after = await getSession(base, id);
  expect(after.records).toEqual(before.records.slice(0, 1));
  expect(after.metadata.tree).toEqual(before.metadata.tree);
});

// mirrors miles PR #3258 ("GET now shows the last committed path, including while a request is pending or rejected")
test("v2 disallowed role is 400 with the v2 text; GET still shows the last committed path", async () => {
  const base = servers.v2.url;
  const { id, a1 } = await twoTurnSession(base);
  const before = await getSession(base, id);
  const reply = await chat(base, id, { messages: [U1, a1, { role: "developer", content: "another" }] });
  expect(reply.status).toBe(400);
  expect(reply.text).toBe(errorBody(`appended message role='developer' not allowed (allowed=['assistant', 'system', 'tool', 'user'])${ROLE_SUFFIX}`));
  expect(await getSession(base, id)).toEqual(before);
});

// mirrors tests/fast/router/test_sessions.py (502 for a `message: null` reply) and miles/rollout/session/core.py
// extract_completion (the three UpstreamResponseError texts); nothing is recorded.
describe.each(["v1", "v2"] as const)("%s upstream 502s", (version) => {
  test.each([
    [
      "null-content",
      "assistant message content is None, when tool call parser failed SGLang should still return an empty content rather than None. " +
        "Please check your modified SGLang version.",
    ],
    [
      "length-mismatch",
      "invalid chat completion response: len(output_token_logprobs)=3 != completion_tokens=2. " +
        "Please check whether you use the correct SGLang branch which has fix the tokenizer batch decode issue.",
    ],
    ["no-meta", "meta_info and output_token_logprobs must be in choice (requires logprobs=True)"],
  ])("%s", async (which, message) => {
    const base = servers[version].url;
    const id = await createSession(base);
    const a1 = await turn(base, id, [U1]);
    const before = await getSession(base, id);
    mode = which;
    let reply;
    try {
      reply = await chat(base, id, { messages: [U1, a1, T1] });
    } finally {
      mode = "ok";
    }
    expect(reply.status).toBe(502);
    expect(reply.text).toBe(errorBody(message));
    expect(await getSession(base, id)).toEqual(before);
  });
});

// mirrors miles/utils/chat_template_utils/message_matcher_hub/funcs.py `_validated` through sessions.py's
// SessionMessageMatcherError handler (500 `{"error": ...}`); the session is untouched.
test.each([
  ["maybe", "session message matcher must return bool, got str"],
  [1, "session message matcher must return bool, got int"],
  [null, "session message matcher must return bool, got NoneType"],
  ["throw", "session message matcher raised an exception"],
])("a custom matcher returning %p is a 500 with Python's text", async (result, message) => {
  const base = brokenMatcherServer.url;
  const id = await createSession(base);
  const a1 = await turn(base, id, [U1]);
  const before = await getSession(base, id);
  matcherResult = result;
  let reply;
  try {
    reply = await chat(base, id, { messages: [U1, a1, T1] });
  } finally {
    matcherResult = true;
  }
  expect(reply.status).toBe(500);
  expect(reply.text).toBe(errorBody(message));
  expect(await getSession(base, id)).toEqual(before);
});

// mirrors tests/fast/router/test_sessions.py (404 `session not found: session_id=nonexistent` on GET and DELETE)
test("an unknown session is 404 with Python's text on GET, DELETE, chat and samples", async () => {
  for (const version of ["v1", "v2"] as const) {
    const base = servers[version].url;
    for (const [method, path, body] of [
      ["GET", "", undefined],
      ["DELETE", "", undefined],
      ["POST", "/v1/chat/completions", { messages: [U1] }],
      ["POST", "/samples", {}],
    ] as const) {
      const reply = await call(method, `${base}/sessions/nonexistent${path}`, body);
      expect(reply.status).toBe(404);
      expect(reply.text).toBe(errorBody("session not found: session_id=nonexistent"));
    }
  }
});
