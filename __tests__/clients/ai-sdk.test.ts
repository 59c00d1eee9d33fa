// The Vercel AI SDK (ai 6 with @ai-sdk/openai-compatible 2) against both reference servers under each matcher.
// generateText and streamText execute get_weather and take a second step; the README's table states the outcome.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import type { MessageMatcherName } from "../../src/server/message-matchers";
import { expectBroken, expectContinuous, MATCHERS, QUESTION, runInSession, startClientBench, SUMMARY, type ClientBench } from "./harness";

const PARAMETERS = (WEATHER_TOOLS[0].function as { parameters: Record<string, unknown> }).parameters;

interface Drive {
  finalText: string;
  steps: number;
  toolInputs: unknown[];
}

function weatherTools(inputs: unknown[]) {
  return {
    get_weather: tool({
      description: "Return the current weather for a city.",
      inputSchema: jsonSchema<{ location: string }>(PARAMETERS),
      execute: async (input: { location: string }) => {
        inputs.push(input);
        return MOCK_TOOL_RESULTS[0];
      },
    }),
  };
}

const model = (baseURL: string) => createOpenAICompatible({ name: "session-parity", baseURL })("mock");

async function viaGenerateText(baseURL: string): Promise<Drive> {
  const toolInputs: unknown[] = [];
  const result = await generateText({
    model: model(baseURL),
    messages: [{ role: "user", content: QUESTION }],
    tools: weatherTools(toolInputs),
    stopWhen: stepCountIs(2),
    maxRetries: 0,
  });
  return { finalText: result.text, steps: result.steps.length, toolInputs };
}

async function viaStreamText(baseURL: string): Promise<Drive> {
  const toolInputs: unknown[] = [];
  const result = streamText({
    model: model(baseURL),
    messages: [{ role: "user", content: QUESTION }],
    tools: weatherTools(toolInputs),
    stopWhen: stepCountIs(2),
    maxRetries: 0,
  });
  return { finalText: await result.text, steps: (await result.steps).length, toolInputs };
}

// Both re-serialize the tool call's arguments from the parsed input ({"location":"Beijing"}, no space) when
// they replay it; strict compares the text and breaks, loose_tool_call compares JSON objects and keeps the turn.
const RESPELLED = /tool-call arguments re-serialized .*--message-matcher loose_tool_call/;
const COMPATIBILITY: Array<{ name: string; drive: (baseURL: string) => Promise<Drive>; breaks: Partial<Record<MessageMatcherName, RegExp>> }> = [
  { name: "generateText", drive: viaGenerateText, breaks: { strict: RESPELLED } },
  { name: "streamText", drive: viaStreamText, breaks: { strict: RESPELLED } },
];

let bench: ClientBench;
beforeAll(async () => {
  bench = await startClientBench();
});
afterAll(async () => {
  await bench?.close();
});

describe.each(COMPATIBILITY)("ai $name with an executed tool over two steps", ({ drive, breaks }) => {
  test.each(MATCHERS.flatMap((matcher) => (["v1", "v2"] as const).map((version) => ({ matcher, version }))))(
    "$version under $matcher",
    async ({ matcher, version }) => {
      const target = bench.servers.find((s) => s.matcher === matcher && s.version === version)!;
      const { result, outcome } = await runInSession(target, drive);
      expect(result).toEqual({ finalText: SUMMARY, steps: 2, toolInputs: [{ location: "Beijing" }] });
      const replayed = outcome.records[outcome.records.length - 1].request.messages[1];
      expect(replayed.tool_calls[0].function.arguments).toBe('{"location":"Beijing"}');
      const cause = breaks[matcher];
      if (cause === undefined) expectContinuous(version, outcome);
      else expectBroken(version, outcome, 1, cause);
    },
  );
});
