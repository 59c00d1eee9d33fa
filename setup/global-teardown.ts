// Jest `globalTeardown` entry (`jest-session-parity/global-teardown`): stops whatever the global setup started.
// Restores the variables it published, so nothing (no port, no handle, no URL) outlives the run.
import { PARITY_ENVIRONMENT_KEY, type GlobalParityState } from "./global-setup";

/** Stops the servers and backend the global setup started and restores the variables it published. */
export default async function globalTeardown(): Promise<void> {
  const holder = globalThis as { [PARITY_ENVIRONMENT_KEY]?: GlobalParityState };
  const state = holder[PARITY_ENVIRONMENT_KEY];
  if (state === undefined) return;
  delete holder[PARITY_ENVIRONMENT_KEY];
  try {
    await state.environment.stop();
  } finally {
    for (const [name, value] of Object.entries(state.previousEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}
