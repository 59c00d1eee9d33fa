// The `setupFilesAfterEnv` entry (`jest-session-parity/setup`): registers the matchers on Jest's expect.
// Importing it also brings the matcher typings into scope.
import { registerSessionParityMatchers, type ExpectLike } from "../src/entries/registry";
import { sweepLargeValueFiles } from "../src/snapshot/sweep";

export type { SessionParityMatchers, SessionParityAsymmetricMatchers, SessionParityAsymmetricMatcher } from "../src/matchers";

const jestExpect = (globalThis as { expect?: ExpectLike & { getState?: () => { snapshotState?: unknown } } }).expect;
if (jestExpect === undefined || typeof jestExpect.extend !== "function") {
  throw new Error("jest-session-parity/setup must run inside Jest (list it under setupFilesAfterEnv): no global expect.extend found");
}
registerSessionParityMatchers(jestExpect);

// Under the HTML reporter (`jest-session-parity/reporter`), record every parity verdict for its page.
const reportDirectory = process.env.SESSION_PARITY_REPORT_DIR;
if (reportDirectory !== undefined && reportDirectory !== "") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require("../src/report/verdict-recorder") as typeof import("../src/report/verdict-recorder")).installVerdictRecorder(reportDirectory);
}

// After the test file, under -u, drop the stored tensors of toMatchBitwiseSnapshot that no kept snapshot names
// (Jest saves the snapshot file itself right after the file's afterAll hooks).
const jestAfterAll = (globalThis as { afterAll?: (fn: () => void) => void }).afterAll;
const readState = jestExpect.getState;
if (typeof jestAfterAll === "function" && typeof readState === "function") {
  jestAfterAll(() => {
    sweepLargeValueFiles(readState().snapshotState);
  });
}
