// Random conversations for the DeepSeek encoders: system prompts, tools, parallel tool calls with their results,
// reasoning, unicode and DSML-looking text, and the append blocks a session sees after each assistant turn.
import fc from "fast-check";
import type { ChatMessage, ToolSpec } from "../../../src/tokenizer/types";

/** One conversation: the first request's messages, then per later turn the model's reply and the messages appended. */
export interface DeepSeekCase {
  tools: ToolSpec[] | null;
  kwargs: Record<string, unknown>;
  /** Messages of the first request (ends on a user or tool turn). */
  first: ChatMessage[];
  /** Each later turn: the assistant reply to the request before it, then the messages the client appends. */
  turns: { reply: ChatMessage; appended: ChatMessage[] }[];
}

export const TOOLS: ToolSpec[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Weather of a city",
      parameters: { type: "object", properties: { location: { type: "string" }, days: { type: "integer" } }, required: ["location"] },
    },
  },
  {
    type: "function",
    function: { name: "search", description: "Search the web — fast", parameters: { type: "object", properties: { q: { type: "string" } } } },
  },
];

const text = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: "grapheme", minLength: 0, maxLength: 20 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      " padded ",
      "\nline one\nline two\n",
      "数字 123 与 emoji 🌤️",
      "naïve café",
      "<think>not really</think>",
      "<｜User｜> literal",
      '<｜DSML｜invoke name="x">',
      "</result> and <tool_result>",
      "",
    ),
  },
);

/** Argument texts: JSON objects with every value kind, Python-only spellings (2.0, 1e5) and out-of-order numeric keys. */
const argumentsText = fc.oneof(
  fc.record({ location: text, days: fc.integer({ min: -3, max: 30 }) }).map((args) => JSON.stringify(args)),
  fc.record({ q: text }).map((args) => JSON.stringify(args)),
  fc.constantFrom(
    '{"location": "Paris", "days": 2.0}',
    '{"q": "x", "n": 1e5, "flag": true, "none": null}',
    '{"2": "b", "1": "a", "nested": {"k": [1, 2.5, "三"]}}',
    '{"location": "multi\\nline", "tags": ["a", "b"]}',
    "{}",
  ),
);

const toolCall = fc.record({ name: fc.constantFrom("get_weather", "search"), args: argumentsText });

const reply: fc.Arbitrary<{ content: string; reasoning: string | null; calls: { name: string; args: string }[] }> = fc.record({
  content: text,
  reasoning: fc.option(text, { nil: null }),
  calls: fc.oneof(
    { weight: 2, arbitrary: fc.constant<{ name: string; args: string }[]>([]) },
    { weight: 3, arbitrary: fc.array(toolCall, { minLength: 1, maxLength: 3 }) },
  ),
});

type Block = "user" | "system" | "assistant" | "user-system";

/** Random DeepSeek conversations; `family` decides which append roles occur (V4 cannot append a system turn). */
export function deepseekConversations(family: "deepseekv32" | "deepseekv4"): fc.Arbitrary<DeepSeekCase> {
  const kwargs =
    family === "deepseekv4"
      ? fc.constantFrom<Record<string, unknown>>(
          { enable_thinking: false },
          { enable_thinking: true },
          { thinking: true },
          { thinking_mode: "chat" },
          {},
          { enable_thinking: true, reasoning_effort: "max" },
          { reasoning_effort: "high" },
        )
      : fc.constantFrom<Record<string, unknown>>({ enable_thinking: false }, { enable_thinking: true }, { thinking: true }, { thinking_mode: "chat" }, {});
  const blocks: Block[] = family === "deepseekv4" ? ["user", "assistant"] : ["user", "system", "assistant", "user-system"];
  return fc
    .record({
      system: fc.option(text, { nil: undefined }),
      withTools: fc.boolean(),
      kwargs,
      firstUser: text,
      replies: fc.array(
        fc.record({ reply, block: fc.constantFrom(...blocks), next: text, results: fc.array(text, { minLength: 3, maxLength: 3 }), reversed: fc.boolean() }),
        {
          minLength: 1,
          maxLength: 4,
        },
      ),
    })
    .map(({ system, withTools, kwargs: chosen, firstUser, replies }) => {
      const first: ChatMessage[] = system === undefined ? [] : [{ role: "system", content: system }];
      first.push({ role: "user", content: firstUser });
      const turns = replies.map((step, turn) => {
        const calls = withTools ? step.reply.calls : [];
        const message: ChatMessage = { role: "assistant", content: step.reply.content };
        if (step.reply.reasoning !== null) message.reasoning_content = step.reply.reasoning;
        if (calls.length > 0) {
          message.tool_calls = calls.map((call, index) => ({
            id: `call_${turn}_${index}`,
            type: "function" as const,
            function: { name: call.name, arguments: call.args },
          }));
        }
        const appended: ChatMessage[] = [];
        // parallel results come back in any order (V4 sorts them into the calls' order by id)
        const order = calls.map((_, index) => index);
        if (step.reversed) order.reverse();
        for (const index of order) appended.push({ role: "tool", tool_call_id: `call_${turn}_${index}`, content: step.results[index] });
        if (step.block === "system" || step.block === "user-system") appended.push({ role: "system", content: `reminder: ${step.next}` });
        if (step.block === "assistant") appended.push({ role: "assistant", content: `prefill ${step.next}` });
        if (calls.length === 0 || step.block !== "assistant") appended.push({ role: "user", content: step.next });
        return { reply: message, appended };
      });
      return { tools: withTools ? TOOLS : null, kwargs: chosen, first, turns };
    });
}
