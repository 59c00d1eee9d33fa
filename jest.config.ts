// Jest configuration for the package's own suite: ts-jest over sources, msw's ESM deps transformed.
// Matchers come from the in-tree setup entry; servers from the in-tree global setup.
import type { Config } from "jest";

const ESM_DEPENDENCIES = [
  "rettime",
  "until-async",
  "@open-draft",
  "@mswjs",
  "msw",
  "headers-polyfill",
  "outvariant",
  "strict-event-emitter",
  "is-node-process",
];

const config: Config = {
  testEnvironment: "node",
  roots: ["<rootDir>/__tests__"],
  testMatch: ["**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "/__tests__/vitest-smoke/", "/__tests__/types/"],
  moduleFileExtensions: ["ts", "js", "mjs", "cjs", "json"],
  transform: {
    "^.+\\.(t|j|mj)s$": [
      "ts-jest",
      { tsconfig: { allowJs: true, esModuleInterop: true, sourceMap: true, isolatedModules: true }, diagnostics: false },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_DEPENDENCIES.join("|")})/)`],
  setupFilesAfterEnv: ["<rootDir>/setup/setup.ts"],
  globalSetup: "<rootDir>/setup/global-setup.ts",
  globalTeardown: "<rootDir>/setup/global-teardown.ts",
  testTimeout: 60_000,
};

export default config;
