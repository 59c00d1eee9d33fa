// Jest preset shipped with the package: `preset: "jest-session-parity"`, or spread into a config that has its own.
// Adds only what msw needs (a transform for its ESM-only dependencies) and the matchers; the user's own transforms win.
"use strict";
const path = require("node:path");

/** Packages msw 2 pulls in that ship ESM only; Jest's CommonJS runtime cannot require them untransformed. */
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

/** Matches exactly those packages' files, so this transform never touches the user's own sources. */
const MSW_ESM_FILES = `/node_modules/(${MSW_ESM_DEPENDENCIES.join("|")})/.+\\.m?js$`;

module.exports = {
  testEnvironment: "node",
  moduleFileExtensions: ["ts", "tsx", "js", "jsx", "mjs", "cjs", "json"],
  transform: {
    // Only msw's dependencies: ts-jest (allowJs) rewrites their ESM syntax; nothing of the user's is checked here.
    [MSW_ESM_FILES]: ["ts-jest", { tsconfig: { allowJs: true, esModuleInterop: true }, diagnostics: false }],
    // The user's TypeScript, type-checked by ts-jest against the project's own tsconfig (a `transform` of the
    // user's config for the same files takes precedence, being listed first after Jest merges the two).
    "^.+\\.tsx?$": "ts-jest",
  },
  transformIgnorePatterns: [`/node_modules/(?!(${MSW_ESM_DEPENDENCIES.join("|")})/)`],
  setupFilesAfterEnv: [path.join(__dirname, "dist", "setup", "setup.js")],
};
