// A test file the reporter test runs in a child Jest: a pair whose v2 sample has one token changed (the test fails).
import { expect, test } from "@jest/globals";
import { buildWeatherInputSamples, runAgenticRetryTrajectories } from "../../../src/fixture";

test("weather pair with one tampered token", async () => {
  const [v1] = await runAgenticRetryTrajectories({ version: "v1", inputSamples: buildWeatherInputSamples(1) });
  const [v2] = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(1) });
  v2.samples[0].tokens[300] += 1;
  expect(v1).toHaveTrainingPayloadParity(v2);
}, 60_000);
