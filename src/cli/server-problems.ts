// Tells a server problem (a 5xx reply, a refused connection) apart from a payload difference in a run's failure.
// `run` exits 2 when any run met one, since then the payloads were never compared, and names the first cause.
import type { ReportRun } from "./report";

const FAILED_STATUS = /\bfailed \(status (\d+)\)/;

/**
 * The server problem behind a run's failure text, or null when the failure is not one. The fixture's failures
 * carry `failed (status N)` from the chat call or the session route that failed: status 0 (no reply) or 5xx.
 */
function serverProblemOf(failure: string | null): string | null {
  if (failure === null) return null;
  const match = FAILED_STATUS.exec(failure);
  if (match === null) return null;
  const status = Number(match[1]);
  return status === 0 || status >= 500 ? failure : null;
}

/** Counts the runs that met a server problem and keeps the first one's text (trajectory order, v1 before v2). */
export function summarizeServerProblems(runs: readonly ReportRun[]): { count: number; first: string | null } {
  let count = 0;
  let first: string | null = null;
  for (const run of runs) {
    const problem = serverProblemOf(run.failure);
    if (problem === null) continue;
    count += 1;
    first ??= `trajectory ${run.trajectory} (${run.version}): ${problem}`;
  }
  return { count, first };
}
