// A user's Jest config that does not transform msw's ESM-only dependencies (ts-jest for .ts only, Jest's default
// transformIgnorePatterns), run as a child Jest by esm-load-hint.test.ts; its one test checks the error it gets.
"use strict";
const path = require("node:path");

module.exports = {
  rootDir: path.resolve(__dirname, "../../.."),
  roots: [__dirname],
  testMatch: ["**/*.untransformed.ts"],
  testEnvironment: "node",
  transform: { "^.+\\.ts$": ["ts-jest", { tsconfig: { esModuleInterop: true, isolatedModules: true }, diagnostics: false }] },
  testTimeout: 60_000,
};
