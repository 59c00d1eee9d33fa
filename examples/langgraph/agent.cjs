// The agent under test, written with LangGraph: a ReAct agent (createReactAgent on LangChain's ChatOpenAI) with one
// tool, pointed at whatever base URL it is handed. Shared by the recording script and the Jest test (CommonJS).
const { HumanMessage } = require("@langchain/core/messages");
const { tool } = require("@langchain/core/tools");
const { createReactAgent } = require("@langchain/langgraph/prebuilt");
const { ChatOpenAI } = require("@langchain/openai");

const getWeather = tool(async () => '{"temperature_celsius": 22, "condition": "sunny"}', {
  name: "get_weather",
  description: "Return the current weather for a city.",
  schema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
});

/** The agent function runAgentParity calls once per session-server version. */
async function weatherAgentRun({ baseURL, signal }) {
  const llm = new ChatOpenAI({ model: "mock", apiKey: "unused", configuration: { baseURL }, maxRetries: 0 });
  const agent = createReactAgent({ llm, tools: [getWeather] });
  const state = await agent.invoke({ messages: [new HumanMessage("What's the weather in Beijing?")] }, { signal });
  return { answer: state.messages.at(-1).content };
}

// LangChain replays a tool call with its arguments re-serialized ({"location":"Beijing"} for the model's
// {"location": "Beijing"}); loose_tool_call compares them as JSON objects, strict as text.
const SERVER_OPTIONS = { messageMatcher: "loose_tool_call" };

module.exports = { weatherAgentRun, SERVER_OPTIONS, CASSETTE: `${__dirname}/cassettes/weather.jsonl` };
