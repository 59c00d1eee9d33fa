// Jest `globalSetup` entry (`jest-session-parity/global-setup`): starts the mock backend and the v1/v2 session servers.
// Publishes their URLs to the test workers through process.env and leaves the handle for the global teardown.
import "../src/entries/fixture-peers";
import { BACKEND_URL_ENV, sessionServerEnvName } from "../src/fixture/server-resolution";
import { startParityEnvironment, type ParityEnvironment } from "../src/fixture/parity-environment";
import { startParityEnvironmentSplit } from "../src/fixture/environment-thread";

/** Set to `1` (or `true`) to run the started session servers on a worker thread instead of Jest's thread. */
const SERVERS_THREAD_ENV = "SESSION_PARITY_SERVERS_THREAD";

/** Key on `globalThis` under which the global setup leaves its state for the teardown. */
export const PARITY_ENVIRONMENT_KEY: unique symbol = Symbol.for("jest-session-parity.global-environment");

/** What the global setup leaves for the teardown. */
export interface GlobalParityState {
  /** The running environment. */
  environment: ParityEnvironment;
  /** Values the published variables had before the setup (undefined = unset), restored by the teardown. */
  previousEnv: Record<string, string | undefined>;
}

/**
 * Stops the environment a global setup left on `globalThis` (if any) and gives the published variables back
 * their previous values. Used by the teardown, and by a setup that finds a stale environment (watch mode).
 */
export async function releaseGlobalParityState(): Promise<void> {
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

/**
 * Starts what is not given by the user's `SESSION_PARITY_BACKEND_URL`, `SESSION_PARITY_V1_URL` and
 * `SESSION_PARITY_V2_URL` (tokenizer from `SESSION_PARITY_HF_CHECKPOINT`), then publishes the three URLs. With
 * `SESSION_PARITY_SERVERS_THREAD=1` the session servers run on a worker thread (a second core beside in-band tests,
 * for about 1.5 s more start-up); by default everything runs on Jest's thread, beside the test workers.
 * @throws Error naming the part that failed to start (everything already started is stopped first).
 */
export default async function globalSetup(): Promise<void> {
  // A rerun without teardown would otherwise leak the previous servers and adopt their (dead) published URLs.
  await releaseGlobalParityState();
  const threaded = /^(1|true|yes|on)$/i.test(process.env[SERVERS_THREAD_ENV]?.trim() ?? "");
  const environment = threaded ? await startParityEnvironmentSplit({ env: { ...process.env } }) : await startParityEnvironment({ env: process.env });
  const published: Record<string, string | null> = {
    [BACKEND_URL_ENV]: environment.backendUrl,
    [sessionServerEnvName("v1")]: environment.v1Url,
    [sessionServerEnvName("v2")]: environment.v2Url,
  };
  const previousEnv: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(published)) {
    previousEnv[name] = process.env[name];
    if (value !== null) process.env[name] = value;
  }
  (globalThis as { [PARITY_ENVIRONMENT_KEY]?: GlobalParityState })[PARITY_ENVIRONMENT_KEY] = { environment, previousEnv };
}
