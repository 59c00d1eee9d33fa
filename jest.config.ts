// Jest configuration for the package's own suite: the shipped preset's msw transform over in-tree sources.
// Matchers come from the in-tree setup entry (the preset's points at dist/); servers from the in-tree global setup.
import type { Config } from "jest";

// The preset is plain CommonJS so users can load it without a build; reuse its transform settings here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const shippedPreset = require("./jest-preset.js") as Required<Pick<Config, "transformIgnorePatterns">>;

/**
 * LlamaIndex's workflow package reaches ESM-only subpaths of its nested `@llamaindex/workflow-core`; the framework
 * tests need them transformed too. Every `/node_modules/` segment of that nested path starts with `@llamaindex`.
 */
function withFrameworkEsm(pattern: string): string {
  const widened = pattern.replace("/node_modules/(?!(", "/node_modules/(?!(@llamaindex|");
  if (widened === pattern) throw new Error(`jest.config.ts: unexpected transformIgnorePatterns entry ${pattern}`);
  return widened;
}

const config: Config = {
  testEnvironment: "node",
  roots: ["<rootDir>/__tests__"],
  testMatch: ["**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "/__tests__/vitest-smoke/", "/__tests__/types/"],
  moduleFileExtensions: ["ts", "js", "mjs", "cjs", "json"],
  transform: {
    // @llamaindex/openai (CommonJS build) loads the openai SDK with a dynamic import(), which Jest's CommonJS
    // runtime refuses without --experimental-vm-modules; compiled by ts-jest it becomes a require.
    "/node_modules/@llamaindex/openai/.+\\.cjs$": [
      "ts-jest",
      { tsconfig: { allowJs: true, esModuleInterop: true, isolatedModules: true }, diagnostics: false },
    ],
    "^.+\\.(t|j|mj)s$": ["ts-jest", { tsconfig: { allowJs: true, esModuleInterop: true, sourceMap: true, isolatedModules: true }, diagnostics: false }],
  },
  transformIgnorePatterns: shippedPreset.transformIgnorePatterns.map(withFrameworkEsm),
  setupFilesAfterEnv: ["<rootDir>/setup/setup.ts"],
  globalSetup: "<rootDir>/setup/global-setup.ts",
  globalTeardown: "<rootDir>/setup/global-teardown.ts",
  testTimeout: 60_000,
};

export default config;
