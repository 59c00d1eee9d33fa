// The matchers, toMatchBitwiseSnapshot among them, from the setup entry; nothing else to configure.
module.exports = { setupFilesAfterEnv: ["jest-session-parity/setup"] };
