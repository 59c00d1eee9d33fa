// `expect(runs).toPassSessionVerifyGate()`: miles' session-verify gate as a Jest/Vitest matcher, with `.not`.
// A thin wrapper over checkSessionVerifyGate; a value the gate cannot read is a usage error, thrown even under `.not`.
import type { MatcherContext, SyncExpectationResult } from "expect";
import { formatVerdict, usageFailures } from "./parity-verdict";
import { checkSessionVerifyGate, type SessionVerifyGateOptions } from "./session-verify-gate";
import { notifyVerdict } from "./verdict-observers";

/**
 * `expect(runs).toPassSessionVerifyGate(options?)` on the runs of `runAgenticRetryTrajectories` (or their samples,
 * or one of either): every sample carries a `tito_session_mismatch` report with no special-token or non-assistant
 * entry and every required driver event, some sample appended a tool result, and the share of samples with an
 * `assistant_text` mismatch is within the family's threshold. The failure names sample, mismatch type and token span.
 */
export function toPassSessionVerifyGate(this: MatcherContext, received: unknown, options: SessionVerifyGateOptions = {}): SyncExpectationResult {
  const verdict = checkSessionVerifyGate(received, options);
  notifyVerdict({
    matcher: "toPassSessionVerifyGate",
    received,
    expected: options,
    verdict,
    isNot: this.isNot === true,
    testPath: this.testPath,
    testName: this.currentTestName,
  });
  const usage = usageFailures(verdict);
  if (usage.length > 0) throw new TypeError(`toPassSessionVerifyGate: ${usage.map((failure) => failure.message).join("; ")}`);
  const head = this.utils.matcherHint("toPassSessionVerifyGate", undefined, "", { isNot: this.isNot, promise: this.promise });
  if (verdict.pass) {
    return {
      pass: true,
      message: () => `${head}\n\nThe batch passes the session-verify gate.\nChecked: ${verdict.checkedParts.join(", ")}; every part passed, so .not fails.`,
    };
  }
  const parts = [...new Set(verdict.failures.map((failure) => failure.part))];
  return {
    pass: false,
    message: () =>
      `${head}\n\nThe batch fails the session-verify gate (${parts.length === 1 ? "part" : "parts"} ${parts.join(", ")}):\n${formatVerdict(verdict)}`,
  };
}
