// The pure parts of a replay: which conversations are refused (and at which message), which retries are drawn
// (reproducibly, only where they apply), and the calls and history edits a plan makes of them.
import { describe, expect, test } from "@jest/globals";
import { resolveMockFormats } from "../../src/backend/mock-model";
import { unrenderableReason } from "../../src/replay/conversation-check";
import { applyEdits, buildReplayPlan, type ReplayHistoryEntry } from "../../src/replay/replay-plan";
import { drawRetries, RETRY_KINDS } from "../../src/replay/retry-injection";
import type { RecordedConversation } from "../../src/replay/types";
import type { ChatMessage, ToolCall } from "../../src/tokenizer/types";

const call = (id: string, location: string): ToolCall => ({
  id,
  type: "function",
  function: { name: "get_weather", arguments: JSON.stringify({ location }) },
});

function recorded(messages: ChatMessage[], extra: Partial<RecordedConversation> = {}): RecordedConversation {
  return { file: "c.jsonl", line: 1, index: 0, format: "openai", messages, tools: [], promptLength: 0, label: null, ...extra };
}

/** A tool-calling conversation of `turns` replies: user, call, result, ..., final answer. */
function toolConversation(turns: number): RecordedConversation {
  const messages: ChatMessage[] = [
    { role: "system", content: "Use the tool." },
    { role: "user", content: "Weather tour, please." },
  ];
  for (let t = 0; t < turns - 1; t += 1) {
    messages.push(
      { role: "assistant", content: "", tool_calls: [call(`c${t}`, `City ${t}`)] },
      { role: "tool", tool_call_id: `c${t}`, content: `${t} degrees` },
    );
  }
  messages.push({ role: "assistant", content: "Done." });
  return recorded(messages);
}

describe("unrenderableReason", () => {
  test.each([
    [
      "an image part",
      [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: "x" } },
          ],
        },
        { role: "assistant", content: "A cat." },
      ],
      0,
      /content part of type "image_url"/,
    ],
    [
      "a role no template renders",
      [
        { role: "developer", content: "Be brief." },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hi." },
      ],
      0,
      /role "developer"/,
    ],
    [
      "no final assistant message",
      [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hi." },
        { role: "user", content: "Bye" },
      ],
      2,
      /ends in a user message/,
    ],
    [
      "a tool call without a result",
      [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "", tool_calls: [call("a", "Oslo"), call("b", "Rome")] },
        { role: "tool", tool_call_id: "a", content: "4" },
        { role: "user", content: "?" },
        { role: "assistant", content: "ok" },
      ],
      1,
      /2 tool calls followed by 1 tool result/,
    ],
    [
      "arguments that are not JSON",
      [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "", tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: "{oops" } }] },
      ],
      1,
      /arguments that are not a JSON object/,
    ],
    ["no messages", [], 0, /no messages/],
  ] as Array<[string, ChatMessage[], number, RegExp]>)("%s is refused at its message", (_name, messages, index, reason) => {
    const problem = unrenderableReason(recorded(messages));
    expect(problem?.messageIndex).toBe(index);
    expect(problem?.reason).toMatch(reason);
  });

  test("text parts, null and empty contents, a final reply with unanswered calls and reasoning are renderable", () => {
    const messages: ChatMessage[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "Hi " },
          { type: "text", text: "there" },
        ],
      },
      { role: "assistant", content: null, reasoning_content: "hmm", tool_calls: [call("a", "Oslo")] },
      { role: "tool", tool_call_id: "a", content: "" },
      { role: "assistant", content: "", tool_calls: [call("b", "Rome")] },
    ];
    expect(unrenderableReason(recorded(messages))).toBeNull();
  });
});

describe("drawRetries", () => {
  const conversation = toolConversation(6);
  const turns = conversation.messages.flatMap((m, i) => (m.role === "assistant" ? [i] : []));

  test("the same seed and conversation index draw the same retries; another index draws others", () => {
    const a = drawRetries(conversation, turns, { seed: 11, rate: 0.8 });
    expect(drawRetries(conversation, turns, { seed: 11, rate: 0.8 })).toEqual(a);
    const others = [1, 2, 3, 4].map((index) => JSON.stringify(drawRetries({ ...conversation, index }, turns, { seed: 11, rate: 0.8 })));
    expect(others.some((other) => other !== JSON.stringify(a))).toBe(true);
  });

  test("rate 0 draws none; rate 1 retries every reply it can (the first one too), each kind only where it applies", () => {
    expect(drawRetries(conversation, turns, { seed: 3, rate: 0 })).toEqual([]);
    const kinds = new Set<string>();
    const firstKinds = new Set<string>();
    for (let seed = 0; seed < 40; seed += 1) {
      const all = drawRetries(conversation, turns, { seed, rate: 1 });
      expect(all.map((r) => r.turn)).toEqual(turns);
      for (const retry of all) {
        kinds.add(retry.kind);
        const callsTools = (conversation.messages[retry.turn].tool_calls ?? []).length > 0;
        if (!callsTools) expect(["pure_retry", "divergent_retry"]).toContain(retry.kind);
        if (retry.kind === "divergent_retry") expect(["user", "tool", "system"]).toContain(conversation.messages[retry.turn - 1].role);
        if (retry.turn === turns[0]) firstKinds.add(retry.kind);
      }
    }
    expect([...kinds].sort()).toEqual([...RETRY_KINDS].sort());
    // the first reply is eligible for every schedule, the dropping ones included (their v2 root leaf is set aside)
    expect([...firstKinds].sort()).toEqual([...RETRY_KINDS].sort());
  });
});

describe("buildReplayPlan", () => {
  const { formats } = resolveMockFormats({ titoModel: "qwen3" });

  test("without retries: one call per recorded reply, the recorded messages since the previous reply appended first", () => {
    const conversation = toolConversation(2);
    const plan = buildReplayPlan(conversation, formats);
    expect(plan.calls.map((c) => [c.turn, c.injected, c.edits])).toEqual([
      [2, null, [{ op: "append", messages: conversation.messages.slice(0, 2) }]],
      [4, null, [{ op: "append", messages: [conversation.messages[3]] }]],
    ]);
    expect(plan.replies.map((r) => r.text)).toEqual(['<tool_call>\n{"name": "get_weather", "arguments": {"location": "City 0"}}\n</tool_call>', "Done."]);
    expect(plan.replies.map((r) => r.weight_version)).toEqual(["w0", "w1"]);
  });

  // the recorded arguments as Python's json.loads reads them, written back by json.dumps (sglang's qwen25 detector)
  test("recorded tool-call arguments keep integers beyond 2^53 and integral floats exactly as written", () => {
    const args = '{"id": 123456789012345678901234567890, "n": -9007199254740993, "ratio": 2.0}';
    const conversation = recorded([
      { role: "user", content: "Look it up." },
      { role: "assistant", content: "", tool_calls: [{ id: "a", type: "function", function: { name: "lookup", arguments: args } }] },
    ]);
    expect(buildReplayPlan(conversation, formats).replies[0].text).toBe(`<tool_call>\n{"name": "lookup", "arguments": ${args}}\n</tool_call>`);
  });

  // sglang srt/parser/jinja_template_utils.py::process_content_for_template_format, "string" branch: " ".join(text parts)
  test("a recorded list of text parts is sent as the one string SGLang renders for it (the parts joined by a space)", () => {
    const parts = [
      { type: "text", text: "Weather in" },
      { type: "text", text: "Oslo?" },
    ];
    const conversation = recorded([
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      { role: "user", content: parts },
      { role: "assistant", content: "Cold." },
    ]);
    const plan = buildReplayPlan(conversation, formats);
    expect(plan.calls[0].edits).toEqual([
      {
        op: "append",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Weather in Oslo?" },
        ],
      },
    ]);
    expect(conversation.messages[1].content).toBe(parts);
  });

  test("a divergent retry rephrases the request's last message, then restores it after dropping the injected reply", () => {
    const conversation = toolConversation(3);
    const seed = [...Array(200).keys()].find((s) => drawRetries(conversation, [2, 4, 6], { seed: s, rate: 1 })[1]?.kind === "divergent_retry");
    expect(seed).toBeDefined();
    const plan = buildReplayPlan(conversation, formats, { seed: seed!, rate: 1 });
    const divergent = plan.calls.filter((c) => c.turn === 4);
    expect(divergent.map((c) => c.injected)).toEqual(["divergent_retry", null]);
    let history: ReplayHistoryEntry[] = [];
    const reply = (text: string): ReplayHistoryEntry => ({ message: { role: "assistant", content: text }, generated: true });
    for (const c of plan.calls.filter((c) => c.turn < 4)) history = [...applyEdits(history, c.edits), reply("r")];
    const attempt = applyEdits(history, divergent[0].edits);
    expect(attempt.at(-1)?.message.role).toBe("tool");
    expect(attempt.at(-1)?.message.content).not.toBe(conversation.messages[3].content);
    const resent = applyEdits([...attempt, reply("injected")], divergent[1].edits);
    expect(resent.map((e) => e.message)).toEqual([...history.map((e) => e.message), conversation.messages[3]]);
  });

  test("applyEdits: a rewind drops the last generated reply and what follows it", () => {
    const entry = (content: string, generated: boolean): ReplayHistoryEntry => ({ message: { role: generated ? "assistant" : "user", content }, generated });
    const history = [entry("q", false), entry("a", true), entry("q2", false), entry("b", true), entry("note", false)];
    expect(applyEdits(history, [{ op: "rewind" }]).map((e) => e.message.content)).toEqual(["q", "a", "q2"]);
  });
});
