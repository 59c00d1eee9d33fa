// Vitest smoke project: proves `jest-session-parity/vitest` registers the matchers on Vitest's expect.
// The package names resolve to the sources, so it runs from `npm test` without a build.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = fileURLToPath(new URL(".", import.meta.url));
const root = fileURLToPath(new URL("../..", import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^jest-session-parity\/vitest$/, replacement: `${root}setup/vitest.mts` },
      { find: /^jest-session-parity$/, replacement: `${root}src/index.ts` },
    ],
  },
  test: {
    root: here,
    include: ["**/*.test.ts"],
    setupFiles: ["./register-matchers.ts"],
    environment: "node",
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
