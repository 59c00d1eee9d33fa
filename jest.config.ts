/**
 * Jest configuration for the package's own suite: the shipped preset's msw transform over in-tree sources.
 * Two projects split it into tiers: "fast" is `npm test` (the contributor's loop), "slow" joins it in `npm run test:all`.
 * Read without a type check (the type check of `npm test` covers this file): the docblock below tells Jest so.
 * @jest-config-loader ts-node
 * @jest-config-loader-options {"transpileOnly": true}
 */
import { existsSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Config } from "jest";

/**
 * THE tier list: every suite that runs only in `npm run test:all` (Jest project "slow"), by path from the repository
 * root. Every other `__tests__/**\/*.test.ts` file is in `npm test` (project "fast"). A suite belongs here when it
 * starts a child process (the CLI, node, Python, Chromium, npm, a nested Jest or Vitest run) or takes more than 5 s
 * on an idle 2-core machine; add a new such file's path to this list (CONTRIBUTING.md, "Test tiers").
 */
export const SLOW_SUITES: readonly string[] = [
  // the packed tarball installed into fresh projects, and examples/
  "__tests__/pack/pack.test.ts",
  // the CLI as spawned processes
  "__tests__/cli/serve.test.ts",
  "__tests__/cli/run.test.ts",
  "__tests__/cli/commands.test.ts",
  "__tests__/cli/routing-replay-cli.test.ts",
  "__tests__/server/v2/cli-hooks.test.ts",
  "__tests__/cli/documented-commands.test.ts",
  // every TypeScript example of the README and docs/ type-checked (three TypeScript programs over the sources)
  "__tests__/docs/docs-typescript.test.ts",
  "__tests__/cli/run-families.test.ts",
  // the parity run in-process over every option (batches up to 64, cycles, failure modes, matchers, families)
  "__tests__/cli/run-parity.test.ts",
  "__tests__/cli/verify-template.test.ts",
  "__tests__/cli/fuzz-cli.test.ts",
  "__tests__/cli/replay-cli.test.ts",
  "__tests__/cli/server-problems-cli.test.ts",
  "__tests__/cli/configuration-parity.test.ts",
  "__tests__/cli/cassette-cli.test.ts",
  // nested Jest / Vitest runs and a fresh node process per entry
  "__tests__/fixture/sharded-suite.test.ts",
  "__tests__/report/reporter.test.ts",
  "__tests__/snapshot/runner-snapshots.test.ts",
  "__tests__/entries/lazy-loading.test.ts",
  "__tests__/entries/esm-load-hint.test.ts",
  // the fuzzer hunting planted bugs (bounded, but many runs)
  "__tests__/fuzz/planted-bugs.test.ts",
  // cross-checks against third-party implementations: Chromium, Python's Jinja2 and json
  "__tests__/report/html-report.browser.test.ts",
  "__tests__/tokenizer/native-render-cross-check.test.ts",
  "__tests__/tokenizer/real-vocabulary-cross-check.test.ts",
  "__tests__/tokenizer/deepseek-cross-check.test.ts",
  "__tests__/wire/py-json.test.ts",
  "__tests__/server/python-json-fidelity.http.test.ts",
  "__tests__/cli/miles-python-parity.test.ts",
  // the agent frameworks driving both servers (each loads a framework and its own openai copy)
  "__tests__/clients/frameworks/openai-agents.test.ts",
  "__tests__/clients/frameworks/langchain.test.ts",
  "__tests__/clients/frameworks/llamaindex.test.ts",
  // session servers under a small heap in child processes (the memory budget's 503 before the heap runs out)
  "__tests__/server/session-budget-heap.test.ts",
  "__tests__/server/samples-budget-heap.test.ts",
  // the model families checked against Python's Jinja2 and HF's Rust tokenizers, and their parity runs (12 servers)
  "__tests__/tokenizer/qwen35-family.test.ts",
  "__tests__/tokenizer/synthetic-families.test.ts",
  "__tests__/tokenizer/deepseek-families.test.ts",
  "__tests__/tokenizer/kimi-minimax-inkling-cross-check.test.ts",
  "__tests__/server/kimi-minimax-inkling-server.test.ts",
  "__tests__/parity/family-parity.test.ts",
  // the session-verify gate over --cycles 3 runs under every failure mode, and a planted re-tokenizing server
  "__tests__/matchers/session-verify-gate.test.ts",
  // worker threads each loading their own tokenizer and servers
  "__tests__/fixture/environment-thread.test.ts",
  // recorded conversations replayed through embedded mocks and servers started per call (over 5 s)
  "__tests__/replay/replay-conversations.test.ts",
  // a 40-conversation unseen corpus replayed by CLI processes, with and without a retry before every reply (over 20 s)
  "__tests__/replay/unseen-corpus.test.ts",
  // replays under DeepSeek V3.2 in thinking and chat mode, and a corpus by a CLI process (over 5 s)
  "__tests__/replay/deepseek-replay.test.ts",
  // the unseen corpus through miles' Python session servers (optional: MILES_CHECKOUT)
  "__tests__/cli/miles-python-replay.test.ts",
  // 256 concurrent sessions of nine turns each through one v1 server (a load test: over 5 s)
  "__tests__/server/v1-concurrency.test.ts",
];

// A path that no longer exists would silently drop its suite from both tiers: refuse to start instead.
const missing = SLOW_SUITES.filter((file) => !existsSync(path.join(__dirname, file)));
if (missing.length > 0) throw new Error(`jest.config.ts: SLOW_SUITES lists files that do not exist: ${missing.join(", ")}`);

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

type ProjectConfig = Exclude<NonNullable<Config["projects"]>[number], string>;

const shared: ProjectConfig = {
  // Jest's node environment plus one tokenizer load per worker instead of one per test file.
  testEnvironment: "<rootDir>/jest.environment.ts",
  roots: ["<rootDir>/__tests__"],
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
};

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const fast: ProjectConfig = {
  ...shared,
  displayName: "fast",
  testMatch: ["**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "/__tests__/vitest-smoke/", "/__tests__/types/", ...SLOW_SUITES.map((file) => `<rootDir>/${escape(file)}$`)],
};
const slow: ProjectConfig = { ...shared, displayName: "slow", testMatch: SLOW_SUITES.map((file) => `<rootDir>/${file}`) };

// `npm test` (npm names the running script in npm_lifecycle_event) is the fast tier alone, whatever arguments follow
// (`npm test -- __tests__/wire`, `-- --watch`); `npx jest <file>` finds a file of either tier; `npm run test:all`
// adds `jest --selectProjects slow` after `npm test`.
const projects = process.env.npm_lifecycle_event === "test" ? [fast] : [fast, slow];

const config: Config = {
  projects,
  testTimeout: 60_000,
  // Jest's default on 2 cores is one worker, i.e. every suite in band in the main process, whose heap then only
  // grows (3+ GB). Two or more workers, each recycled once idle above the limit, keep every process small.
  maxWorkers: Math.max(2, os.availableParallelism() - 1),
  workerIdleMemoryLimit: "700MB",
};

export default config;
