// `expect(reportOrVerdict).toHaveAgenticParity()`: passes when a fuzz report found no counterexample (or a replayed
// schedule passed every check); fails with the shrunk counterexample in words and a Jest test that replays it.
import type { MatcherContext, SyncExpectationResult } from "expect";
import type { ScheduleVerdict } from "./checks";
import { formatFuzzReport, formatScheduleVerdict } from "./report";
import type { FuzzReport } from "./runner";

function isVerdict(value: unknown): value is ScheduleVerdict {
  return typeof value === "object" && value !== null && "prediction" in value && "observed" in value && Array.isArray((value as ScheduleVerdict).failures);
}

function isReport(value: unknown): value is FuzzReport {
  return typeof value === "object" && value !== null && "outcomes" in value && "counterexample" in value && typeof (value as FuzzReport).pass === "boolean";
}

/** The matcher (registered with the package's other matchers). */
export function toHaveAgenticParity(this: MatcherContext, received: unknown): SyncExpectationResult {
  const head = this.utils.matcherHint("toHaveAgenticParity", undefined, "", { isNot: this.isNot, promise: this.promise });
  if (isReport(received)) {
    return {
      pass: received.pass,
      message: () =>
        `${head}\n\n${received.pass ? "The fuzz run found no counterexample, so .not fails.\n" : "The fuzz run found a counterexample.\n"}${formatFuzzReport(received)}`,
    };
  }
  if (isVerdict(received)) {
    return {
      pass: received.pass,
      message: () =>
        `${head}\n\n${received.pass ? "The schedule passed every check, so .not fails.\n" : "The schedule breaks the model or parity.\n"}${formatScheduleVerdict(received)}`,
    };
  }
  throw new TypeError("toHaveAgenticParity: expected the report of fuzzAgenticParity or the verdict of replayAgentSchedule");
}
