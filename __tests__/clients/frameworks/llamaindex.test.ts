// LlamaIndex.TS's workflow agent() (with @llamaindex/openai) against both reference servers under each built-in
// matcher, run and streamed. It replays the tool call re-serialized and re-sends the tool's output rewritten.
import { OpenAI } from "@llamaindex/openai";
import { agent } from "@llamaindex/workflow";
import { tool } from "llamaindex";
import { weatherScript, type ProcessFunction } from "../../../src/backend";
import { MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../../src/agent/texts";
import { expectBrokenWarning, QUESTION, type SessionOutcome } from "../harness";
import { describeFrameworkStyles, type FrameworkDrive, type FrameworkStyle } from "./framework-kit";

const WEATHER = WEATHER_TOOLS[0].function as { name: string; description: string; parameters: Record<string, unknown> };

/**
 * The tool message LlamaIndex sends for a string result: its `stringifyJSONToMessageContent` JSON-encodes the
 * value and then drops every pair of double quotes, so `{"temperature_celsius": 22, ...}` arrives as
 * `{\temperature_celsius\: 22, ...}`. Computed here the same way, to tell the scripted backend what to look for.
 */
const REWRITTEN_RESULT = JSON.stringify(MOCK_TOOL_RESULTS[0], null, 2).replace(/"([^"]*)"/g, "$1");

/** The weather script, reading LlamaIndex's rewritten tool output as the tool's own text. */
const llamaWeatherScript: ProcessFunction = (prompt, request) => weatherScript(prompt.split(REWRITTEN_RESULT).join(MOCK_TOOL_RESULTS[0]), request);

function weatherAgent(baseURL: string, toolInputs: unknown[]) {
  return agent({
    llm: new OpenAI({ model: "mock", apiKey: "unused", baseURL, maxRetries: 0 }),
    tools: [
      tool({
        name: WEATHER.name,
        description: WEATHER.description,
        parameters: WEATHER.parameters,
        execute: (input: unknown) => {
          toolInputs.push(input);
          return MOCK_TOOL_RESULTS[0];
        },
      }),
    ],
  });
}

async function viaRun(baseURL: string): Promise<FrameworkDrive> {
  const toolInputs: unknown[] = [];
  const result = await weatherAgent(baseURL, toolInputs).run(QUESTION);
  return { finalText: String(result.data.result), toolInputs };
}

async function viaRunStream(baseURL: string): Promise<FrameworkDrive> {
  const toolInputs: unknown[] = [];
  let finalText = "";
  for await (const event of weatherAgent(baseURL, toolInputs).runStream(QUESTION)) {
    const data = event.data as { result?: unknown } | undefined;
    if (data !== null && typeof data === "object" && "result" in data) finalText = String(data.result);
  }
  return { finalText, toolInputs };
}

// LlamaIndex keeps the parsed arguments and re-serializes them, as LangChain does: strict breaks.
const RESPELLED =
  /the replayed assistant message at index 2 differs from the stored one only in its tool-call spelling \(tool-call arguments re-serialized .*--message-matcher loose_tool_call/;
const BREAKS = { strict: (version: "v1" | "v2", outcome: SessionOutcome): void => expectBrokenWarning(version, outcome, RESPELLED) };

/** The replayed history: LlamaIndex's system prompt, the turn with re-serialized arguments, the rewritten result. */
function replayedHistory(_matcher: string, outcome: SessionOutcome): void {
  const replayed = outcome.records[1].request.messages as Array<Record<string, any>>;
  expect(replayed.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
  expect(replayed[2].tool_calls[0].function.arguments).toBe('{"location":"Beijing"}');
  expect(replayed[3].content).toBe(REWRITTEN_RESULT);
}

const STYLES: FrameworkStyle[] = [
  { streams: true, name: "agent().run()", drive: viaRun, breaks: BREAKS, continuous: replayedHistory },
  { streams: true, name: "agent().runStream()", drive: viaRunStream, breaks: BREAKS, continuous: replayedHistory },
];

describeFrameworkStyles("llamaindex", STYLES, { process: llamaWeatherScript });
