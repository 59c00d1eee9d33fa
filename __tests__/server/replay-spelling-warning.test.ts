// The warning a session server logs when a history break comes only from how a client re-spells a replayed tool call.
// v1 rolls back and v2 starts a new root exactly as the Python servers do; the warning names the message and the matcher.
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import { describeSpellingBreak, toolCallSpellingDifference } from "../../src/server/replay-diagnosis";
import type { ChatMessage } from "../../src/tokenizer/types";
import type { SessionServerVersion } from "../../src/server/types";
import { assistantOf, chat, createSession, getSession } from "./helpers";

type Respell = (assistant: ChatMessage) => ChatMessage;

const compactArguments: Respell = (assistant) => ({
  ...assistant,
  tool_calls: (assistant.tool_calls as Record<string, any>[]).map((call) => ({
    ...call,
    function: { ...call.function, arguments: JSON.stringify(JSON.parse(call.function.arguments)) },
  })),
});

const parsedArgumentsKey: Respell = (assistant) => ({
  ...assistant,
  tool_calls: (assistant.tool_calls as Record<string, any>[]).map((call) => ({ ...call, function: { ...call.function, parsed_arguments: null } })),
});

let backend: MockBackend;
beforeAll(async () => {
  backend = await startMockBackend({ process: weatherScript });
});
afterAll(async () => {
  await backend.close();
});

/** One tool-call turn, then its replay (re-spelled) with the tool result; returns the warnings and the session view. */
async function replay(version: SessionServerVersion, matcher: "strict" | "loose_tool_call", respell: Respell) {
  const warnings: string[] = [];
  const server: RunningSessionServer = await startSessionServer({
    version,
    backendUrl: backend.url,
    messageMatcher: matcher,
    logger: { warn: (m) => void warnings.push(m) },
  });
  try {
    const id = await createSession(server.url);
    const history: ChatMessage[] = buildInitialMessages();
    const first = await chat(server.url, id, { messages: history, tools: WEATHER_TOOLS });
    expect(first.status).toBe(200);
    const assistant = assistantOf(first);
    const toolResult: ChatMessage = { role: "tool", tool_call_id: "call00000", content: MOCK_TOOL_RESULTS[0] };
    const second = await chat(server.url, id, { messages: [...history, respell(assistant), toolResult], tools: WEATHER_TOOLS });
    expect(second.status).toBe(200);
    return { warnings, view: await getSession(server.url, id), index: history.length };
  } finally {
    await server.close();
  }
}

const COMPACT_DETAIL = "tool-call arguments re-serialized (same JSON object, different text)";
const LOOSE_ADVICE = `start the server with --message-matcher loose_tool_call (messageMatcher: "loose_tool_call") to accept this replay`;
const EXTRA_ADVICE =
  "loose_tool_call would not accept it either (like the Python matcher it compares every tool-call key): " +
  "drop those keys on the client before replaying, or use --message-matcher role_content_only";

// mirrors tests/fast/router/test_session_message_matcher.py (strict compares arguments as text; loose_tool_call as JSON objects)
test("v1 warns naming the index and loose_tool_call when it rolls back over re-serialized arguments", async () => {
  const { warnings, view, index } = await replay("v1", "strict", compactArguments);
  expect(index).toBe(2);
  expect(warnings).toEqual([
    `v1 rollback: the replayed assistant message at index 2 differs from the stored one only in its tool-call spelling (${COMPACT_DETAIL}); ` +
      `${LOOSE_ADVICE}. The session discards the stored turn and re-renders it, so the trajectory no longer holds the model's own tokens for it`,
  ]);
  expect(view.records).toHaveLength(1); // the rollback dropped the first generation, as the Python server does
});

test("v1 under loose_tool_call keeps the trajectory and warns nothing for re-serialized arguments", async () => {
  const { warnings, view } = await replay("v1", "loose_tool_call", compactArguments);
  expect(warnings).toEqual([]);
  expect(view.records).toHaveLength(2);
});

// mirrors tests/fast/router/test_session_message_matcher.py (loose_tool_call still compares unknown tool-call fields)
test("v1 names the extra key and says loose_tool_call does not cover it", async () => {
  const { warnings, view } = await replay("v1", "loose_tool_call", parsedArgumentsKey);
  expect(warnings).toEqual([
    "v1 rollback: the replayed assistant message at index 2 differs from the stored one only in its tool-call spelling " +
      `(keys on one side only: tool_calls[0].function.parsed_arguments); ${EXTRA_ADVICE}. ` +
      "The session discards the stored turn and re-renders it, so the trajectory no longer holds the model's own tokens for it",
  ]);
  expect(view.records).toHaveLength(1);
});

test("v2 warns when it starts a new root over re-serialized arguments, and the tree shows the new root", async () => {
  const { warnings, view } = await replay("v2", "strict", compactArguments);
  expect(warnings).toEqual([
    `v2 starts a new root instead of extending node 0: the replayed assistant message at index 2 differs from the stored one only in its ` +
      `tool-call spelling (${COMPACT_DETAIL}); ${LOOSE_ADVICE}. The new branch re-renders that turn, so it does not hold the model's own tokens for it`,
  ]);
  expect(view.metadata.tree.nodes.map((n: { id: number; parent: number | null }) => [n.id, n.parent])).toEqual([
    [0, null],
    [1, null],
  ]);
});

test("v2 under loose_tool_call extends node 0 and warns nothing", async () => {
  const { warnings, view } = await replay("v2", "loose_tool_call", compactArguments);
  expect(warnings).toEqual([]);
  expect(view.metadata.tree.nodes.map((n: { id: number; parent: number | null }) => [n.id, n.parent])).toEqual([
    [0, null],
    [1, 0],
  ]);
});

test("a genuine retry (the last assistant turn dropped) rolls back without the warning", async () => {
  const warnings: string[] = [];
  const server = await startSessionServer({ version: "v1", backendUrl: backend.url, logger: { warn: (m) => void warnings.push(m) } });
  try {
    const id = await createSession(server.url);
    const history = buildInitialMessages();
    expect((await chat(server.url, id, { messages: history, tools: WEATHER_TOOLS })).status).toBe(200);
    expect((await chat(server.url, id, { messages: history, tools: WEATHER_TOOLS })).status).toBe(200);
    expect((await getSession(server.url, id)).records).toHaveLength(1);
    expect(warnings).toEqual([]);
  } finally {
    await server.close();
  }
});

test("a different call (other arguments, other id, other content) is not a spelling difference", () => {
  const stored: ChatMessage = {
    role: "assistant",
    content: "Let me look up Beijing.",
    tool_calls: [{ id: "call0", type: "function", function: { name: "get_weather", arguments: '{"location": "Beijing"}' } }],
  };
  const withCall = (call: Record<string, any>, extra: Partial<ChatMessage> = {}): ChatMessage => ({
    ...stored,
    ...extra,
    tool_calls: [call as NonNullable<ChatMessage["tool_calls"]>[number]],
  });
  const base = (stored.tool_calls as Record<string, any>[])[0];
  expect(toolCallSpellingDifference(stored, withCall({ ...base, function: { ...base.function, arguments: '{"location":"Paris"}' } }))).toBeNull();
  expect(toolCallSpellingDifference(stored, withCall({ ...base, id: "call1" }))).toBeNull();
  expect(toolCallSpellingDifference(stored, withCall(base, { content: "Other." }))).toBeNull();
  expect(toolCallSpellingDifference(stored, stored)).toBeNull();
  const spelled = toolCallSpellingDifference(stored, withCall({ ...base, index: 0, function: { ...base.function, arguments: '{"location":"Beijing"}' } }));
  expect(spelled).toEqual({ argumentsRespelled: true, extraKeys: [], looseToolCallMatches: true });
  expect(describeSpellingBreak(4, spelled!)).toBe(
    `the replayed assistant message at index 4 differs from the stored one only in its tool-call spelling (${COMPACT_DETAIL}); ${LOOSE_ADVICE}`,
  );
});
