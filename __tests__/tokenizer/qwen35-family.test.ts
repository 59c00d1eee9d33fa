// The qwen35 family on the Qwen3 vocabulary: first-turn ids against Python's Jinja2 (transformers' environment) +
// HF's Rust tokenizers, append safety over the weather conversation and random ones, and the family's refusals.
// Mirrors miles' Qwen35TITOTokenizer (tito_tokenizer.py) and TestFactory/TestParserBinding in test_tito_tokenizer.py.
import { beforeAll, describe, expect, test } from "@jest/globals";
import * as path from "node:path";
import fc from "fast-check";
import { Tokenizer as RustTokenizer } from "tokenizers";
import { ChatTemplate, ChatTemplateError, defaultTokenizerDirectory, FamilyTito, loadTokenizer, qwen3TemplatePath, TitoError } from "../../src/tokenizer";
import type { ChatMessage, ChatTemplateKwargs, Qwen3Tokenizer, ToolSpec } from "../../src/tokenizer";
import { getTitoFamily, QWEN35_FAMILY } from "../../src/tokenizer/families";
import { toolCallFormat, reasoningFormat } from "../../src/backend/formats/registry";
import {
  ASSISTANT_INPUT_FOLLOWUP_TEXT,
  ASSISTANT_INPUT_TEXTS,
  FORCE_FINAL_TEXT,
  MOCK_TOOL_RESULTS,
  USER_FOLLOWUP_TEXT,
  WEATHER_TOOLS,
  WEATHER_USER_QUESTION,
} from "../../src/agent/texts";
import { buildDriverSchedule } from "../../src/agent/schedule";
import { dumpsPy, PY_DEFAULT_JSON, PY_RESPONSE_JSON, PyFloat, rememberKeyOrder } from "../../src/wire/py-json";
import { pythonMissing, runPythonScript } from "../python/python3";

const CONVERSATIONS = 220;
const TEMPLATE_FILE = "qwen35-append-safe.jinja";

let tokenizer: Qwen3Tokenizer;
let imEnd: number;

beforeAll(async () => {
  const base = await loadTokenizer();
  tokenizer = base.withChatTemplate(ChatTemplate.fromFile(path.join(path.dirname(qwen3TemplatePath()), TEMPLATE_FILE)), "qwen35");
  imEnd = base.imEndId;
});

const tito = (defaults: ChatTemplateKwargs = {}): FamilyTito => new FamilyTito(tokenizer, defaults, {}, QWEN35_FAMILY);

describe("qwen35 registration (miles' Qwen35TITOTokenizer)", () => {
  test("registered under its name with Qwen3's boundary, three append roles and the qwen3_coder parser", () => {
    const family = getTitoFamily("qwen35");
    expect(family).toBe(QWEN35_FAMILY);
    // TestParserBinding: (QWEN35, "qwen3", "qwen3_coder"); FixedTemplate(allowed_append_roles={"tool","user","assistant"})
    expect([family.wire.reasoningParser, family.wire.toolCallParser]).toEqual(["qwen3", "qwen3_coder"]);
    expect(family.allowedAppendRoles).toEqual(["tool", "user", "assistant"]);
    expect(family.pinnedKwargs).toEqual({ clear_thinking: false });
    // test_qwen_variant_inherits_qwen3_boundary_logic
    expect(family.boundary).toEqual(getTitoFamily("qwen3").boundary);
    expect(family.comparator).toEqual(getTitoFamily("qwen3").comparator);
    expect(toolCallFormat(family.wire.toolCallParser!).name).toBe("qwen3_coder");
  });

  test("a mid-session system message is refused before rendering, and by the template on a fresh render", () => {
    const old: ChatMessage[] = [
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ];
    expect(() => tito().tokenizeAppended(old, [...old, { role: "system", content: "late" }], null)).toThrow(
      new TitoError('appended message 2 has role "system", which the qwen35 TITO template cannot append; allowed roles: tool, user, assistant'),
    );
    expect(() => tito().renderPromptIds([...old, { role: "system", content: "late" }], null)).toThrow(ChatTemplateError);
    expect(() => tito().renderPromptIds([...old, { role: "system", content: "late" }], null)).toThrow(/System message must be at the beginning\./);
  });

  test("a request asking for clear_thinking=True gets Python's conflict text naming Qwen35TITOTokenizer", () => {
    expect(() => tito().mergeKwargs({ clear_thinking: true })).toThrow(
      "chat template kwarg clear_thinking=True conflicts with the value registered for Qwen35TITOTokenizer: False",
    );
  });
});

/** Text pieces safe from Unicode-version differences between Node's tables and Rust's (see TOOLCHAIN pitfall 7). */
const piece = fc.constantFrom(
  "Beijing",
  " weather",
  "?",
  "\n",
  "\n\n",
  "  ",
  "\t",
  "42",
  "3.5",
  "晴天",
  "北京",
  "é",
  "😀",
  "<think>",
  "</think>",
  "{",
  "}",
  '"',
  "'",
  "<",
  ">",
  "&",
  "x",
);
const text = fc.array(piece, { maxLength: 6 }).map((parts) => parts.join(""));
const key = fc.oneof(fc.stringMatching(/^[a-z_][a-z0-9_]{0,6}$/), fc.nat({ max: 30 }).map(String));

/** Argument values with what Python keeps and JS would lose: integral floats, booleans, None, nested containers. */
const argValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    text,
    fc.integer({ min: -50, max: 5000 }),
    fc.integer({ min: -20, max: 20 }).map((n) => new PyFloat(n)),
    fc.constantFrom(0.5, -2.25, 1e-7, 1e16, 1e22),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.uniqueArray(fc.tuple(key, tie("value")), { maxLength: 3, selector: (e) => e[0] }).map(ordered),
  ),
})).value;

function ordered(entries: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(object, k, { value: v, writable: true, enumerable: true, configurable: true });
  rememberKeyOrder(
    object,
    entries.map(([k]) => k),
  );
  return object;
}

const toolArb = fc
  .record({ name: fc.stringMatching(/^[a-z_]{1,8}$/), description: text, wrapped: fc.boolean(), props: fc.uniqueArray(key, { maxLength: 3 }) })
  .map(({ name, description, wrapped, props }) => {
    const fn = {
      name,
      description,
      parameters: ordered([
        ["type", "object"],
        ["properties", ordered(props.map((p) => [p, ordered([["type", "string"]])]))],
      ]),
    };
    return wrapped ? { type: "function", function: fn } : fn;
  });

const roundArb = fc.record({
  content: fc.oneof(fc.constant(""), text),
  reasoning: fc.option(text, { nil: undefined }),
  calls: fc.array(
    fc.record({ name: fc.stringMatching(/^[a-z_]{1,8}$/), args: fc.uniqueArray(fc.tuple(key, argValue), { maxLength: 4, selector: (e) => e[0] }) }),
    {
      maxLength: 2,
    },
  ),
  results: fc.array(text, { minLength: 1, maxLength: 2 }),
  followup: fc.option(text, { nil: undefined }),
});

const conversationArb = fc.record({
  system: fc.option(text, { nil: undefined }),
  user: text,
  rounds: fc.array(roundArb, { minLength: 1, maxLength: 3 }),
  tools: fc.option(fc.array(toolArb, { minLength: 1, maxLength: 2 }), { nil: undefined }),
  enableThinking: fc.option(fc.boolean(), { nil: undefined }),
  compact: fc.boolean(),
});

type Conversation = typeof conversationArb extends fc.Arbitrary<infer T> ? T : never;

function messagesOf(conversation: Conversation, compact: boolean): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (conversation.system !== undefined) messages.push({ role: "system", content: conversation.system });
  messages.push({ role: "user", content: conversation.user });
  conversation.rounds.forEach((round, r) => {
    const assistant: ChatMessage = { role: "assistant", content: round.content };
    if (round.reasoning !== undefined) assistant.reasoning_content = round.reasoning;
    if (round.calls.length > 0) {
      assistant.tool_calls = round.calls.map((call, c) => ({
        id: `call_${r}_${c}`,
        type: "function",
        function: { name: call.name, arguments: dumpsPy(ordered(call.args), compact ? PY_RESPONSE_JSON : PY_DEFAULT_JSON) },
      }));
      messages.push(assistant);
      for (const result of round.results) messages.push({ role: "tool", content: result });
    } else messages.push(assistant);
    if (round.followup !== undefined) messages.push({ role: "user", content: round.followup });
  });
  return messages;
}

function kwargsOf(conversation: Conversation): ChatTemplateKwargs {
  return conversation.enableThinking === undefined ? {} : { enable_thinking: conversation.enableThinking };
}

const missing = pythonMissing(["jinja2"]);
if (missing !== null) console.warn(`qwen35 Jinja2 + Rust cross-check skipped: ${missing} (apt-get install -y python3-jinja2)`);
const testWithPython = missing === null ? test : test.skip;

describe("qwen35 first-turn ids against Python's Jinja2 + HF's Rust tokenizers (Qwen3 vocabulary)", () => {
  testWithPython(`${CONVERSATIONS} random conversations: the prompt ids the server sends equal Rust's ids of Jinja2's render`, async () => {
    const conversations = fc.sample(conversationArb, { numRuns: CONVERSATIONS, seed: 3535 });
    const cases = conversations.map((conversation) => {
      const messages = messagesOf(conversation, conversation.compact);
      // the server renders with the family's pinned kwargs merged in; Python gets the same merged kwargs
      const kwargs = tito().mergeKwargs(kwargsOf(conversation));
      return { messages, tools: conversation.tools ?? null, kwargs };
    });
    const bodies = cases.map((c) => dumpsPy({ messages: c.messages, tools: c.tools, add_generation_prompt: true, kwargs: c.kwargs }, PY_RESPONSE_JSON));
    const template = tokenizer.chatTemplate.source;
    const rendered = JSON.parse(runPythonScript("render_native_qwen3.py", JSON.stringify({ template, cases: bodies }))) as Array<string | { error: string }>;
    const rust = RustTokenizer.fromFile(path.join(defaultTokenizerDirectory(), "tokenizer.json"));
    let withCalls = 0;
    for (const [index, c] of cases.entries()) {
      const python = rendered[index];
      if (typeof python !== "string") throw new Error(`case ${index}: Python failed: ${python.error}\n${bodies[index]}`);
      const ours = tito().renderPromptIds(c.messages, c.tools, c.kwargs);
      const theirs = (await rust.encode(python, null, { addSpecialTokens: false })).getIds();
      if (ours.length !== theirs.length || ours.some((id, i) => id !== theirs[i])) {
        throw new Error(`case ${index}: ids differ\n--- python render\n${python}\n--- ours\n${tokenizer.decode(ours)}\n--- input\n${bodies[index]}`);
      }
      if (python.includes("<parameter=")) withCalls += 1;
    }
    // the generator must exercise XML tool calls in most cases
    expect(withCalls).toBeGreaterThan(CONVERSATIONS / 2);
  });
});

/**
 * Append safety of a render: every prefix of `messages` that ends a turn renders (without generation prompt) to a
 * prefix of the whole render, and when thinking is on, the generation prompt before each assistant turn does too
 * (the model's prompt plus its output is the canonical render). A cut between two tool responses does not end a
 * turn: the template groups consecutive tool responses into one user turn, closed after the last.
 */
function assertPrefixRendersGrow(messages: readonly ChatMessage[], tools: readonly ToolSpec[] | null, kwargs: ChatTemplateKwargs): void {
  const merged = tito().mergeKwargs(kwargs);
  const full = tokenizer.renderChatTemplate(messages, { tools, kwargs: merged });
  for (let k = 1; k < messages.length; k += 1) {
    if (messages[k - 1].role === "tool" && messages[k].role === "tool") continue;
    const prefix = tokenizer.renderChatTemplate(messages.slice(0, k), { tools, kwargs: merged });
    if (!full.startsWith(prefix)) throw new Error(`the render of the first ${k} messages is not a prefix of the full render`);
    if (messages[k].role !== "assistant" || merged.enable_thinking === false) continue;
    const prompt = tokenizer.renderChatTemplate(messages.slice(0, k), { tools, kwargs: merged, addGenerationPrompt: true });
    if (!full.startsWith(prompt)) throw new Error(`the generation prompt after the first ${k} messages is not a prefix of the full render`);
  }
}

describe("qwen35 append safety", () => {
  test("random conversations: every prefix render that ends a turn is a prefix of the full render", () => {
    fc.assert(
      fc.property(conversationArb, (conversation) =>
        assertPrefixRendersGrow(messagesOf(conversation, true), conversation.tools ?? null, kwargsOf(conversation)),
      ),
      { seed: 35, numRuns: 80 },
    );
  });

  /**
   * The weather run for qwen35's append roles (no system reminder): the mock's completions in the family's formats
   * (qwen3_coder XML calls, qwen3 reasoning), stored as a session server stores them; at each turn the merged ids
   * must equal the prompt rendered from scratch, and every prefix render must be a prefix of the last render.
   */
  function playWeather(kwargs: ChatTemplateKwargs, withReasoning: boolean): { turns: number; messages: ChatMessage[] } {
    const family = tito();
    const tools = WEATHER_TOOLS;
    const calls = toolCallFormat("qwen3_coder");
    const reasoning = reasoningFormat("qwen3");
    // one cycle of the schedule for tool, user and assistant appends (no system_reminder: qwen35 refuses it)
    expect(buildDriverSchedule(QWEN35_FAMILY.allowedAppendRoles, 1)).not.toContain("system_reminder");
    const replies = [
      calls.write("Let me look up Beijing.", [{ name: "get_weather", arguments: { location: "Beijing" } }]),
      "Beijing is 22 degrees Celsius and sunny.",
      calls.write("Let me look up Shanghai.", [{ name: "get_weather", arguments: { location: "Shanghai" } }]),
      "Shanghai is 15 degrees Celsius and cloudy.",
      "<final_answer>Beijing is sunny at 22 degrees and Shanghai is cloudy at 15 degrees.</final_answer>",
      "<final_answer>Beijing was sunny at 22 degrees and Shanghai was rainy at 30 degrees.</final_answer>",
    ];
    const appends: ChatMessage[][] = [
      [{ role: "tool", content: MOCK_TOOL_RESULTS[0] }],
      [{ role: "user", content: USER_FOLLOWUP_TEXT }],
      [{ role: "tool", content: MOCK_TOOL_RESULTS[1] }],
      [{ role: "user", content: FORCE_FINAL_TEXT }],
      [
        { role: "assistant", content: ASSISTANT_INPUT_TEXTS[0] },
        { role: "assistant", content: ASSISTANT_INPUT_TEXTS[1] },
        { role: "user", content: ASSISTANT_INPUT_FOLLOWUP_TEXT },
      ],
    ];
    let messages: ChatMessage[] = [
      { role: "system", content: "You are a weather assistant." },
      { role: "user", content: WEATHER_USER_QUESTION },
    ];
    let stored: number[] = family.renderPromptIds(messages, tools, kwargs);
    replies.forEach((reply, turn) => {
      const completion = withReasoning ? reasoning.write(`Thinking about turn ${turn}.`, reply, true) : reply;
      stored = [...stored, ...tokenizer.encode(completion), imEnd];
      // the message the session server stores: reasoning and tool calls split out as SGLang's parsers split them
      const split = withReasoning ? reasoning.parse(completion, true) : { reasoning: null, content: completion };
      const parsed = calls.parse(split.content, tools);
      const assistant: ChatMessage = { role: "assistant", content: parsed.content };
      if (split.reasoning !== null) assistant.reasoning_content = split.reasoning;
      if (parsed.calls.length > 0) {
        assistant.tool_calls = parsed.calls.map((call, position) => ({
          id: `call${position}`,
          type: "function",
          function: { name: call.name, arguments: call.arguments },
        }));
      }
      const old = [...messages, assistant];
      if (turn === appends.length) {
        messages = old;
        return;
      }
      const next = [...old, ...appends[turn]];
      const merged = family.mergeTokens(old, next, stored, tools, kwargs);
      expect(merged).toEqual(family.renderPromptIds(next, tools, kwargs));
      // the tito_session_mismatch report of the stored turn is empty (the comparator trims the template's final "\n")
      expect(family.compareWithCanonical(old, stored, tools, kwargs)).toEqual([]);
      messages = next;
      stored = merged;
    });
    assertPrefixRendersGrow(messages, tools, kwargs);
    return { turns: replies.length, messages };
  }

  test("the weather run with the fixture's enable_thinking=false: merged ids equal the fresh render at every turn", () => {
    const { messages } = playWeather({ enable_thinking: false }, false);
    const first = messages[2];
    expect(first.content).toBe("Let me look up Beijing.\n\n");
    expect(first.tool_calls?.[0].function).toEqual({ name: "get_weather", arguments: '{"location": "Beijing"}' });
  });

  test("the weather run with the server default {} (thinking on): reasoning written after the prompt's <think>", () => {
    const { messages } = playWeather({}, true);
    expect(messages[2].reasoning_content).toBe("Thinking about turn 0.");
  });
});
