// The agent under test, written with the OpenAI Agents SDK: one tool, the Chat Completions model pointed at whatever
// base URL it is handed. Shared by the recording script and the Jest test (CommonJS, so Jest loads it as it is).
const { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } = require("@openai/agents");

// Tracing would send spans to the OpenAI platform; a test against local servers needs none.
setTracingDisabled(true);

const weatherAgent = new Agent({
  name: "weather",
  model: "mock",
  tools: [
    tool({
      name: "get_weather",
      description: "Return the current weather for a city.",
      parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"], additionalProperties: false },
      strict: false,
      execute: async () => '{"temperature_celsius": 22, "condition": "sunny"}',
    }),
  ],
});

/** The agent function runAgentParity calls once per session-server version. */
async function weatherAgentRun({ baseURL }) {
  const runner = new Runner({ modelProvider: new OpenAIProvider({ baseURL, apiKey: "unused", useResponses: false }), tracingDisabled: true });
  const result = await runner.run(weatherAgent, "What's the weather in Beijing?");
  return { answer: result.finalOutput };
}

// The SDK re-sends a reply that has text before its tool call as two assistant messages (the text, then the calls);
// split_assistant_turn reads them as the one turn the server stored.
const SERVER_OPTIONS = { messageMatcher: "split_assistant_turn" };

module.exports = { weatherAgentRun, SERVER_OPTIONS, CASSETTE: `${__dirname}/cassettes/weather.jsonl` };
