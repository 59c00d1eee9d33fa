// Renders a parity report for a terminal: the servers, one table row per trajectory, the first failures, a verdict line.
// Failures print exactly as the parity matchers print them (`[part] message`, then the differing leaves).
import { formatDifferenceCount } from "../matchers/format-differences";
import { coveredByAlignment } from "../matchers/sequence-hunks";
import { describeSideConfiguration } from "./configuration-check";
import type { ParityReport, ReportCheck, ReportRun } from "./report";

/** Options of {@link renderReport}. */
export interface RenderReportOptions {
  /** Failing trajectories whose differences are listed (default 3). */
  failuresShown?: number;
  /** Difference lines per failing part (default 10). */
  differencesShown?: number;
  /** Lines printed right before the verdict line (e.g. which report files were written). */
  notes?: readonly string[];
}

/** The whole terminal report: header, table, first failing differences, closing verdict line. */
export function renderReport(report: ParityReport, options: RenderReportOptions = {}): string {
  const sections = [renderHeader(report)];
  // two differently configured sides explain every difference below: say so before any is listed
  const problem = report.configuration.problem;
  if (problem !== null) sections.push(problem);
  sections.push(renderTable(report));
  if (report.configuration.hint !== null) sections.push(report.configuration.hint);
  const failures = renderFailures(report, options);
  if (failures !== "") sections.push(failures);
  if (report.gate !== null) sections.push(renderGate(report.gate));
  if (report.warnings.length > 0) {
    const total = report.warnings.reduce((sum, warning) => sum + warning.count, 0);
    sections.push(`${total} server warning${total === 1 ? "" : "s"} (${report.warnings.length} distinct; listed in the --json report).`);
  }
  if (options.notes !== undefined && options.notes.length > 0) sections.push(options.notes.join("\n"));
  sections.push(renderVerdictLine(report));
  return `${sections.join("\n\n")}\n`;
}

/** The `--verify-gate` verdict of each version's batch, with the failing parts. */
function renderGate(gate: NonNullable<ParityReport["gate"]>): string {
  const lines = ["Session-verify gate (--verify-gate):"];
  for (const version of ["v1", "v2"] as const) {
    const check = gate[version];
    lines.push(`  ${version}  ${check.pass ? "PASS" : "FAIL"}`);
    for (const failure of check.failures) lines.push(`      [${failure.part}] ${failure.message.replace(/\n/g, "\n      ")}`);
  }
  return lines.join("\n");
}

/** Which servers the run used and where they came from. */
export function renderHeader(report: ParityReport): string {
  const { batch, cycles, latencyMs, toolCallFailureMode } = report.options;
  const origin = (what: "backend" | "v1" | "v2"): string => {
    const server = report.servers[what];
    if (server.origin === "unused") return "not needed (both session servers given)";
    if (server.origin === "given") return what === "backend" ? `${server.url}` : instancesWithLoad(report, what, `${server.url}`);
    if (what === "backend") return `${server.url} (embedded mock, weather script, ${latencyMs} ms latency)`;
    const other = what === "v1" ? "v2" : "v1";
    // One side given, the other started here: they only agree if the given server calls the same backend.
    if (report.servers[other].origin === "given") return `${server.url} (embedded, on the backend above; your ${other} server must call that backend too)`;
    return `${server.url} (embedded)`;
  };
  return [
    `session-parity run: ${batch} weather ${batch === 1 ? "trajectory" : "trajectories"} per version, ${cycles} cycle${cycles === 1 ? "" : "s"}` +
      `${toolCallFailureMode === "rollback" ? "" : ` (tool-call failure mode ${toolCallFailureMode})`}, v1 and v2 side by side`,
    `  backend  ${origin("backend")}`,
    `  v1       ${origin("v1")}`,
    ...configurationLine(report, "v1"),
    `  v2       ${origin("v2")}`,
    ...configurationLine(report, "v2"),
  ].join("\n");
}

/** The side's family, template source and kwargs, under its URL. */
function configurationLine(report: ParityReport, side: "v1" | "v2"): string[] {
  return [`           ${describeSideConfiguration(report.configuration[side])}`];
}

/** A given server list with the trajectories each instance served, e.g. `http://a (4 trajectories), http://b (4 trajectories)`. */
function instancesWithLoad(report: ParityReport, version: "v1" | "v2", list: string): string {
  const urls = list.split(",");
  if (urls.length === 1) return list;
  const served = (url: string): number => report.runs.filter((run) => run.version === version && run.server === url).length;
  return urls.map((url) => `${url} (${served(url)} ${served(url) === 1 ? "trajectory" : "trajectories"})`).join(", ");
}

/** One row per trajectory: parity, topology, records, requests and wall time (v1/v2). */
function renderTable(report: ParityReport): string {
  const runsOf = new Map<number, { v1?: ReportRun; v2?: ReportRun }>();
  for (const run of report.runs) {
    const pair = runsOf.get(run.trajectory) ?? {};
    pair[run.version] = run;
    runsOf.set(run.trajectory, pair);
  }
  const header = ["trajectory", "parity", "topology", "records v1/v2", "requests v1/v2", "wall time v1/v2"];
  const rows = report.trajectories.map((trajectory) => {
    const pair = runsOf.get(trajectory.trajectory) ?? {};
    return [
      String(trajectory.trajectory),
      trajectory.error !== null ? "ERROR" : checkCell(trajectory.parity),
      trajectory.error !== null ? "-" : trajectory.topology === null ? "n/a" : checkCell(trajectory.topology),
      `${pair.v1?.records ?? "-"}/${pair.v2?.records ?? "-"}`,
      `${pair.v1?.requests ?? "-"}/${pair.v2?.requests ?? "-"}`,
      `${formatMs(pair.v1?.wallMs)} / ${formatMs(pair.v2?.wallMs)}`,
    ];
  });
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => (column === 0 ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)].join("\n");
}

/** The first failing trajectories with their failing parts and differences, or "" when all passed. */
function renderFailures(report: ParityReport, options: RenderReportOptions = {}): string {
  const shown = options.failuresShown ?? 3;
  const limit = options.differencesShown ?? 10;
  const failing = report.trajectories.filter((trajectory) => !trajectory.pass);
  if (failing.length === 0) return "";
  const blocks = failing.slice(0, shown).map((trajectory) => {
    const lines = [`Trajectory ${trajectory.trajectory}:`];
    if (trajectory.error !== null) {
      // Only the cause: no difference is derived from a run that never completed.
      lines[0] = `Trajectory ${trajectory.trajectory}: ERROR, the payloads were never compared`;
      for (const failure of trajectory.parity.failures) lines.push(`  [${failure.part}] ${failure.message}`);
      return lines.join("\n");
    }
    for (const [name, check] of [
      ["toHaveTrainingPayloadParity", trajectory.parity],
      ["toHaveRetryTopology", trajectory.topology],
    ] as const) {
      if (check === null || check.pass) continue;
      lines.push(`  ${name} failed:`);
      for (const failure of check.failures) {
        lines.push(`    [${failure.part}] ${failure.message}`);
        for (const hunk of failure.hunks) lines.push(`      ${hunk}`);
        // the aligned runs above describe their sequences' positions: list only the other leaves
        const aligned = failure.hunks.map((hunk) => hunk.slice(0, hunk.indexOf(": ")));
        if (failure.differences.length > 0) {
          const listed = failure.differences.slice(0, limit).filter((difference) => !coveredByAlignment(difference.path, aligned));
          for (const difference of listed) lines.push(`      ${difference.text}`);
          const count = aligned.length > 0 ? listed.length : Math.min(limit, failure.differences.length);
          lines.push(`      ${formatDifferenceCount(failure.totalDifferences, count, aligned.length > 0)}`);
        }
      }
    }
    return lines.join("\n");
  });
  const more = failing.length > shown ? `\n(${failing.length - shown} more failing trajectories; see --json FILE for all of them)` : "";
  const title = failing.every((trajectory) => trajectory.error !== null) ? "Server problems" : "First failing differences";
  return `${title}:\n${blocks.join("\n")}${more}`;
}

/** `16/16 trajectories pass ...` or `3 of 16 trajectories FAIL ...`, with the wall time against its floor. */
function renderVerdictLine(report: ParityReport): string {
  const { trajectories, passed, failed } = report.summary;
  const { trajectoriesMs, floorMs, totalMs } = report.timings;
  const floor = floorMs === null || floorMs === 0 ? "" : ` = ${(trajectoriesMs / floorMs).toFixed(2)} × the ${formatMs(floorMs)} latency floor`;
  const timing = `trajectories ${formatMs(trajectoriesMs)}${floor}; ${report.requests} chat requests; total ${formatMs(totalMs)}`;
  const { serverProblems, firstServerProblem } = report.summary;
  if (serverProblems > 0) {
    const differing = report.trajectories.filter((trajectory) => !trajectory.pass && trajectory.error === null).length;
    const alsoDiffer = differing === 0 ? "" : `; besides, ${differing} of the compared trajectories differ`;
    return (
      `ERROR: ${serverProblems} of ${2 * trajectories} runs failed on a server problem, so their payloads were never compared${alsoDiffer} ` +
      `(${timing}). First cause: ${firstServerProblem}`
    );
  }
  if (report.summary.configurationProblem) {
    return `ERROR: ${failed} of ${trajectories} ${trajectories === 1 ? "trajectory differs" : "trajectories differ"} between two differently configured sides (see the configuration problem above), not a parity verdict (${timing}).`;
  }
  const gateFailed = report.gate === null ? [] : (["v1", "v2"] as const).filter((version) => !report.gate![version].pass);
  if (failed === 0 && gateFailed.length > 0) {
    const parts = gateFailed.map((version) => `${version}: ${report.gate![version].failures.map((failure) => failure.part).join(", ")}`).join("; ");
    return `FAIL: every payload matched, but the session-verify gate failed (${parts}) (${timing}).`;
  }
  if (failed === 0)
    return `PASS: ${passed}/${trajectories} ${trajectories === 1 ? "trajectory" : "trajectories"} — the v2 training payload equals v1's bit for bit (${timing}).`;
  return `FAIL: ${failed} of ${trajectories} ${trajectories === 1 ? "trajectory differs" : "trajectories differ"} (${timing}).`;
}

function checkCell(check: ReportCheck): string {
  const parts = check.failures.length;
  return check.pass ? "pass" : `FAIL (${parts} part${parts === 1 ? "" : "s"})`;
}

/** Milliseconds as `812 ms` or `3.41 s`; `-` when unknown. */
function formatMs(ms: number | undefined | null): string {
  if (ms === undefined || ms === null) return "-";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}
