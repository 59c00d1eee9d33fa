// Small programs the pack test runs inside a fresh project: load every subpath of the installed package under
// CommonJS, ESM and TypeScript's module resolutions, and check a known name of each is there.

/** Each runtime subpath with one name it must export (the runner hooks export a default function). */
export const SUBPATHS: readonly { entry: string; name: string }[] = [
  { entry: "jest-session-parity", name: "runAgenticRetryTrajectories" },
  { entry: "jest-session-parity/matchers", name: "compareBitwise" },
  { entry: "jest-session-parity/server", name: "startSessionServer" },
  { entry: "jest-session-parity/mock", name: "startMockBackend" },
  { entry: "jest-session-parity/tokenizer", name: "loadTokenizer" },
  { entry: "jest-session-parity/wire", name: "encodeSamples" },
  { entry: "jest-session-parity/setup", name: "" },
  { entry: "jest-session-parity/global-setup", name: "default" },
  { entry: "jest-session-parity/global-teardown", name: "default" },
  { entry: "jest-session-parity/reporter", name: "default" },
];

// The setup entry registers the matchers on Jest's global expect; give it one to register on.
const FAKE_EXPECT = "globalThis.expect = { extend() {} };";

function checks(load: (entry: string) => string): string {
  return SUBPATHS.map(({ entry, name }) => {
    const got = load(entry);
    if (name === "") return `${got};`;
    // ESM sees a CommonJS module's `exports` object as its default export, so a compiled `export default` is
    // `default.default` there (Jest's globalSetup loader unwraps either shape).
    const found = name === "default" ? `[(${got}).default, (${got}).default?.default]` : `[(${got})[${JSON.stringify(name)}]]`;
    return `if (!${found}.some((value) => typeof value === "function")) throw new Error(${JSON.stringify(`${entry} lacks ${name}`)});`;
  }).join("\n");
}

/** A CommonJS program requiring every subpath. */
export function subpathCjsProbe(): string {
  return `${FAKE_EXPECT}\n${checks((entry) => `require(${JSON.stringify(entry)})`)}\nconsole.log("${SUBPATHS.length} entries");\n`;
}

/** An ES module importing every subpath (named exports of the CommonJS entries must be visible to ESM). */
export function subpathEsmProbe(): string {
  return `${FAKE_EXPECT}\n${checks((entry) => `(await import(${JSON.stringify(entry)}))`)}\nconsole.log("${SUBPATHS.length} entries");\n`;
}

/** A TypeScript file that imports a typed name from every subpath (checked with tsc under several resolutions). */
export function subpathTypeProbe(): string {
  return [
    'import { runAgenticRetryTrajectories, Sample, type SessionParityRun } from "jest-session-parity";',
    'import { compareBitwise, type BitwiseDifference } from "jest-session-parity/matchers";',
    'import { startSessionServer, type SessionServerOptions } from "jest-session-parity/server";',
    'import { startMockBackend, type MockBackendOptions } from "jest-session-parity/mock";',
    'import { loadTokenizer, type ChatMessage } from "jest-session-parity/tokenizer";',
    'import { encodeSamples, type SamplesReply } from "jest-session-parity/wire";',
    'import type { SessionParityMatchers } from "jest-session-parity/setup";',
    'import type { SessionParityReporterOptions } from "jest-session-parity/reporter";',
    "",
    "export const differences: BitwiseDifference[] = compareBitwise(new Sample({ reward: 0 }), new Sample({ reward: -0 }));",
    "export type Probe = [SessionParityRun, SessionServerOptions, MockBackendOptions, ChatMessage, SamplesReply, SessionParityMatchers<void>, SessionParityReporterOptions];",
    "export const functions: Array<(...args: never[]) => unknown> = [runAgenticRetryTrajectories, startSessionServer, startMockBackend, loadTokenizer, encodeSamples];",
    // The hooks' default export is a CommonJS `exports.default`, which an ES module sees under `default.default`;
    // Jest loads them itself, so only their resolution matters here.
    'export type Hooks = [typeof import("jest-session-parity/global-setup"), typeof import("jest-session-parity/global-teardown")];',
    "",
  ].join("\n");
}
