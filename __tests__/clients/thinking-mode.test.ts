// Thinking mode (miles' own default kwargs `{}`): the mock writes a reasoning block as Qwen3 does, the servers hand
// it back as `reasoning_content`, and a client that echoes the assistant message verbatim keeps one trajectory with no
// mismatch; one that drops the reasoning breaks it (docs/configuration.md says why). Real SDKs over loopback HTTP.
import OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import { MOCK_REASONING_TEXT } from "../../src/backend/thinking-mode";
import { expectContinuous, QUESTION, runInSession, startClientBench, SUMMARY, type ClientBench, type ServerUnderTest } from "./harness";

const TOOLS = WEATHER_TOOLS as unknown as ChatCompletionTool[];
const PARAMETERS = (WEATHER_TOOLS[0].function as { parameters: Record<string, unknown> }).parameters;

let thinking: ClientBench;
let plain: ClientBench;
beforeAll(async () => {
  thinking = await startClientBench({ chatTemplateKwargs: {} });
  plain = await startClientBench();
});
afterAll(async () => {
  await thinking?.close();
  await plain?.close();
});

const strict = (bench: ClientBench, version: "v1" | "v2"): ServerUnderTest => bench.servers.find((s) => s.matcher === "strict" && s.version === version)!;

/** Two `chat.completions.create` calls; `keep` decides what of the first reply message is sent back. */
function openaiTwoTurns(keep: (message: OpenAI.Chat.Completions.ChatCompletionMessage) => ChatCompletionMessageParam) {
  return async (baseURL: string) => {
    const openai = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: QUESTION }];
    const first = await openai.chat.completions.create({ model: "mock", messages, tools: TOOLS });
    const message = first.choices[0].message;
    const call = message.tool_calls![0] as { id: string };
    messages.push(keep(message), { role: "tool", tool_call_id: call.id, content: MOCK_TOOL_RESULTS[0] });
    const second = await openai.chat.completions.create({ model: "mock", messages, tools: TOOLS });
    return { first: message as unknown as Record<string, unknown>, second: second.choices[0].message as unknown as Record<string, unknown> };
  };
}

describe.each(["v1", "v2"] as const)("%s, thinking on", (version) => {
  test("the reply carries the mock's reasoning as reasoning_content, and a verbatim echo keeps one trajectory with no mismatch", async () => {
    const { result, outcome } = await runInSession(
      strict(thinking, version),
      openaiTwoTurns((message) => message),
    );
    expect(result.first.reasoning_content).toBe(MOCK_REASONING_TEXT);
    expect(result.first.content).toBe("Let me look up Beijing.");
    expect(result.second).toMatchObject({ content: SUMMARY, reasoning_content: MOCK_REASONING_TEXT });
    expectContinuous(version, outcome);
    expect(outcome.mismatch).toEqual([]);
    // the trained tokens hold both reasoning blocks, as the model wrote them
    const text = thinking.servers[0].server.tokenizer.decode(outcome.samples[0].tokens);
    expect(text.split(`<think>\n${MOCK_REASONING_TEXT}\n</think>\n\n`)).toHaveLength(3);
  });

  test("a client that drops reasoning_content breaks the trajectory at the replayed turn: its first generation is not trained on", async () => {
    const { outcome } = await runInSession(
      strict(thinking, version),
      openaiTwoTurns(({ content, tool_calls }) => ({ role: "assistant", content, tool_calls })),
    );
    // the strict matcher sees a replayed turn that differs from the stored one (no reasoning_content): v1 rolls it back
    // (one record left, the sample trains on the second generation only), v2 starts a new root beside it
    expect(outcome.records).toHaveLength(1);
    expect(outcome.samples.map((sample) => sample.weight_versions)).toEqual(version === "v1" ? [["w1"]] : [["w1"], ["w0"]]);
  });

  test("the Vercel AI SDK's generateText (it echoes reasoning back as reasoning_content) under loose_tool_call keeps one trajectory with no mismatch", async () => {
    const target = thinking.servers.find((s) => s.matcher === "loose_tool_call" && s.version === version)!;
    const { result, outcome } = await runInSession(target, async (baseURL) => {
      const run = await generateText({
        model: createOpenAICompatible({ name: "session-parity", baseURL })("mock"),
        messages: [{ role: "user", content: QUESTION }],
        tools: {
          get_weather: tool({
            description: "Return the current weather for a city.",
            inputSchema: jsonSchema<{ location: string }>(PARAMETERS),
            execute: async () => MOCK_TOOL_RESULTS[0],
          }),
        },
        stopWhen: stepCountIs(2),
        maxRetries: 0,
      });
      return { text: run.text, reasoning: run.steps.map((step) => step.reasoningText) };
    });
    expect(result.text).toBe(SUMMARY);
    expect(result.reasoning).toEqual([MOCK_REASONING_TEXT, MOCK_REASONING_TEXT]);
    expectContinuous(version, outcome);
    expect(outcome.mismatch).toEqual([]);
  });
});

test("thinking off (the package's default): no reasoning block and no reasoning_content, the verbatim echo is continuous", async () => {
  const { result, outcome } = await runInSession(
    strict(plain, "v1"),
    openaiTwoTurns((message) => message),
  );
  expect(result.first).not.toHaveProperty("reasoning_content");
  expectContinuous("v1", outcome);
  expect(outcome.mismatch).toEqual([]);
  expect(plain.servers[0].server.tokenizer.decode(outcome.samples[0].tokens)).not.toContain(MOCK_REASONING_TEXT);
});
