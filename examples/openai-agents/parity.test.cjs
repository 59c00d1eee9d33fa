// The Agents SDK agent through v1 and v2, replayed from its committed cassette (no backend, no network): the
// training payloads are the same bit for bit.
const { runAgentParity } = require("jest-session-parity");
const { weatherAgentRun, SERVER_OPTIONS, CASSETTE } = require("./agent.cjs");

test("the Agents SDK agent's training payload is the same through v1 and v2 (replayed from the cassette)", async () => {
  const { v1, v2 } = await runAgentParity({ agent: weatherAgentRun, cassette: CASSETTE, server: SERVER_OPTIONS });
  expect(v1.preCollect.records).toHaveLength(2);
  expect(v2.sessionMetadata.agent).toEqual({ answer: "Beijing is 22 degrees Celsius and sunny." });
  expect(v1).toHaveTrainingPayloadParity(v2);
}, 60_000);
