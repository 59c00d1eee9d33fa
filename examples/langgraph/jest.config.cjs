// Jest replays the cassette; the node:test file (agent.test.mjs) is not Jest's.
module.exports = { setupFilesAfterEnv: ["jest-session-parity/setup"], testMatch: ["<rootDir>/parity.test.cjs"] };
