// The matchers registered on Vitest's expect by the package's Vitest setup entry.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    setupFiles: ["jest-session-parity/vitest"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
