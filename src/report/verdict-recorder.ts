// Runs inside each test worker: writes every parity verdict the matchers reach to a JSON-lines file of its own,
// which the Jest reporter in the main process reads when the run ends. The only I/O of the report component's capture.
import { appendFileSync } from "node:fs";
import * as path from "node:path";
import { observeVerdicts, type ObservedVerdict } from "../matchers/verdict-observers";
import type { SessionParityRun } from "../fixture/types";
import { pairView } from "./pair-view";
import type { ReportPairView } from "./types";

/** Variable through which the reporter tells the workers where to record. */
export const REPORT_DIR_ENV = "SESSION_PARITY_REPORT_DIR";

/** One line of a recording file. */
export interface RecordedVerdict {
  /** Test file (absolute, as the runner gives it). */
  testPath: string | null;
  /** Full test name. */
  testName: string | null;
  /** Which matcher. */
  matcher: string;
  /** True under `.not` (the check was expected to fail). */
  isNot: boolean;
  /** The pair as the report draws it (token texts are added by the reporter). */
  pair: ReportPairView;
}

function looksLikeRun(value: unknown): value is SessionParityRun {
  return typeof value === "object" && value !== null && Array.isArray((value as { samples?: unknown }).samples) && "preCollect" in value;
}

/** The report entry of one observed verdict, or null for matchers the report does not draw. */
function recordedVerdict(observed: ObservedVerdict): RecordedVerdict | null {
  const title = observed.testName ?? observed.matcher;
  let v1: SessionParityRun | null = null;
  let v2: SessionParityRun | null;
  if (observed.matcher === "toHaveTrainingPayloadParity") {
    v1 = looksLikeRun(observed.received) ? observed.received : null;
    v2 = looksLikeRun(observed.expected) ? observed.expected : null;
  } else if (observed.matcher === "toHaveRetryTopology") {
    v2 = looksLikeRun(observed.received) ? observed.received : null;
  } else {
    return null;
  }
  const pair = pairView({ title: `${title} (${observed.matcher})`, v1, v2, verdicts: [observed.verdict] });
  return { testPath: observed.testPath ?? null, testName: observed.testName ?? null, matcher: observed.matcher, isNot: observed.isNot, pair };
}

/**
 * Starts recording into `directory` (one file per worker process; each test file's module registry adds its own observer).
 * @returns the function that stops recording.
 */
export function installVerdictRecorder(directory: string): () => void {
  const file = path.join(directory, `verdicts-${process.pid}.jsonl`);
  return observeVerdicts((observed) => {
    const entry = recordedVerdict(observed);
    // Synchronous on purpose: a worker may exit right after its last test.
    if (entry !== null) appendFileSync(file, `${JSON.stringify(entry)}\n`);
  });
}
