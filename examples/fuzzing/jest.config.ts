// The fuzzer starts the mock backend and both reference servers in the test process, so msw loads there: the
// preset carries the transform its ESM-only dependencies need.
import type { Config } from "jest";

const config: Config = {
  preset: "jest-session-parity",
  testTimeout: 300_000,
};

export default config;
