// Vitest entry (`jest-session-parity/vitest`): registers the session-parity matchers on Vitest's `expect`.
// List it under `test.setupFiles` in the Vitest config; importing it also types the matchers on Vitest's assertions.
import { expect } from "vitest";
import { registerSessionParityMatchers, type ExpectLike } from "../src/matchers/registry.js";
import type { SessionParityAsymmetricMatchers, SessionParityMatchers } from "../src/matchers/typings.js";
import { installVerdictRecorder } from "../src/report/verdict-recorder.js";

// Vitest's matcher context carries the same `utils`, `isNot` and `equals` the matchers read from Jest's.
registerSessionParityMatchers(expect as unknown as ExpectLike);

// Under the HTML reporter (`jest-session-parity/vitest-reporter`), record every parity verdict for its page.
const reportDirectory = process.env.SESSION_PARITY_REPORT_DIR;
if (reportDirectory !== undefined && reportDirectory !== "") {
  installVerdictRecorder(reportDirectory);
}

declare module "vitest" {
  // The type parameter must repeat Vitest's own declaration (`T = any`) for the augmentation to merge.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any, @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unused-vars
  interface Matchers<T = any> extends SessionParityMatchers<void> {}
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface AsymmetricMatchersContaining extends SessionParityAsymmetricMatchers {}
}
