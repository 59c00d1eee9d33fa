// The OpenAI Agents SDK (@openai/agents 0.14, Chat Completions model) against both reference servers under each
// built-in matcher. It re-sends a reply with text before its tool call as two assistant messages; see the README.
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from "@openai/agents";
import { MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../../src/agent/texts";
import { weatherScript, type ProcessFunction } from "../../../src/backend";
import { expectRefused, QUESTION, type SessionOutcome } from "../harness";
import { describeFrameworkStyles, type FrameworkDrive, type FrameworkStyle } from "./framework-kit";

// Tracing would export spans to the OpenAI platform; the tests never leave loopback (the guard checks it).
setTracingDisabled(true);

const WEATHER = WEATHER_TOOLS[0].function as {
  name: string;
  description: string;
  parameters: { type: "object"; properties: Record<string, Record<string, unknown>>; required: string[] };
};

function weatherAgent(toolInputs: unknown[]): Agent {
  return new Agent({
    name: "weather",
    model: "mock",
    tools: [
      tool({
        name: WEATHER.name,
        description: WEATHER.description,
        // a non-strict schema: the model may send what the agent's own schema allows
        parameters: { type: "object", properties: { location: WEATHER.parameters.properties.location }, required: ["location"], additionalProperties: true },
        strict: false,
        execute: async (input: unknown) => {
          toolInputs.push(input);
          return MOCK_TOOL_RESULTS[0];
        },
      }),
    ],
  });
}

/** A runner on the session's base URL with the Chat Completions API (the Responses API is not served). */
function runner(baseURL: string): Runner {
  return new Runner({ modelProvider: new OpenAIProvider({ baseURL, apiKey: "unused", useResponses: false }), tracingDisabled: true });
}

async function viaRun(baseURL: string): Promise<FrameworkDrive> {
  const toolInputs: unknown[] = [];
  const result = await runner(baseURL).run(weatherAgent(toolInputs), QUESTION);
  return { finalText: String(result.finalOutput), toolInputs };
}

async function viaStreamedRun(baseURL: string): Promise<FrameworkDrive> {
  const toolInputs: unknown[] = [];
  const result = await runner(baseURL).run(weatherAgent(toolInputs), QUESTION, { stream: true });
  await result.completed;
  return { finalText: String(result.finalOutput), toolInputs };
}

// The stored turn is {content: "Let me look up Beijing.", tool_calls: [get_weather]}; the SDK re-sends it as
// [{"type": "text", "text": ...}] and then {content: null, tool_calls}: no miles matcher reads that as one message,
// and the text-part list would have to be rendered, so the server refuses it (400) and names the matcher that helps.
const SPLIT = /the replayed assistant turn at index 1 arrives split into two assistant messages .*--message-matcher split_assistant_turn/;
const REFUSAL = new RegExp(
  String.raw`^messages\[1\]\.content must be a string or null for role "assistant", got a list \(content parts\); ` +
    String.raw`content parts and objects are not rendered by the chat template; ` +
    SPLIT.source,
);
const splitRefused = (version: "v1" | "v2", refusal: { error: unknown; outcome: SessionOutcome }): void => expectRefused(version, refusal, REFUSAL, SPLIT);
const REFUSED = { strict: splitRefused, loose_tool_call: splitRefused, role_content_only: splitRefused };

/** Under split_assistant_turn the second request's history holds the one turn the model produced. */
function joinedTurn(_matcher: string, outcome: SessionOutcome): void {
  const replayed = outcome.records[1].request.messages as Array<Record<string, unknown>>;
  expect(replayed.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  expect(replayed[1]).toMatchObject({
    role: "assistant",
    content: "Let me look up Beijing.",
    tool_calls: [{ id: "call00000", function: { name: "get_weather", arguments: '{"location": "Beijing"}' } }],
  });
}

const STYLES: FrameworkStyle[] = [
  { streams: false, name: "Runner.run", drive: viaRun, breaks: {}, refused: REFUSED, continuous: joinedTurn },
  { streams: true, name: "Runner.run({ stream: true })", drive: viaStreamedRun, breaks: {}, refused: REFUSED, continuous: joinedTurn },
];

describeFrameworkStyles("@openai/agents", STYLES, { label: "a reply with text before its tool call" });

/** The weather script with the Beijing tool call's leading sentence cut: the reply is the tool call alone. */
const callOnlyScript: ProcessFunction = async (prompt, request) => {
  const reply = await weatherScript(prompt, request);
  const call = reply.text.indexOf("<tool_call>");
  return call > 0 ? { ...reply, text: reply.text.slice(call) } : reply;
};

/** Without text before the call the SDK re-sends the turn as one message, as stored. */
function oneMessage(_matcher: string, outcome: SessionOutcome): void {
  const replayed = outcome.records[1].request.messages as Array<Record<string, unknown>>;
  expect(replayed.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
}

describeFrameworkStyles(
  "@openai/agents",
  [
    { streams: false, name: "Runner.run", drive: viaRun, breaks: {}, continuous: oneMessage },
    { streams: true, name: "Runner.run({ stream: true })", drive: viaStreamedRun, breaks: {}, continuous: oneMessage },
  ],
  { label: "a reply that is only the tool call", process: callOnlyScript },
);
