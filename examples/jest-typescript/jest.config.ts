// The package's preset: ts-jest for the project's TypeScript (type checking on), the transform msw needs when a
// test starts servers itself, and the matchers.
import type { Config } from "jest";

const config: Config = {
  preset: "jest-session-parity",
  testTimeout: 120_000,
};

export default config;
