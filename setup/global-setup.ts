// Jest `globalSetup` entry (`jest-session-parity/global-setup`): starts the mock backend and reference servers.
// Placeholder until the end-to-end issue fills it; it must load and resolve.
export default async function globalSetup(): Promise<void> {}
