// Jest `globalTeardown` entry (`jest-session-parity/global-teardown`): stops whatever global setup started.
// Placeholder until the end-to-end issue fills it; it must load and resolve.
export default async function globalTeardown(): Promise<void> {}
