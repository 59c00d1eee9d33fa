// Vitest has no global setup here: the servers start once for this file and their URLs go to the fixture.
import { afterAll, beforeAll, expect, test } from "vitest";
import { buildWeatherInputSamples, runAgenticRetryTrajectories, startParityEnvironment, type ParityEnvironment } from "jest-session-parity";

let environment: ParityEnvironment;
beforeAll(async () => {
  environment = await startParityEnvironment();
});
afterAll(async () => {
  await environment.stop();
});

test("toBeBitwiseEqual tells +0 from -0 under Vitest", () => {
  expect({ reward: 0, rollout_log_probs: [0.5] }).toBeBitwiseEqual({ reward: 0, rollout_log_probs: [0.5] });
  expect(() => expect({ reward: 0 }).toBeBitwiseEqual({ reward: -0 })).toThrow("reward: +0 vs -0");
});

test("v2 keeps the v1 training payload", async () => {
  const [v1] = await runAgenticRetryTrajectories({ version: "v1", inputSamples: buildWeatherInputSamples(1), sessionServerUrls: [environment.v1Url] });
  const [v2] = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(1), sessionServerUrls: [environment.v2Url] });
  expect(v1).toHaveTrainingPayloadParity(v2);
});
