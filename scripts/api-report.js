#!/usr/bin/env node
// Generates (`npm run api-report`) or checks (`--check`, run by `npm test`) the API report of every package entry.
// Each public entry's surface is written to api/<entry>.api.md by API Extractor, so a surface change is a reviewed diff.
"use strict";
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { CompilerState, Extractor, ExtractorConfig } = require("@microsoft/api-extractor");

const root = path.join(__dirname, "..");
const declarations = path.join(root, ".api-report", "dts");
const reportFolder = path.join(root, "api");
const check = process.argv.includes("--check");

/** Package entry (as in package.json "exports") → its declaration file under the emitted tree. */
const ENTRIES = {
  "jest-session-parity": "src/index.d.ts",
  matchers: "src/entries/matchers.d.ts",
  server: "src/entries/server.d.ts",
  mock: "src/entries/mock.d.ts",
  tokenizer: "src/entries/tokenizer.d.ts",
  wire: "src/entries/wire.d.ts",
  setup: "setup/setup.d.ts",
  "global-setup": "setup/global-setup.d.ts",
  "global-teardown": "setup/global-teardown.d.ts",
  reporter: "setup/reporter.d.ts",
  "vitest-reporter": "setup/vitest-reporter.d.mts",
  vitest: "setup/vitest.d.mts",
};

// Declarations only, into a scratch folder (dist/ is left to `npm run build`).
fs.rmSync(declarations, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json", "--emitDeclarationOnly", "--declaration", "--outDir", declarations],
  { cwd: root, stdio: "inherit" },
);

function configFor(entry, declarationFile) {
  return ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: path.join(declarations, declarationFile),
      compiler: {
        overrideTsconfig: {
          // only the emitted declarations: the repo's tests import third-party sources (LangGraph ships .ts files)
          include: [path.join(declarations, "**", "*.d.ts")],
          compilerOptions: {
            strict: true,
            skipLibCheck: true,
            types: ["node", "jest"],
            lib: ["ES2023"],
            module: "commonjs",
            moduleResolution: "node10",
            esModuleInterop: true,
          },
        },
      },
      apiReport: {
        enabled: true,
        reportFolder,
        reportTempFolder: path.join(declarations, "..", "report-temp"),
        reportFileName: entry === "jest-session-parity" ? "jest-session-parity" : `jest-session-parity.${entry}`,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // A referenced type that no entry exports is listed in the report (and reviewed there), not an error.
        extractorMessageReporting: {
          default: { logLevel: "warning" },
          "ae-forgotten-export": { logLevel: "none", addToApiReportFile: true },
          "ae-missing-release-tag": { logLevel: "none" },
          "ae-undocumented": { logLevel: "none" },
          "ae-unresolved-link": { logLevel: "none" },
        },
        tsdocMessageReporting: { default: { logLevel: "none" } },
        compilerMessageReporting: { default: { logLevel: "warning" } },
      },
    },
    configObjectFullPath: path.join(root, "api-extractor.json"),
    packageJsonFullPath: path.join(root, "package.json"),
  });
}

/** API Extractor names the TypeScript it bundles once per entry; that says nothing about the report, so it is dropped. */
function quietPreamble(message) {
  if (message.messageId === "console-preamble") message.handled = true;
}

const configs = Object.entries(ENTRIES).map(([entry, file]) => configFor(entry, file));
// One TypeScript program for every entry keeps the check fast.
const compilerState = CompilerState.create(configs[0], { additionalEntryPoints: configs.map((config) => config.mainEntryPointFilePath) });
const stale = [];
for (const config of configs) {
  const result = Extractor.invoke(config, { localBuild: !check, compilerState, showVerboseMessages: false, messageCallback: quietPreamble });
  if (!result.succeeded || result.apiReportChanged) stale.push(path.relative(root, config.reportFilePath));
}
if (stale.length > 0) {
  const advice = check ? "The public API changed: run `npm run api-report` and commit the updated reports." : "Reports regenerated.";
  console.error(`${check ? "Stale" : "Updated"} API report(s): ${stale.join(", ")}\n${advice}`);
  if (check) process.exit(1);
} else console.log(`API reports ${check ? "match" : "are up to date"}: ${configs.length} entries.`);
