// Jest configuration for the package's own suite: the shipped preset's msw transform over in-tree sources.
// Matchers come from the in-tree setup entry (the preset's points at dist/); servers from the in-tree global setup.
import type { Config } from "jest";

// The preset is plain CommonJS so users can load it without a build; reuse its transform settings here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const shippedPreset = require("./jest-preset.js") as Required<Pick<Config, "transformIgnorePatterns">>;

const config: Config = {
  testEnvironment: "node",
  roots: ["<rootDir>/__tests__"],
  testMatch: ["**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "/__tests__/vitest-smoke/", "/__tests__/types/"],
  moduleFileExtensions: ["ts", "js", "mjs", "cjs", "json"],
  transform: {
    "^.+\\.(t|j|mj)s$": ["ts-jest", { tsconfig: { allowJs: true, esModuleInterop: true, sourceMap: true, isolatedModules: true }, diagnostics: false }],
  },
  transformIgnorePatterns: shippedPreset.transformIgnorePatterns,
  setupFilesAfterEnv: ["<rootDir>/setup/setup.ts"],
  globalSetup: "<rootDir>/setup/global-setup.ts",
  globalTeardown: "<rootDir>/setup/global-teardown.ts",
  testTimeout: 60_000,
};

export default config;
