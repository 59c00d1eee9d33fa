// The split_assistant_turn matcher: a stored assistant turn re-sent in pieces (text, then tool calls; text parts)
// keeps the trajectory, a piece that really differs never does, and other matchers' warnings point at it.
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { startSessionServer } from "../../src/server";
import {
  assistantText,
  MESSAGE_MATCHERS,
  resolveMessageMatcher,
  splitAssistantTurnMessageMatches,
  type MessageMatcherName,
} from "../../src/server/message-matchers";
import { joinSplitAssistantTurns } from "../../src/server/split-turns";
import type { SessionServerVersion } from "../../src/server/types";
import type { ChatMessage } from "../../src/tokenizer/types";
import { assistantOf, chat, createSession, getSession } from "./helpers";

type ToolCalls = NonNullable<ChatMessage["tool_calls"]>;
const CALLS: ToolCalls = [{ id: "call00000", type: "function", function: { name: "get_weather", arguments: '{"location": "Beijing"}' } }];
const STORED: ChatMessage = { role: "assistant", content: "Let me look up Beijing.", tool_calls: CALLS };
const callsWith = (argumentsText: string): ToolCalls => [{ ...CALLS[0], function: { ...CALLS[0].function, arguments: argumentsText } }];

/** How the Agents SDK re-sends the turn: non-streamed (role and calls copied into the part) and streamed. */
const SPLIT_NON_STREAMED: ChatMessage[] = [
  { role: "assistant", content: [{ type: "text", text: "Let me look up Beijing.", role: "assistant", tool_calls: [{ ...CALLS[0], index: 0 }] }] },
  { role: "assistant", content: null, tool_calls: [{ ...CALLS[0], index: 0 }], index: 0 },
];
const SPLIT_STREAMED: ChatMessage[] = [
  { role: "assistant", content: [{ type: "text", text: "Let me look up Beijing.", annotations: [] }] },
  { role: "assistant", content: null, tool_calls: CALLS },
];

describe("assistantText", () => {
  test("a string, or text parts concatenated", () => {
    expect(assistantText("plain", null)).toBe("plain");
    expect(
      assistantText(
        [
          { type: "text", text: "Let me " },
          { type: "text", text: "look up Beijing." },
        ],
        null,
      ),
    ).toBe("Let me look up Beijing.");
    expect(assistantText([{ type: "text", text: "x", role: "assistant", annotations: [], tool_calls: CALLS }], CALLS)).toBe("x");
  });

  test("anything but plain text parts is no text", () => {
    expect(assistantText([], null)).toBeNull();
    expect(assistantText(null, null)).toBeNull();
    expect(assistantText([{ type: "image_url", image_url: { url: "data:," } }], null)).toBeNull();
    expect(assistantText([{ type: "text", text: 3 }], null)).toBeNull();
    expect(assistantText([{ type: "text", text: "x", cache_control: {} }], null)).toBeNull();
    expect(assistantText([{ type: "text", text: "x", role: "user" }], null)).toBeNull();
    expect(assistantText([{ type: "text", text: "x", annotations: [{ type: "url_citation" }] }], null)).toBeNull();
    // calls copied into a part must be the turn's own calls
    expect(assistantText([{ type: "text", text: "x", tool_calls: callsWith('{"location": "Paris"}') }], CALLS)).toBeNull();
    expect(assistantText([{ type: "text", text: "x", tool_calls: CALLS }], null)).toBeNull();
  });
});

describe("splitAssistantTurnMessageMatches", () => {
  test("is selectable by name", () => {
    expect(resolveMessageMatcher("split_assistant_turn")).toBe(splitAssistantTurnMessageMatches);
    expect(Object.keys(MESSAGE_MATCHERS)).toContain("split_assistant_turn");
  });

  test("accepts what loose_tool_call accepts, and text parts that concatenate to the stored content", () => {
    expect(splitAssistantTurnMessageMatches(STORED, STORED)).toBe(true);
    expect(splitAssistantTurnMessageMatches(STORED, { ...STORED, tool_calls: callsWith('{"location":"Beijing"}') })).toBe(true);
    const parts = [
      { type: "text", text: "Let me look " },
      { type: "text", text: "up Beijing." },
    ];
    expect(splitAssistantTurnMessageMatches(STORED, { ...STORED, content: parts })).toBe(true);
    expect(splitAssistantTurnMessageMatches({ role: "user", content: "hi" }, { role: "user", content: [{ type: "text", text: "hi" }] })).toBe(false);
  });

  test("never accepts text or calls that really differ (near misses)", () => {
    const near: ChatMessage[] = [
      { ...STORED, content: [{ type: "text", text: "Let me look up Beijing!" }] },
      { ...STORED, content: [{ type: "text", text: "Let me look up Beijing. " }] },
      {
        ...STORED,
        content: [
          { type: "text", text: "Let me look up " },
          { type: "text", text: "Beijing" },
        ],
      },
      { ...STORED, content: [{ type: "text", text: "Let me look up Beijing." }], tool_calls: callsWith('{"location": "Shanghai"}') },
      { ...STORED, content: [{ type: "text", text: "Let me look up Beijing." }], tool_calls: null },
      {
        ...STORED,
        content: [
          { type: "text", text: "Let me look up Beijing." },
          { type: "image_url", image_url: { url: "data:," } },
        ],
      },
      { ...STORED, content: "Let me look up Beijing.", tool_calls: [{ ...CALLS[0], id: "call00001" }] },
    ];
    for (const incoming of near) expect(splitAssistantTurnMessageMatches(STORED, incoming)).toBe(false);
  });
});

describe("joinSplitAssistantTurns", () => {
  test("reads both Agents SDK shapes as the stored turn", () => {
    for (const split of [SPLIT_NON_STREAMED, SPLIT_STREAMED]) {
      const joined = joinSplitAssistantTurns([{ role: "user", content: "q" }, ...split, { role: "tool", tool_call_id: "call00000", content: "r" }]);
      expect(joined).toHaveLength(3);
      expect(joined[1]).toMatchObject({ role: "assistant", content: "Let me look up Beijing." });
      expect(splitAssistantTurnMessageMatches(STORED, joined[1])).toBe(true);
    }
  });

  test("flattens a lone text-part list and keeps its calls", () => {
    const [message] = joinSplitAssistantTurns([
      {
        role: "assistant",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
        tool_calls: CALLS,
      },
    ]);
    expect(message).toEqual({ role: "assistant", content: "ab", tool_calls: CALLS });
  });

  test("returns the very array when nothing is split", () => {
    const messages = [...buildInitialMessages(), STORED];
    expect(joinSplitAssistantTurns(messages)).toBe(messages);
  });

  test("keeps the reasoning of whichever half carries it, and refuses two", () => {
    const [first] = joinSplitAssistantTurns([{ role: "assistant", content: "t", reasoning_content: "why" }, SPLIT_STREAMED[1]]);
    expect(first).toMatchObject({ content: "t", reasoning_content: "why", tool_calls: CALLS });
    const both = [
      { role: "assistant", content: "t", reasoning_content: "a" },
      { ...SPLIT_STREAMED[1], reasoning_content: "b" },
    ];
    expect(joinSplitAssistantTurns(both)).toBe(both);
  });

  test("does not join halves that are not one turn", () => {
    const notOneTurn: ChatMessage[][] = [
      [{ role: "assistant", content: "t", tool_calls: CALLS }, SPLIT_STREAMED[1]], // the text half has its own calls
      [SPLIT_STREAMED[0], { ...SPLIT_STREAMED[1], content: "more" }], // the calls half has text
      [{ role: "assistant", content: "" }, SPLIT_STREAMED[1]], // no text at all
      [
        { role: "assistant", content: "t" },
        { role: "assistant", content: "u" },
      ], // no calls
      [{ role: "user", content: "t" }, SPLIT_STREAMED[1]],
      // calls copied into the part differ from the calls message's
      [{ role: "assistant", content: [{ type: "text", text: "t", tool_calls: callsWith('{"location": "Paris"}') }] }, SPLIT_STREAMED[1]],
    ];
    for (const pair of notOneTurn) {
      const out = joinSplitAssistantTurns(pair);
      expect(out).toHaveLength(2);
    }
  });
});

let backend: MockBackend;
beforeAll(async () => {
  backend = await startMockBackend({ process: weatherScript });
});
afterAll(async () => {
  await backend.close();
});

/**
 * One tool-call turn, then its replay in `pieces` with the tool result; the warnings, the second reply's status
 * and error, and the view after it (`before`: the view between the two requests).
 */
async function replay(version: SessionServerVersion, matcher: MessageMatcherName, pieces: (assistant: ChatMessage) => ChatMessage[]) {
  const warnings: string[] = [];
  const server = await startSessionServer({ version, backendUrl: backend.url, messageMatcher: matcher, logger: { warn: (m) => void warnings.push(m) } });
  try {
    const id = await createSession(server.url);
    const history = buildInitialMessages();
    const first = await chat(server.url, id, { messages: history, tools: WEATHER_TOOLS });
    expect(first.status).toBe(200);
    const assistant = assistantOf(first);
    const toolResult: ChatMessage = { role: "tool", tool_call_id: assistant.tool_calls![0].id, content: MOCK_TOOL_RESULTS[0] };
    const before = await getSession(server.url, id);
    const second = await chat(server.url, id, { messages: [...history, ...pieces(assistant), toolResult], tools: WEATHER_TOOLS });
    const view = await getSession(server.url, id);
    const tree = view.metadata.tree ? view.metadata.tree.nodes.map((n: { id: number; parent: number | null }) => [n.id, n.parent]) : null;
    const error = second.status === 200 ? null : second.json<{ error: string }>().error;
    return { warnings, status: second.status, error, records: view.records, tree, before, view };
  } finally {
    await server.close();
  }
}

const asAgentsSdk = (assistant: ChatMessage): ChatMessage[] => [
  { role: "assistant", content: [{ type: "text", text: assistant.content as string, role: "assistant", tool_calls: assistant.tool_calls }] },
  { role: "assistant", content: null, tool_calls: assistant.tool_calls },
];
const asParts = (assistant: ChatMessage): ChatMessage[] => [{ ...assistant, content: [{ type: "text", text: assistant.content as string }] }];
/** The turn split in two with its text as a plain string: renderable, so it breaks instead of being refused. */
const asSplitStrings = (assistant: ChatMessage): ChatMessage[] => [
  { role: "assistant", content: assistant.content },
  { role: "assistant", content: null, tool_calls: assistant.tool_calls },
];
const withText =
  (text: string) =>
  (assistant: ChatMessage): ChatMessage[] =>
    asAgentsSdk({ ...assistant, content: text });
const withArguments =
  (argumentsText: string) =>
  (assistant: ChatMessage): ChatMessage[] =>
    asAgentsSdk({ ...assistant, tool_calls: assistant.tool_calls!.map((c) => ({ ...c, function: { ...c.function, arguments: argumentsText } })) });

describe.each(["v1", "v2"] as const)("%s", (version) => {
  test.each([
    ["split in two messages", asAgentsSdk],
    ["as text parts", asParts],
  ])("under split_assistant_turn a turn re-sent %s extends the stored history", async (_label, pieces) => {
    const { warnings, status, records, tree } = await replay(version, "split_assistant_turn", pieces);
    expect(status).toBe(200);
    expect(warnings).toEqual([]);
    expect(records).toHaveLength(2);
    if (version === "v2")
      expect(tree).toEqual([
        [0, null],
        [1, 0],
      ]);
    // the history the second record holds is the one turn the model produced
    expect(records[1].request.messages.map((m: ChatMessage) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(records[1].request.messages[2]).toMatchObject({ content: "Let me look up Beijing." });
  });

  test.each([
    ["other text", withText("Let me look up Shanghai.")],
    ["the text cut short", withText("Let me look up")],
    ["other arguments", withArguments('{"location": "Shanghai"}')],
  ])("under split_assistant_turn a split replay with %s breaks, and nothing claims the matcher would help", async (_label, pieces) => {
    const { warnings, records, tree } = await replay(version, "split_assistant_turn", pieces);
    expect(warnings).toEqual([]);
    expect(records).toHaveLength(1); // v1 rolled back; v2's active path is the new root alone
    if (version === "v2")
      expect(tree).toEqual([
        [0, null],
        [1, null],
      ]);
  });

  const ADVICE = 'start the server with --message-matcher split_assistant_turn (messageMatcher: "split_assistant_turn") to read it as the stored turn';
  const SPLIT_AT_2 = "the replayed assistant turn at index 2 arrives split into two assistant messages (its text, then its tool calls)";
  const PARTS_AT_2 = "the replayed assistant message at index 2 carries its text as a list of content parts";
  const REFUSAL =
    'messages[2].content must be a string or null for role "assistant", got a list (content parts); content parts and objects are not rendered by the chat template';

  test.each([
    ["strict", asAgentsSdk, SPLIT_AT_2],
    ["loose_tool_call", asAgentsSdk, SPLIT_AT_2],
    ["role_content_only", asParts, PARTS_AT_2],
  ] as const)("under %s a replay in text parts is refused with 400 naming split_assistant_turn, the session kept", async (matcher, pieces, how) => {
    const { warnings, status, error, records, before, view } = await replay(version, matcher, pieces);
    expect([status, error]).toEqual([400, `${REFUSAL}; ${how}; ${ADVICE}`]);
    const refused = version === "v1" ? "v1 refused the request (400): " : "v2 refused the request (400) instead of extending node 0: ";
    expect(warnings).toEqual([
      `${refused}${how}; ${ADVICE}. ${version === "v1" ? "The stored history is kept as it was" : "The tree and the view are unchanged"}`,
    ]);
    // nothing stored is lost: no rollback, no new root, the view where it was
    expect(view).toEqual(before);
    expect(records).toHaveLength(1);
  });

  test("under strict a split turn with plain-string text breaks, and the warning names split_assistant_turn", async () => {
    const { warnings, status, records, tree } = await replay(version, "strict", asSplitStrings);
    expect(status).toBe(200);
    const landing = version === "v1" ? "v1 rollback: " : "v2 starts a new root instead of extending node 0: ";
    expect(warnings).toHaveLength(1);
    expect(warnings[0].startsWith(`${landing}${SPLIT_AT_2}; ${ADVICE}.`)).toBe(true);
    expect(records).toHaveLength(1); // v1 rolled back; v2's active path is the new root alone
    if (version === "v2")
      expect(tree).toEqual([
        [0, null],
        [1, null],
      ]);
  });

  test("a replay in text parts that really differs is refused without naming split_assistant_turn", async () => {
    const { warnings, status, error, before, view } = await replay(version, "strict", withText("Let me look up Shanghai."));
    expect([status, error]).toEqual([400, REFUSAL]);
    expect(warnings).toEqual([]);
    expect(view).toEqual(before);
  });

  test("under strict a plain-string split replay that really differs gets no split-turn warning", async () => {
    const { warnings, status } = await replay(version, "strict", (assistant) => asSplitStrings({ ...assistant, content: "Let me look up Shanghai." }));
    expect(status).toBe(200);
    expect(warnings).toEqual([]);
  });
});
