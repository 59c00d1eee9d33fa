// Type-level fixture (checked by `npm run typecheck`, never run by Jest): the README's wiring of
// `startParityEnvironment()` into the fixture and the fuzzer type-checks as written (its backendUrl is string | null).
import { buildWeatherInputSamples, fuzzAgenticParity, runAgenticRetryTrajectories, startParityEnvironment } from "../../src";

export async function typecheckEnvironmentWiring(): Promise<void> {
  const environment = await startParityEnvironment();
  await runAgenticRetryTrajectories({ version: "v1", inputSamples: buildWeatherInputSamples(1), backendUrl: environment.backendUrl });
  await fuzzAgenticParity({ backendUrl: environment.backendUrl, v1Url: environment.v1Url, v2Url: environment.v2Url, runs: 1 });
  await startParityEnvironment({ backendUrl: environment.backendUrl });
  // @ts-expect-error a number is not a URL
  await runAgenticRetryTrajectories({ version: "v1", inputSamples: [], backendUrl: 30000 });
  await environment.stop();
}
