// Builds the page of `session-parity replay --html FILE`: one page for the corpus, failing conversations first,
// the first ones drawn with their v1 record chain, v2 retry tree and aligned tokens; the rest listed with their cause.
import { pairView, renderHtmlReport, type ReportPairView } from "../report";
import type { ReplayObservation } from "../replay/drive-conversation";
import { describeRetry } from "../replay/retry-injection";
import type { ReplayResult } from "../replay/run-replay";
import { tokenDecoder } from "./html-report";
import { replayCommandFor, type ReplayReport } from "./replay-report";

const ORDER = { ERROR: 0, FAIL: 1, PASS: 2 } as const;

function rowPair(
  report: ReplayReport,
  row: ReplayResult,
  observed: { v1: ReplayObservation; v2: ReplayObservation } | undefined,
  decodeToken: (id: number) => string,
): ReportPairView {
  const title = `conversation ${row.index} (${row.file}:${row.line}${row.label === null ? "" : `, ${row.label}`})`;
  const drawn = observed === undefined ? null : pairView({ title, v1: observed.v1.run, v2: observed.v2.run, verdicts: [], decodeToken });
  const origin = [
    `${row.verdict.status}${row.verdict.kind === null ? "" : ` ${row.verdict.kind}`}`,
    `${row.format ?? "malformed line"}, ${row.messages} messages, ${row.replies} replies, ${row.calls} calls`,
    ...row.retries.map(describeRetry),
    ...(row.verdict.status !== "PASS" && row.format !== null ? [`replay it alone: ${replayCommandFor(report, row.index)}`] : []),
  ].join(" · ");
  const failures =
    row.verdict.failures.length > 0
      ? row.verdict.failures.map((failure) => ({
          part: failure.part,
          text: [`[${failure.part}] ${failure.message}`, ...failure.differences.map((difference) => `  ${difference.text}`)].join("\n"),
          paths: failure.differences.map((difference) => difference.path),
        }))
      : row.verdict.cause === null
        ? []
        : [{ part: row.verdict.kind ?? "error", text: row.verdict.cause, paths: [] }];
  return { title, origin, pass: row.verdict.status === "PASS", v1: drawn?.v1 ?? null, v2: drawn?.v2 ?? null, failures };
}

/** The page: the summary by failure kind, then every conversation, ERROR and FAIL rows first. */
export async function renderReplayHtml(report: ReplayReport, drawn: ReadonlyMap<number, { v1: ReplayObservation; v2: ReplayObservation }>): Promise<string> {
  const decodeToken = await tokenDecoder(null);
  const { summary } = report;
  const lines: [string, string][] = [
    ["verdict", summary.pass ? "PASS" : "FAIL"],
    ["files", report.files.join(", ")],
    ["conversations", `${summary.conversations}: ${summary.passed} pass, ${summary.failed} fail, ${summary.errors} error`],
    ["retries", report.options.retries === null ? "none" : `seed ${report.options.retries.seed}, rate ${report.options.retries.rate}`],
    ...summary.byKind.map((entry): [string, string] => [`${entry.status} ${entry.kind}`, String(entry.count)]),
  ];
  const rows = [...report.rows].sort((a, b) => ORDER[a.verdict.status] - ORDER[b.verdict.status] || a.index - b.index);
  const pairs = rows.map((row) => rowPair(report, row, drawn.get(row.index), decodeToken));
  return renderHtmlReport({ title: "session-parity replay", generatedAt: report.startedAt, summary: lines, pairs });
}
