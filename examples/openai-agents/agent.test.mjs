// An OpenAI Agents SDK agent (Chat Completions model) through the reference v1 and v2 session servers, started in
// this process against the mock backend with the split_assistant_turn matcher: the weather run stays one trajectory.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from "@openai/agents";
import { startMockBackend, weatherScript } from "jest-session-parity/mock";
import { startSessionServer } from "jest-session-parity/server";

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

let backend;
const servers = {};
before(async () => {
  backend = await startMockBackend({ process: weatherScript });
  for (const version of ["v1", "v2"]) {
    // The SDK re-sends a reply that has text before its tool call as two assistant messages (the text, then
    // the calls); split_assistant_turn reads them as the one turn the server stored.
    servers[version] = await startSessionServer({ version, backendUrl: backend.url, messageMatcher: "split_assistant_turn" });
  }
});
after(async () => {
  await Promise.all(Object.values(servers).map((server) => server.close()));
  await backend?.close();
});

async function sessionRun(server, stream) {
  const created = await (await fetch(`${server.url}/sessions`, { method: "POST" })).json();
  const runner = new Runner({
    modelProvider: new OpenAIProvider({ baseURL: `${server.url}/sessions/${created.session_id}/v1`, apiKey: "unused", useResponses: false }),
    tracingDisabled: true,
  });
  const result = stream
    ? await runner.run(weatherAgent, "What's the weather in Beijing?", { stream: true })
    : await runner.run(weatherAgent, "What's the weather in Beijing?");
  if (stream) await result.completed;
  const session = await (await fetch(`${server.url}/sessions/${created.session_id}`)).json();
  await fetch(`${server.url}/sessions/${created.session_id}`, { method: "DELETE" });
  return { answer: result.finalOutput, session };
}

for (const version of ["v1", "v2"]) {
  for (const stream of [false, true]) {
    test(`${version}: the weather run${stream ? " (streamed)" : ""} keeps one trajectory`, async () => {
      const { answer, session } = await sessionRun(servers[version], stream);
      assert.equal(answer, "Beijing is 22 degrees Celsius and sunny.");
      // both generations on one path: two records, and on v2 node 1 extends node 0
      assert.equal(session.records.length, 2);
      if (version === "v2")
        assert.deepEqual(
          session.metadata.tree.nodes.map((node) => node.parent),
          [null, 0],
        );
    });
  }
}
