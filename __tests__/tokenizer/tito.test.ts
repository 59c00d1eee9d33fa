// Qwen3 TITO: merged prompts equal the from-scratch encoding, appended roles and kwargs are policed, errors are clear.
// Every expectation is the from-scratch render + encode of the same messages, computed in the test.
import { beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import {
  ASSISTANT_INPUT_FOLLOWUP_TEXT,
  ASSISTANT_INPUT_TEXTS,
  buildInitialMessages,
  MOCK_TOOL_RESULTS,
  SYSTEM_REMINDER_TEXT,
  USER_FOLLOWUP_TEXT,
  WEATHER_TOOLS,
} from "../../src/agent/texts";
import type { TitoLike } from "../../src/server/policy";
import {
  ChatTemplate,
  createTito,
  loadTokenizer,
  Qwen3Tito,
  TitoError,
  type ChatMessage,
  type ChatTemplateKwargs,
  type Qwen3Tokenizer,
} from "../../src/tokenizer";
import { completionIds, firstTurn, type StoredTurn } from "./conversation";
import { PyFloat } from "../../src/wire/py-json";

let tokenizer: Qwen3Tokenizer;
let tito: Qwen3Tito;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  tito = createTito(tokenizer, { enable_thinking: false });
});

function weatherCall(city: string, n: number): ChatMessage {
  return {
    role: "assistant",
    content: "",
    tool_calls: [{ id: `call0000${n}`, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ location: city }) } }],
  };
}

/** Appends `appended`, checks the merged prompt against the from-scratch encoding, then stores `reply`. */
function step(state: StoredTurn, appended: ChatMessage[], reply: ChatMessage, kwargs: ChatTemplateKwargs): StoredTurn {
  const messages = [...state.messages, ...appended];
  const merged = tito.mergeTokens(state.messages, messages, state.ids, WEATHER_TOOLS, kwargs);
  const scratch = tokenizer.encode(
    tokenizer.renderChatTemplate(messages, { tools: WEATHER_TOOLS, addGenerationPrompt: true, kwargs: tito.mergeKwargs(kwargs) }),
  );
  expect(merged).toEqual(scratch);
  expect(tito.renderPromptIds(messages, WEATHER_TOOLS, kwargs)).toEqual(scratch);
  const ids = [...merged, ...completionIds(tokenizer, messages, reply, WEATHER_TOOLS, tito.mergeKwargs(kwargs))];
  return { messages: [...messages, reply], ids };
}

describe("the contract the session servers use", () => {
  it("satisfies the servers' TitoLike interface and exposes the Qwen3 constants", () => {
    const asPolicyTito: TitoLike = tito;
    expect(asPolicyTito.maxTrimTokens).toBe(0);
    expect([...tito.allowedAppendRoles].sort()).toEqual(["assistant", "system", "tool", "user"]);
    expect(new Qwen3Tito(tokenizer).defaultKwargs).toEqual({ clear_thinking: false });
  });
});

describe("TITO invariant: merged prompt = encode(render(all messages, generation prompt))", () => {
  const replies = {
    beijing: weatherCall("Beijing", 0),
    shanghai: weatherCall("Shanghai", 1),
    text: { role: "assistant", content: "Shanghai is 30 degrees and rainy." },
    summary: { role: "assistant", content: "<final_answer>Beijing 22C sunny; Shanghai 30C rainy.</final_answer>" },
  } satisfies Record<string, ChatMessage>;

  it.each([
    ["server defaults (thinking off)", {}],
    ["thinking on", { enable_thinking: true }],
  ])("holds across tool, user, system and assistant appends with %s", (_label, kwargs) => {
    let state = firstTurn(tito, tokenizer, buildInitialMessages(), replies.beijing, WEATHER_TOOLS, kwargs);
    expect(state.ids[state.ids.length - 1]).toBe(151645);
    state = step(state, [{ role: "tool", content: MOCK_TOOL_RESULTS[0], tool_call_id: "call00000" }], replies.text, kwargs);
    state = step(state, [{ role: "user", content: USER_FOLLOWUP_TEXT }], replies.shanghai, kwargs);
    state = step(state, [{ role: "tool", content: MOCK_TOOL_RESULTS[2], tool_call_id: "call00001" }], replies.text, kwargs);
    state = step(state, [{ role: "system", content: SYSTEM_REMINDER_TEXT }], replies.text, kwargs);
    state = step(
      state,
      [
        { role: "assistant", content: ASSISTANT_INPUT_TEXTS[0] },
        { role: "assistant", content: ASSISTANT_INPUT_TEXTS[1] },
        { role: "user", content: ASSISTANT_INPUT_FOLLOWUP_TEXT },
      ],
      replies.summary,
      kwargs,
    );
    expect(tito.compareWithCanonical(state.messages, state.ids, WEATHER_TOOLS, kwargs)).toEqual([]);
  });

  it("holds for a stored assistant turn with reasoning and for parallel tool results appended together", () => {
    const kwargs = { enable_thinking: true };
    const reply: ChatMessage = {
      role: "assistant",
      content: "",
      reasoning_content: "Two cities, two calls.",
      tool_calls: [weatherCall("Beijing", 0).tool_calls![0], weatherCall("Shanghai", 1).tool_calls![0]],
    };
    let state = firstTurn(tito, tokenizer, buildInitialMessages(), reply, WEATHER_TOOLS, kwargs);
    state = step(
      state,
      [
        { role: "tool", content: MOCK_TOOL_RESULTS[0], tool_call_id: "call00000" },
        { role: "tool", content: MOCK_TOOL_RESULTS[2], tool_call_id: "call00001" },
      ],
      { role: "assistant", content: "Both done.", reasoning_content: "Summarize." },
      kwargs,
    );
    expect(tito.compareWithCanonical(state.messages, state.ids, WEATHER_TOOLS, kwargs)).toEqual([]);
  });

  it("holds for random append sequences and message texts", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "Z", " ", "\n", "é", "天", "{", '"', "1", "<", ">", "/", "think"), maxLength: 40 });
    const appendStep = fc.record({
      roles: fc.array(fc.constantFrom("tool", "user", "system", "assistant"), { minLength: 1, maxLength: 3 }),
      text,
      reply: text,
      withCall: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(appendStep, { minLength: 1, maxLength: 4 }), fc.boolean(), (steps, thinking) => {
        const kwargs = { enable_thinking: thinking };
        let state = firstTurn(tito, tokenizer, buildInitialMessages(), weatherCall("Beijing", 0), WEATHER_TOOLS, kwargs);
        steps.forEach((s, i) => {
          const appended = s.roles.map((role) => ({ role, content: `${s.text}` }));
          const reply: ChatMessage = s.withCall ? { ...weatherCall(s.text, i), content: s.reply.trim() } : { role: "assistant", content: s.reply.trim() };
          state = step(state, appended, reply, kwargs);
        });
      }),
      { numRuns: 15, seed: 20240607 },
    );
  });
});

describe("merge rules", () => {
  const old: ChatMessage[] = [...buildInitialMessages(), weatherCall("Beijing", 0)];
  const next: ChatMessage[] = [...old, { role: "tool", content: MOCK_TOOL_RESULTS[0] }];

  it("adds the newline only when the stored ids end in <|im_end|>", () => {
    const suffix = tito.tokenizeAppended(old, next, WEATHER_TOOLS);
    expect(suffix[0]).toBe(151644);
    expect(tito.mergeTokens(old, next, [1, 2, 151645], WEATHER_TOOLS)).toEqual([1, 2, 151645, 198, ...suffix]);
    expect(tito.mergeTokens(old, next, [1, 2, 3], WEATHER_TOOLS)).toEqual([1, 2, 3, ...suffix]);
  });

  it("mergeTokens is the stored ids followed by mergedTailIds, in a fresh array that shares nothing with them", () => {
    const call = weatherCall("Beijing", 0);
    const first = firstTurn(tito, tokenizer, buildInitialMessages(), call, WEATHER_TOOLS, {});
    const next = [...first.messages, { role: "tool", content: MOCK_TOOL_RESULTS[0] }];
    const stored = Object.freeze([...first.ids]);
    const tail = tito.mergedTailIds(first.messages, next, stored, WEATHER_TOOLS, {});
    expect(tail[0]).toBe(198);
    const merged = tito.mergeTokens(first.messages, next, stored, WEATHER_TOOLS, {});
    expect(merged).toEqual([...stored, ...tail]);
    merged[0] = -1;
    merged.push(7);
    expect(stored).toEqual(first.ids);
    expect(tito.mergedTailIds(first.messages, next, stored.slice(0, -1), WEATHER_TOOLS, {})).toEqual(tail.slice(1));
  });

  it("the suffix ends with the generation prompt and depends on the kwargs", () => {
    const off = tito.tokenizeAppended(old, next, WEATHER_TOOLS);
    const on = tito.tokenizeAppended(old, next, WEATHER_TOOLS, { enable_thinking: true });
    expect(tokenizer.decode(off).endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n")).toBe(true);
    expect(tokenizer.decode(on).endsWith("</tool_response><|im_end|>\n<|im_start|>assistant\n")).toBe(true);
  });

  it("with nothing appended, the suffix is the generation prompt alone", () => {
    expect(tokenizer.decode(tito.tokenizeAppended(old, old, WEATHER_TOOLS))).toBe("<|im_start|>assistant\n<think>\n\n</think>\n\n");
  });

  it("refuses to append to an empty history", () => {
    expect(() => tito.tokenizeAppended([], buildInitialMessages(), WEATHER_TOOLS)).toThrow(/no stored messages/);
  });
});

describe("appended roles", () => {
  const old: ChatMessage[] = [...buildInitialMessages(), { role: "assistant", content: "Hello" }];

  it("rejects a developer message, naming the role and its index", () => {
    const next = [...old, { role: "user", content: "ok" }, { role: "developer", content: "be brief" }];
    expect(() => tito.assertAppendable(old, next)).toThrow(TitoError);
    expect(() => tito.tokenizeAppended(old, next, WEATHER_TOOLS)).toThrow(/appended message 4 has role "developer"/);
    expect(() => tito.mergeTokens(old, next, [151645], WEATHER_TOOLS)).toThrow(/allowed roles: tool, user, system, assistant/);
  });

  it("accepts each allowed role", () => {
    for (const role of ["tool", "user", "system", "assistant"]) {
      expect(() => tito.assertAppendable(old, [...old, { role, content: "x" }])).not.toThrow();
    }
  });

  it("rejects a new list shorter than the stored one, and a changed prefix when given a matcher", () => {
    expect(() => tito.assertAppendable(old, old.slice(0, 2))).toThrow("new messages (2) are fewer than stored messages (3)");
    const sameRoleAndContent = (a: ChatMessage, b: ChatMessage) => a.role === b.role && a.content === b.content;
    const edited = [old[0], { role: "user", content: "What's the weather in Paris?" }, old[2], { role: "user", content: "x" }];
    expect(() => tito.assertAppendable(old, edited, sameRoleAndContent)).toThrow(/message 1 \(role "user"\) does not match/);
    expect(() => tito.assertAppendable(old, [...old, { role: "user", content: "x" }], sameRoleAndContent)).not.toThrow();
  });
});

describe("a template that is not append-only", () => {
  it("fails clearly when the rendered suffix does not extend the rendered prefix", () => {
    const counting = new ChatTemplate(
      "{{- messages | length }} messages\n{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endfor %}",
      "counting test template",
    );
    const fragile = new Qwen3Tito(tokenizer.withChatTemplate(counting));
    const old: ChatMessage[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ];
    expect(() => fragile.tokenizeAppended(old, [...old, { role: "tool", content: "r" }], null)).toThrow(TitoError);
    expect(() => fragile.tokenizeAppended(old, [...old, { role: "tool", content: "r" }], null)).toThrow(
      /rendered suffix for appended \[tool\] does not extend the rendered prefix/,
    );
  });
});

describe("chat_template_kwargs merging", () => {
  it("layers request kwargs over the defaults and pins clear_thinking to false", () => {
    expect(tito.mergeKwargs()).toEqual({ enable_thinking: false, clear_thinking: false });
    expect(tito.mergeKwargs(null)).toEqual({ enable_thinking: false, clear_thinking: false });
    expect(tito.mergeKwargs({ enable_thinking: true, custom: 1 })).toEqual({ enable_thinking: true, clear_thinking: false, custom: 1 });
    expect(tito.mergeKwargs({ clear_thinking: false })).toEqual({ enable_thinking: false, clear_thinking: false });
    expect(tito.mergeKwargs(tito.mergeKwargs({ enable_thinking: true }))).toEqual(tito.mergeKwargs({ enable_thinking: true }));
  });

  it("rejects a request that contradicts a pinned kwarg, or kwargs that are not an object", () => {
    expect(() => tito.mergeKwargs({ clear_thinking: true })).toThrow(TitoError);
    // mirrors miles/utils/chat_template_utils/tito_tokenizer.py::TITOTokenizer.__init__ (`!=` check and its ValueError text)
    expect(() => tito.mergeKwargs({ clear_thinking: true })).toThrow(
      "chat template kwarg clear_thinking=True conflicts with the value registered for Qwen3TITOTokenizer: False",
    );
    expect(() => tito.mergeKwargs({ clear_thinking: "no" })).toThrow("chat template kwarg clear_thinking='no' conflicts with");
    expect(() => tito.mergeKwargs({ clear_thinking: null })).toThrow("chat template kwarg clear_thinking=None conflicts with");
    // Python equality: 0 == False and 0.0 == False, so both are accepted and replaced by the pinned False
    expect(tito.mergeKwargs({ clear_thinking: 0 })).toEqual({ enable_thinking: false, clear_thinking: false });
    expect(tito.mergeKwargs({ clear_thinking: new PyFloat(0) })).toEqual({ enable_thinking: false, clear_thinking: false });
    expect(() => tito.mergeKwargs({ clear_thinking: 1 })).toThrow("chat template kwarg clear_thinking=1 conflicts with");
    expect(() => tito.mergeKwargs(["x"] as unknown as ChatTemplateKwargs)).toThrow("chat_template_kwargs must be an object");
    expect(() => tito.tokenizeAppended(buildInitialMessages(), buildInitialMessages(), null, { clear_thinking: true })).toThrow(TitoError);
  });

  it("rejects server defaults that contradict a pinned kwarg", () => {
    expect(() => createTito(tokenizer, { clear_thinking: true })).toThrow(/clear_thinking=True conflicts .*: False \(server default\)/);
  });
});
