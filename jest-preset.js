// Jest preset shipped with the package: `preset: "jest-session-parity"`.
// Registers the matchers and lets ts-jest transform msw's ESM-only dependencies under Jest's CommonJS runtime.
"use strict";
const path = require("node:path");

/** Packages msw 2 pulls in that ship ESM only; ts-jest (allowJs) must transform them. */
const MSW_ESM_DEPENDENCIES = [
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

module.exports = {
  testEnvironment: "node",
  moduleFileExtensions: ["ts", "tsx", "js", "mjs", "cjs", "json"],
  transform: {
    "^.+\\.(t|j|mj)s$": ["ts-jest", { tsconfig: { allowJs: true, esModuleInterop: true, isolatedModules: true }, diagnostics: false }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${MSW_ESM_DEPENDENCIES.join("|")})/)`],
  setupFilesAfterEnv: [path.join(__dirname, "dist", "setup", "setup.js")],
};
