// The official openai SDK (6.x) against both reference servers under each built-in matcher, over loopback HTTP.
// Each client style makes the same two calls (get_weather, then the summary); the table below is the README's.
import OpenAI from "openai";
import type { RunnableToolFunctionWithoutParse } from "openai/lib/RunnableFunction";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import type { MessageMatcherName } from "../../src/server/message-matchers";
import { expectBroken, expectContinuous, MATCHERS, QUESTION, runInSession, startClientBench, SUMMARY, type ClientBench } from "./harness";

const TOOLS = WEATHER_TOOLS as unknown as ChatCompletionTool[];
const WEATHER_FUNCTION = WEATHER_TOOLS[0].function as { description: string; parameters: Record<string, unknown> };
const question = (): ChatCompletionMessageParam[] => [{ role: "user", content: QUESTION }];

interface Drive {
  finalText: string;
  toolArguments: string[];
  streamEvents?: string[];
}

type Style = (baseURL: string) => Promise<Drive>;

const client = (baseURL: string): OpenAI => new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });

/** `chat.completions.create`, replaying the reply message as received. */
const plainCreate: Style = async (baseURL) => {
  const openai = client(baseURL);
  const messages = question();
  const first = await openai.chat.completions.create({ model: "mock", messages, tools: TOOLS });
  const call = first.choices[0].message.tool_calls![0] as { id: string; function: { arguments: string } };
  messages.push(first.choices[0].message, { role: "tool", tool_call_id: call.id, content: MOCK_TOOL_RESULTS[0] });
  const second = await openai.chat.completions.create({ model: "mock", messages, tools: TOOLS });
  return { finalText: second.choices[0].message.content ?? "", toolArguments: [call.function.arguments] };
};

/** `create({ stream: true })`, with the deltas accumulated by hand into the replayed message. */
const streamedCreate: Style = async (baseURL) => {
  const openai = client(baseURL);
  const messages = question();
  let content = "";
  const calls: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }> = [];
  for await (const chunk of await openai.chat.completions.create({ model: "mock", messages, tools: TOOLS, stream: true })) {
    const delta = chunk.choices[0]?.delta;
    content += delta?.content ?? "";
    for (const part of delta?.tool_calls ?? []) {
      calls[part.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
      const call = calls[part.index];
      call.id += part.id ?? "";
      call.function.name += part.function?.name ?? "";
      call.function.arguments += part.function?.arguments ?? "";
    }
  }
  messages.push({ role: "assistant", content, tool_calls: calls }, { role: "tool", tool_call_id: calls[0].id, content: MOCK_TOOL_RESULTS[0] });
  let finalText = "";
  for await (const chunk of await openai.chat.completions.create({ model: "mock", messages, tools: TOOLS, stream: true })) {
    finalText += chunk.choices[0]?.delta?.content ?? "";
  }
  return { finalText, toolArguments: calls.map((c) => c.function.arguments) };
};

/** `chat.completions.stream()`, replaying `finalMessage()`; records the helper's events. */
const streamHelper: Style = async (baseURL) => {
  const openai = client(baseURL);
  const messages = question();
  const events: string[] = [];
  const stream = openai.chat.completions.stream({ model: "mock", messages, tools: TOOLS });
  stream.on("tool_calls.function.arguments.done", (event) => events.push(`tool_calls.function.arguments.done ${event.name}`));
  stream.on("content.done", () => events.push("content.done"));
  const message = await stream.finalMessage();
  const call = message.tool_calls![0] as { id: string; function: { arguments: string } };
  messages.push(message, { role: "tool", tool_call_id: call.id, content: MOCK_TOOL_RESULTS[0] });
  const second = await openai.chat.completions.stream({ model: "mock", messages, tools: TOOLS }).finalMessage();
  return { finalText: second.content ?? "", toolArguments: [call.function.arguments], streamEvents: events };
};

/** `chat.completions.runTools()`, which executes get_weather itself and replays its own message list. */
const runTools =
  (stream: boolean): Style =>
  async (baseURL) => {
    const toolArguments: string[] = [];
    const tools: RunnableToolFunctionWithoutParse[] = [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: WEATHER_FUNCTION.description,
          parameters: WEATHER_FUNCTION.parameters,
          function: (args: string) => {
            toolArguments.push(args);
            return MOCK_TOOL_RESULTS[0];
          },
        },
      },
    ];
    const openai = client(baseURL);
    const runner = stream
      ? openai.chat.completions.runTools({ model: "mock", messages: question(), tools, stream: true })
      : openai.chat.completions.runTools({ model: "mock", messages: question(), tools });
    return { finalText: (await runner.finalContent()) ?? "", toolArguments };
  };

/** Which styles keep one continuous trajectory under which matcher (false: the cause the server names). */
const COMPATIBILITY: Array<{ name: string; style: Style; breaks: Partial<Record<MessageMatcherName, RegExp>> }> = [
  { name: "chat.completions.create", style: plainCreate, breaks: {} },
  { name: "chat.completions.create({ stream: true })", style: streamedCreate, breaks: {} },
  { name: "chat.completions.stream()", style: streamHelper, breaks: {} },
  {
    // runTools replays each tool call with an added function.parsed_arguments: null, which strict and
    // loose_tool_call both compare (as the Python matchers do), and split_assistant_turn on top of loose_tool_call;
    // only role_content_only ignores it.
    name: "chat.completions.runTools()",
    style: runTools(false),
    breaks: {
      strict: /keys on one side only: tool_calls\[0\]\.function\.parsed_arguments.*loose_tool_call would not accept it either/,
      loose_tool_call: /keys on one side only: tool_calls\[0\]\.function\.parsed_arguments.*loose_tool_call would not accept it either/,
      split_assistant_turn: /keys on one side only: tool_calls\[0\]\.function\.parsed_arguments.*loose_tool_call would not accept it either/,
    },
  },
  { name: "chat.completions.runTools({ stream: true })", style: runTools(true), breaks: {} },
];

let bench: ClientBench;
beforeAll(async () => {
  bench = await startClientBench();
});
afterAll(async () => {
  await bench?.close();
});

describe.each(COMPATIBILITY)("openai $name", ({ style, breaks }) => {
  test.each(MATCHERS.flatMap((matcher) => (["v1", "v2"] as const).map((version) => ({ matcher, version }))))(
    "$version under $matcher",
    async ({ matcher, version }) => {
      const target = bench.servers.find((s) => s.matcher === matcher && s.version === version)!;
      const { result, outcome } = await runInSession(target, style);
      expect(result.finalText).toBe(SUMMARY);
      expect(result.toolArguments).toEqual(['{"location": "Beijing"}']); // the arguments as the model spelled them
      const cause = breaks[matcher];
      if (cause === undefined) expectContinuous(version, outcome);
      else expectBroken(version, outcome, 1, cause);
    },
  );
});

test("chat.completions.stream() emits no tool_calls.function.arguments.done for the one-chunk fake stream", async () => {
  // The session servers send the whole reply as one chunk (tool-call delta and finish_reason together), as the
  // Python servers do; openai-node then finishes the tool call without its arguments.done event.
  const target = bench.servers.find((s) => s.matcher === "strict" && s.version === "v1")!;
  const { result } = await runInSession(target, streamHelper);
  expect(result.streamEvents).toEqual(["content.done"]);
  expect(result.toolArguments).toEqual(['{"location": "Beijing"}']);
});
