// Vitest entry (`jest-session-parity/vitest`): registers the session-parity matchers on Vitest's `expect`.
// List it under `test.setupFiles` in the Vitest config; importing it also types the matchers on Vitest's assertions.
import * as vitest from "vitest";
import { afterAll, expect } from "vitest";
import { registerSessionParityMatchers, type ExpectLike } from "../src/entries/registry.js";
import type { SessionParityAsymmetricMatchers, SessionParityMatchers } from "../src/matchers/typings.js";
import { installVerdictRecorder } from "../src/report/verdict-recorder.js";
import { sweepLargeValueFiles } from "../src/snapshot/sweep.js";
import { createToMatchBitwiseSnapshot, type RunnerSnapshotMatch } from "../src/snapshot/to-match-bitwise-snapshot.js";

/** Vitest's composable snapshot matcher (Vitest 4.1+), which runs the snapshot client exactly as toMatchSnapshot does. */
interface VitestSnapshots {
  toMatchSnapshot(this: unknown, received: unknown, hint?: string): { pass: boolean; message: () => string; actual?: unknown; expected?: unknown };
}

const vitestSnapshotMatch: RunnerSnapshotMatch = (context, received, hint) => {
  const snapshots = (vitest as unknown as { Snapshots?: VitestSnapshots }).Snapshots;
  if (snapshots === undefined) throw new Error("toMatchBitwiseSnapshot needs Vitest 4.1 or newer (its Snapshots API for custom snapshot matchers)");
  const result = snapshots.toMatchSnapshot.call(context, received, hint);
  const key = /^Snapshot `([\s\S]*)` mismatched$/.exec(result.message())?.[1];
  return {
    pass: result.pass,
    expected: typeof result.expected === "string" ? result.expected : undefined,
    actual: typeof result.actual === "string" ? result.actual : undefined,
    key,
  };
};

// Vitest's matcher context carries the same `utils`, `isNot` and `equals` the matchers read from Jest's.
registerSessionParityMatchers(expect as unknown as ExpectLike);
expect.extend({ toMatchBitwiseSnapshot: createToMatchBitwiseSnapshot(vitestSnapshotMatch) } as never);

// After each test file, under -u, drop the stored tensors no kept snapshot names (before Vitest packs the state).
afterAll(() => {
  sweepLargeValueFiles((expect.getState() as { snapshotState?: unknown }).snapshotState);
});

// Under the HTML reporter (`jest-session-parity/vitest-reporter`), record every parity verdict for its page.
const reportDirectory = process.env.SESSION_PARITY_REPORT_DIR;
if (reportDirectory !== undefined && reportDirectory !== "") {
  installVerdictRecorder(reportDirectory);
}

declare module "vitest" {
  // The type parameter must repeat Vitest's own declaration (`T = any`) for the augmentation to merge.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any, @typescript-eslint/no-unused-vars
  interface Matchers<T = any> extends SessionParityMatchers<void> {}
  interface AsymmetricMatchersContaining extends SessionParityAsymmetricMatchers {}
}
