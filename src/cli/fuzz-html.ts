// Builds the HTML page of `session-parity fuzz --html FILE`: the run's summary and, for a counterexample (or a
// replayed schedule), its v1 and v2 runs drawn like a parity pair, with the schedule in words and the failures.
import type { ScheduleVerdict } from "../fuzz/checks";
import type { FuzzReport } from "../fuzz/runner";
import { describeSchedule } from "../fuzz/schedule";
import { pairView, renderHtmlReport, type ReportPairView } from "../report";
import { tokenDecoder } from "./html-report";

/** One schedule's verdict as a report pair: both runs, the steps in words as its origin, the failures as parts. */
function schedulePair(verdict: ScheduleVerdict, title: string, decodeToken?: (id: number) => string): ReportPairView {
  const pair = pairView({ title, v1: verdict.observed.v1.run, v2: verdict.observed.v2.run, verdicts: [], decodeToken });
  return {
    ...pair,
    origin: `${verdict.outcome}: ${describeSchedule(verdict.schedule).join(" · ")}`,
    pass: verdict.pass,
    failures: verdict.failures.map((failure) => ({ part: failure.where, text: `[${failure.where}] ${failure.message}`, paths: [] })),
  };
}

/** The page of a fuzz run: its counts, then the shrunk counterexample when there is one. */
export async function renderFuzzHtml(report: FuzzReport | null, replayed: ScheduleVerdict | null): Promise<string> {
  const decodeToken = await tokenDecoder(null);
  const summary: [string, string][] = [];
  const pairs: ReportPairView[] = [];
  if (report !== null) {
    summary.push(["verdict", report.counterexample === null ? "PASS: no counterexample" : "FAIL: counterexample found and shrunk"]);
    summary.push(["seed", String(report.seed)]);
    summary.push(["schedules", `${report.runs}`]);
    const ce = report.counterexample;
    if (ce !== null) {
      summary.push(["shrinking", `${ce.shrinkSteps} steps in ${Math.round(ce.shrinkMs)} ms`]);
      pairs.push(schedulePair(ce.verdict, `counterexample (seed ${ce.seed}, path ${ce.path})`, decodeToken));
    }
  }
  if (replayed !== null) {
    summary.push(["verdict", replayed.pass ? "PASS: the replayed schedule passes" : "FAIL: the replayed schedule fails"]);
    pairs.push(schedulePair(replayed, "replayed schedule", decodeToken));
  }
  return renderHtmlReport({ title: "session-parity fuzz", generatedAt: new Date().toISOString(), summary, pairs });
}
