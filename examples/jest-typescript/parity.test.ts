// One weather-agent trajectory through the reference v1 and v2 session servers (started in this process against
// the mock backend), then the training payloads compared bit for bit.
import {
  buildWeatherInputSamples,
  runAgenticRetryTrajectories,
  startParityEnvironment,
  WEATHER_RETRY_TOPOLOGY,
  type ParityEnvironment,
} from "jest-session-parity";

let environment: ParityEnvironment;
beforeAll(async () => {
  environment = await startParityEnvironment();
});
afterAll(async () => {
  await environment.stop();
});

test("v2 keeps the v1 training payload bit for bit", async () => {
  const [v1] = await runAgenticRetryTrajectories({ version: "v1", inputSamples: buildWeatherInputSamples(1), sessionServerUrls: [environment.v1Url] });
  const [v2] = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(1), sessionServerUrls: [environment.v2Url] });
  expect(v1).toHaveTrainingPayloadParity(v2);
  expect(v2).toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY);
});
