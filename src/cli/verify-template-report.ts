// Prints a chat-template verification report like a test run: a header, one line per check, coverage, summary.
// Pure text; the verify-template command writes it to stdout.
import { describeCell } from "../verify/cases";
import type { TemplateVerifyReport, VerifyCaseResult } from "../verify/types";

/** Characters of a failure message kept on its result line. */
const MESSAGE_WIDTH = 120;

function kwargsText(kwargs: Record<string, unknown>): string {
  return JSON.stringify(kwargs);
}

function resultLines(result: VerifyCaseResult, idWidth: number): string[] {
  const head = `  ${result.passed ? "PASS" : "FAIL"}  ${result.layer.padEnd(4)}  ${result.id.padEnd(idWidth)}`;
  if (result.passed) return [head.trimEnd()];
  const error = result.error ?? "failed";
  const firstLine = error.split("\n")[0];
  // the divergence is printed on the two lines below; the result line keeps the words and the offset
  const short = result.divergence === null ? firstLine : firstLine.replace(/ \(expected:[^)]*\) at char \d+:[\s\S]*$/, ` at char ${result.divergence.index}`);
  const lines = [`${head}  -- ${short.length > MESSAGE_WIDTH ? `${short.slice(0, MESSAGE_WIDTH - 3)}...` : short}`];
  if (result.divergence !== null) {
    lines.push(`          expected: ...${JSON.stringify(result.divergence.expected)}...`);
    lines.push(`          actual:   ...${JSON.stringify(result.divergence.actual)}...`);
  }
  return lines;
}

/** The whole report as the command prints it (ends with a newline). */
export function renderTemplateVerifyReport(report: TemplateVerifyReport): string {
  const lines: string[] = [];
  lines.push(`Template source:       ${report.templateSource}`);
  lines.push(`TITO model:            ${report.titoModel ?? "none (text layer only)"}`);
  lines.push(`Append capability:     [${[...report.allowedAppendRoles].sort().join(", ")}]`);
  lines.push(`Thinking mode:         ${report.thinking}`);
  for (const [key, value] of Object.entries(report.autoSetKwargs)) {
    lines.push(`Auto-set kwarg:        ${key}=${JSON.stringify(value)} (from --tito-model ${report.titoModel ?? ""})`);
  }
  if (Object.keys(report.templateKwargs).length > 0) lines.push(`Template kwargs:       ${kwargsText(report.templateKwargs)}`);
  lines.push(`Selected trajectories: ${report.selectedTrajectories} of ${report.poolTrajectories} (after filtering)`);
  lines.push("");
  const idWidth = Math.max(0, ...report.results.map((result) => result.id.length));
  for (const result of report.results) lines.push(...resultLines(result, idWidth));
  lines.push("");
  if (report.coverage.poolGaps.length > 0) {
    lines.push("Trajectory pool gaps (thinking x append roles beyond tool, no trajectory at all):");
    for (const cell of report.coverage.poolGaps) lines.push(`  - ${describeCell(cell)}`);
  }
  if (report.coverage.notExercised.length > 0) {
    lines.push("Not exercised by this run (thinking x append roles beyond tool):");
    for (const cell of report.coverage.notExercised) lines.push(`  - ${describeCell(cell)}`);
    lines.push("");
  }
  const { checks, passed, failed } = report.summary;
  const layers = new Set(report.results.map((result) => result.layer));
  lines.push(
    `Results: ${passed}/${checks} passed, ${failed} failed (${[...layers].map((layer) => `${report.results.filter((r) => r.layer === layer).length} ${layer}`).join(", ")})`,
  );
  const first = report.results.find((result) => !result.passed);
  if (first !== undefined) {
    lines.push(`First divergence: ${first.id} (${first.layer} layer): ${first.error ?? "failed"}`);
  }
  const what =
    report.titoModel === null ? "the template is append-only after every pretokenize position" : "TITO incremental tokenization matched the standard render";
  const whatNot =
    report.titoModel === null
      ? "the template is NOT append-only after every pretokenize position"
      : "TITO incremental tokenization did NOT match the standard render";
  lines.push(report.summary.pass ? `Verdict: PASS - ${what}` : `Verdict: FAIL - ${whatNot}`);
  return `${lines.join("\n")}\n`;
}
