// The whole setup for the matchers in a plain-JavaScript Jest project: one setup file, Jest's default babel-jest.
module.exports = { setupFilesAfterEnv: ["jest-session-parity/setup"] };
