// The report of one `session-parity replay`: a row per conversation (PASS / FAIL / ERROR), a summary by failure kind,
// the servers and the retry settings; plain JSON (what `--json` writes) and its terminal rendering.
import { describeRetry } from "../replay/retry-injection";
import type { ReplayResult } from "../replay/run-replay";

/** Everything `session-parity replay` found out. */
export interface ReplayReport {
  reportVersion: 1;
  startedAt: string;
  files: string[];
  options: {
    /** The retry seed and rate, or null without `--retries`. */
    retries: { seed: number; rate: number } | null;
    concurrency: number;
    /** `i/n`, or null. */
    shard: string | null;
    /** The one conversation replayed (`--conversation`), or null. */
    conversation: number | null;
    /** The flags naming the servers and the model (`--backend URL`, `--tito-model NAME`, ...), repeated in replay commands. */
    serverFlags: string[];
  };
  servers: { backend: string; v1: string; v2: string };
  summary: {
    conversations: number;
    passed: number;
    failed: number;
    errors: number;
    /** Rows per failure kind (FAIL and ERROR), most frequent first. */
    byKind: Array<{ kind: string; status: "FAIL" | "ERROR"; count: number }>;
    /** Rows whose failure is the servers' (no reply, 404, 5xx): the command exits 2. */
    serverProblems: number;
    /**
     * When rows FAIL and the two servers' /health report different families, templates or kwargs: the difference and
     * the flags that align them (the command exits 2: not a parity verdict); null otherwise.
     */
    configurationProblem: string | null;
    pass: boolean;
  };
  requests: number;
  timings: { totalMs: number; conversationsPerSecond: number };
  rows: ReplayResult[];
}

/** The command line that replays one conversation of the report alone (with its retries, if any). */
export function replayCommandFor(report: Pick<ReplayReport, "files" | "options">, index: number): string {
  const retries = report.options.retries === null ? "" : ` --retries ${report.options.retries.seed} --retry-rate ${report.options.retries.rate}`;
  const servers = report.options.serverFlags.length === 0 ? "" : ` ${report.options.serverFlags.map(quote).join(" ")}`;
  return `session-parity replay ${report.files.map(quote).join(" ")}${retries}${servers} --conversation ${index}`;
}

function quote(word: string): string {
  return /^[\w./@:+-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

/** The summary counts of a list of rows. */
export function summarize(rows: readonly ReplayResult[]): ReplayReport["summary"] {
  const kinds = new Map<string, { kind: string; status: "FAIL" | "ERROR"; count: number }>();
  for (const row of rows) {
    if (row.verdict.status === "PASS") continue;
    const kind = row.verdict.kind ?? "unknown";
    const key = `${row.verdict.status} ${kind}`;
    const entry = kinds.get(key) ?? { kind, status: row.verdict.status, count: 0 };
    entry.count += 1;
    kinds.set(key, entry);
  }
  const count = (status: string): number => rows.filter((row) => row.verdict.status === status).length;
  return {
    conversations: rows.length,
    passed: count("PASS"),
    failed: count("FAIL"),
    errors: count("ERROR"),
    byKind: [...kinds.values()].sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind)),
    serverProblems: rows.filter((row) => row.verdict.serverProblem).length,
    configurationProblem: null,
    pass: rows.length > 0 && rows.every((row) => row.verdict.status === "PASS"),
  };
}

function where(row: ReplayResult): string {
  return `${row.file}:${row.line}`;
}

/** One table row per conversation. */
function renderTable(report: ReplayReport): string {
  const header = ["#", "line", "format", "replies", "calls", "retries", "verdict", "cause"];
  const rows = report.rows.map((row) => [
    String(row.index),
    where(row),
    row.format ?? "-",
    String(row.replies),
    String(row.calls),
    String(row.retries.length),
    row.verdict.status,
    row.verdict.status === "PASS" ? "" : `${row.verdict.kind ?? ""}${row.verdict.messageIndex === null ? "" : ` at message ${row.verdict.messageIndex}`}`,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => (column === 0 ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)].join("\n");
}

/** The first failing rows in detail: cause, first differing leaves, the retries in words and the command replaying it. */
function renderFailures(report: ReplayReport, shown = 5, differencesShown = 10): string {
  const failing = report.rows.filter((row) => row.verdict.status !== "PASS");
  if (failing.length === 0) return "";
  const blocks = failing.slice(0, shown).map((row) => {
    const lines = [`Conversation ${row.index} (${where(row)}${row.label === null ? "" : `, ${row.label}`}): ${row.verdict.status} ${row.verdict.kind ?? ""}`];
    if (row.verdict.failures.length === 0 && row.verdict.cause !== null) lines.push(`  ${row.verdict.cause}`);
    for (const failure of row.verdict.failures) {
      lines.push(`  [${failure.part}] ${failure.message.replace(/\n/g, "\n  ")}`);
      for (const difference of failure.differences.slice(0, differencesShown)) lines.push(`    ${difference.text}`);
      if (failure.totalDifferences > Math.min(differencesShown, failure.differences.length)) {
        lines.push(`    (${failure.totalDifferences} differing leaves in all)`);
      }
    }
    if (row.retries.length > 0) {
      lines.push(`  retries injected (seed ${report.options.retries?.seed}, conversation ${row.index}):`);
      for (const retry of row.retries) lines.push(`    ${describeRetry(retry)}`);
    }
    if (row.format !== null) lines.push(`  replay it alone: ${replayCommandFor(report, row.index)}`);
    return lines.join("\n");
  });
  const more = failing.length > shown ? `\n(${failing.length - shown} more; see --json FILE for all of them)` : "";
  return `First failing conversations:\n${blocks.join("\n")}${more}`;
}

function renderKinds(report: ReplayReport): string {
  const { byKind } = report.summary;
  if (byKind.length === 0) return "";
  return ["By failure kind:", ...byKind.map((entry) => `  ${String(entry.count).padStart(5)}  ${entry.status.padEnd(5)}  ${entry.kind}`)].join("\n");
}

function renderVerdict(report: ReplayReport): string {
  const { conversations, passed, failed, errors, serverProblems } = report.summary;
  const timing = `${report.requests} chat requests; ${(report.timings.totalMs / 1000).toFixed(2)} s`;
  if (conversations === 0)
    return `ERROR: no conversation to replay in ${report.files.join(", ")}${report.options.shard === null ? "" : ` (shard ${report.options.shard})`}.`;
  if (serverProblems > 0) return `ERROR: ${serverProblems} of ${conversations} conversations met a server problem (${timing}).`;
  if (report.summary.configurationProblem !== null)
    return `ERROR: ${failed} of ${conversations} conversations differ between two differently configured sides (see the configuration problem above), not a parity verdict (${timing}).`;
  if (failed === 0 && errors === 0) return `PASS: ${passed}/${conversations} conversations — the v2 training payload equals v1's bit for bit (${timing}).`;
  return `FAIL: ${failed} of ${conversations} conversations differ, ${errors} could not be replayed (${timing}).`;
}

/** The whole terminal report. */
export function renderReplayReport(report: ReplayReport, notes: readonly string[] = []): string {
  const retries = report.options.retries === null ? "no retries" : `retries seed ${report.options.retries.seed}, rate ${report.options.retries.rate}`;
  const header = [
    `session-parity replay: ${report.summary.conversations} conversation${report.summary.conversations === 1 ? "" : "s"} from ${report.files.join(", ")} (${retries}${report.options.shard === null ? "" : `, shard ${report.options.shard}`})`,
    `  backend  ${report.servers.backend}`,
    `  v1       ${report.servers.v1}`,
    `  v2       ${report.servers.v2}`,
  ].join("\n");
  const sections = [header];
  if (report.rows.length > 0) sections.push(renderTable(report));
  for (const section of [renderFailures(report), renderKinds(report)]) if (section !== "") sections.push(section);
  if (report.summary.configurationProblem !== null) sections.push(report.summary.configurationProblem);
  if (notes.length > 0) sections.push(notes.join("\n"));
  sections.push(renderVerdict(report));
  return `${sections.join("\n\n")}\n`;
}
