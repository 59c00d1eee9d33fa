// The failure messages the docs show as "real captures", regenerated from real runs and found verbatim in the README or a
// docs/*.md page (the matcher reference). A change to a matcher's wording or to the scripted run fails here until the
// page is updated with it.
import {
  buildWeatherInputSamples,
  runAgenticRetryTrajectories,
  startParityEnvironment,
  WEATHER_AGENT_METADATA,
  WEATHER_RETRY_TOPOLOGY,
  type ParityEnvironment,
  type RetryTopology,
  type SessionParityRun,
} from "../../src";
import { deepCopySample } from "../../src/wire/sample-copy";
import { pageText, userPages } from "../docs/pages";

/** Every page a user reads, joined: a message must appear on one of them. */
const README = userPages().map(pageText).join("\n");

/** The message of a failing expectation, without terminal colours. */
function failureOf(assertion: () => void): string {
  try {
    assertion();
  } catch (error) {
    // eslint-disable-next-line no-control-regex -- the escape character is what is removed
    return (error as Error).message.replace(/\u001b\[[0-9;]*m/g, "");
  }
  throw new Error("the expectation passed, but it had to fail");
}

let environment: ParityEnvironment;
let v1: SessionParityRun;
let v2: SessionParityRun;

beforeAll(async () => {
  environment = await startParityEnvironment({ env: {}, latencyMs: 0, logger: { warn: () => {} } });
  [v1] = await runAgenticRetryTrajectories({ version: "v1", inputSamples: buildWeatherInputSamples(1), sessionServerUrls: [environment.v1Url] });
  [v2] = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(1), sessionServerUrls: [environment.v2Url] });
});
afterAll(async () => {
  await environment?.stop();
});

test("toBeBitwiseEqual: +0 vs -0 and one ulp", () => {
  const message = failureOf(() => expect({ reward: 0, rollout_log_probs: [0.5] }).toBeBitwiseEqual({ reward: -0, rollout_log_probs: [0.5000000000000001] }));
  expect(README).toContain(message);
});

test("toHaveTrainingPayloadParity: one log-prob one ulp away", () => {
  const edited = { ...v2, samples: v2.samples.map(deepCopySample) };
  const logProbs = edited.samples[0].rollout_log_probs as number[];
  expect(logProbs[17]).toBe(-0.1328125);
  logProbs[17] = -0.13281250000000003;
  expect(README).toContain(failureOf(() => expect(v1).toHaveTrainingPayloadParity(edited)));
});

test("toHaveRetryTopology: node 6 expected under node 2", () => {
  const moved: RetryTopology = { ...WEATHER_RETRY_TOPOLOGY, nodes: WEATHER_RETRY_TOPOLOGY.nodes.map(([id, parent]) => [id, id === 6 ? 2 : parent] as const) };
  expect(README).toContain(failureOf(() => expect(v2).toHaveRetryTopology(moved)));
});

test("toMatchAgentMetadata: a counter off by one", () => {
  expect(README).toContain(failureOf(() => expect(v2).toMatchAgentMetadata({ ...WEATHER_AGENT_METADATA, rollback_count: 3 })));
});

test("toRoundTripToolCalls: other arguments", () => {
  expect(README).toContain(failureOf(() => expect(v1).toRoundTripToolCalls([{ call: 0, result: 1, name: "get_weather", arguments: { location: "Paris" } }])));
});
