// Child Vitest project of the reporter test: the matchers from the sources and the Vitest reporter entry.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = fileURLToPath(new URL(".", import.meta.url));
const root = fileURLToPath(new URL("../../../..", import.meta.url));

export default defineConfig({
  test: {
    root: here,
    include: ["**/*.vparity.ts"],
    setupFiles: [`${root}setup/vitest.mts`],
    environment: "node",
    testTimeout: 120_000,
    reporters: ["default", [`${root}setup/vitest-reporter.mts`, { outputFile: process.env.PARITY_REPORT_FILE }]],
  },
});
