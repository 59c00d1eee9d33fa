// A test file the reporter test runs in a child Jest: one passing parity check of a real v1/v2 pair.
import { expect, test } from "@jest/globals";
import { buildWeatherInputSamples, runAgenticRetryTrajectories } from "../../../src/fixture";

test("weather pair keeps parity", async () => {
  const [v1] = await runAgenticRetryTrajectories({ version: "v1", inputSamples: buildWeatherInputSamples(1) });
  const [v2] = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(1) });
  expect(v1).toHaveTrainingPayloadParity(v2);
}, 60_000);
