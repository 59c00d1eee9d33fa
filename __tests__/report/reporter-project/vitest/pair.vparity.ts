// A Vitest file the reporter test runs in a child Vitest: one passing and one tampered (failing) parity check.
import { expect, test } from "vitest";
import { buildWeatherInputSamples, runAgenticRetryTrajectories } from "../../../../src/fixture";

test("weather pair keeps parity", async () => {
  const [v1] = await runAgenticRetryTrajectories({ version: "v1", inputSamples: buildWeatherInputSamples(1) });
  const [v2] = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(1) });
  expect(v1).toHaveTrainingPayloadParity(v2);
});

test("weather pair with one tampered token", async () => {
  const [v1] = await runAgenticRetryTrajectories({ version: "v1", inputSamples: buildWeatherInputSamples(1) });
  const [v2] = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(1) });
  v2.samples[0].tokens[300] += 1;
  expect(v1).toHaveTrainingPayloadParity(v2);
});
