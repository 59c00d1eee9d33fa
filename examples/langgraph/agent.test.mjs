// A LangGraph ReAct agent (createReactAgent on LangChain's ChatOpenAI) through the reference v1 and v2 session
// servers, started in this process against the mock backend with the loose_tool_call matcher: one trajectory.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { ChatOpenAI } from "@langchain/openai";
import { startMockBackend, weatherScript } from "jest-session-parity/mock";
import { startSessionServer } from "jest-session-parity/server";

const getWeather = tool(async () => '{"temperature_celsius": 22, "condition": "sunny"}', {
  name: "get_weather",
  description: "Return the current weather for a city.",
  schema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
});

let backend;
const servers = {};
before(async () => {
  backend = await startMockBackend({ process: weatherScript });
  for (const version of ["v1", "v2"]) {
    // LangChain replays a tool call with its arguments re-serialized ({"location":"Beijing"} for the model's
    // {"location": "Beijing"}); loose_tool_call compares them as JSON objects, strict as text.
    servers[version] = await startSessionServer({ version, backendUrl: backend.url, messageMatcher: "loose_tool_call" });
  }
});
after(async () => {
  await Promise.all(Object.values(servers).map((server) => server.close()));
  await backend?.close();
});

async function sessionRun(server, stream) {
  const created = await (await fetch(`${server.url}/sessions`, { method: "POST" })).json();
  // `streaming: true` stays off: with it, invoke() downloads tiktoken ranks to estimate token usage.
  const llm = new ChatOpenAI({ model: "mock", apiKey: "unused", configuration: { baseURL: `${server.url}/sessions/${created.session_id}/v1` }, maxRetries: 0 });
  const agent = createReactAgent({ llm, tools: [getWeather] });
  const input = { messages: [new HumanMessage("What's the weather in Beijing?")] };
  let answer = "";
  if (stream) {
    // "messages" mode streams the model's replies chunk by chunk; the last reply's text is the answer
    const texts = new Map();
    for await (const [chunk, metadata] of await agent.stream(input, { streamMode: "messages" })) {
      if (metadata.langgraph_node === "agent") texts.set(chunk.id, (texts.get(chunk.id) ?? "") + chunk.content);
    }
    answer = [...texts.values()].pop();
  } else {
    const state = await agent.invoke(input);
    answer = state.messages.at(-1).content;
  }
  const session = await (await fetch(`${server.url}/sessions/${created.session_id}`)).json();
  await fetch(`${server.url}/sessions/${created.session_id}`, { method: "DELETE" });
  return { answer, session };
}

for (const version of ["v1", "v2"]) {
  for (const stream of [false, true]) {
    test(`${version}: the ReAct agent's weather run${stream ? " (streamed)" : ""} keeps one trajectory`, async () => {
      const { answer, session } = await sessionRun(servers[version], stream);
      assert.equal(answer, "Beijing is 22 degrees Celsius and sunny.");
      assert.equal(session.records.length, 2);
      if (version === "v2")
        assert.deepEqual(
          session.metadata.tree.nodes.map((node) => node.parent),
          [null, 0],
        );
    });
  }
}
