// Jest `globalTeardown` entry (`jest-session-parity/global-teardown`): stops whatever the global setup started.
// Restores the variables it published, so nothing (no port, no handle, no URL) outlives the run.
import { releaseGlobalParityState } from "./global-setup";

/** Stops the servers and backend the global setup started and restores the variables it published. */
export default async function globalTeardown(): Promise<void> {
  await releaseGlobalParityState();
}
