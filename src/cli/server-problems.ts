// Tells a server problem apart from a payload difference: any run that did not complete (a non-2xx reply, no reply,
// an undecodable reply, a session that could not be opened). `run` exits 2 when any run met one and names the first.
import { shortCause } from "./judge";
import type { ReportRun } from "./report";

/** Counts the runs that met a server problem and keeps the first one's cause (trajectory order, v1 before v2). */
export function summarizeServerProblems(runs: readonly ReportRun[]): { count: number; first: string | null } {
  let count = 0;
  let first: string | null = null;
  for (const run of runs) {
    if (run.failure === null) continue;
    count += 1;
    first ??= `trajectory ${run.trajectory} (${run.version}): ${shortCause(run.failure)}`;
  }
  return { count, first };
}
