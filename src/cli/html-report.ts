// Builds the HTML page of a `session-parity run` (`--html FILE`) from its report and the raw runs of every pair.
// Token texts come from the run's tokenizer; the drawing itself is the report component's pure renderer.
import type { SessionParityRun } from "../fixture/types";
import { pairView, renderHtmlReport, type HtmlReportInput } from "../report";
import { loadCheckpoint } from "../tokenizer/load";
import { pairVerdicts } from "./judge";
import type { ParityReport } from "./report";

/** Decodes single token ids with the vocabulary of `hfCheckpoint` (any family's; the packaged Qwen3 one when null), memoized. */
export async function tokenDecoder(hfCheckpoint: string | null | undefined): Promise<(id: number) => string> {
  const { tokenizer } = await loadCheckpoint(hfCheckpoint === null || hfCheckpoint === undefined ? {} : { hfCheckpoint });
  const texts = new Map<number, string>();
  return (id: number): string => {
    let text = texts.get(id);
    if (text === undefined) {
      text = tokenizer.decode([id]);
      texts.set(id, text);
    }
    return text;
  };
}

/** The run's summary lines as the page's header table shows them. */
function summaryLines(report: ParityReport): [string, string][] {
  const { batch, cycles, latencyMs } = report.options;
  const where = (what: "backend" | "v1" | "v2"): string => {
    const server = report.servers[what];
    return server.origin === "unused" ? "not needed" : `${server.url ?? "?"} (${server.origin})`;
  };
  return [
    [
      "verdict",
      report.summary.pass
        ? `PASS: ${report.summary.passed}/${report.summary.trajectories}`
        : `FAIL: ${report.summary.failed} of ${report.summary.trajectories} trajectories differ`,
    ],
    ["run", `${batch} per version, ${cycles} cycle${cycles === 1 ? "" : "s"}, latency ${latencyMs} ms`],
    ["backend", where("backend")],
    ["v1", where("v1")],
    ["v2", where("v2")],
    ["package", `${report.versions.package} on node ${report.versions.node}`],
    ["started", report.startedAt],
  ];
}

/**
 * The page data of a run: one pair view per trajectory with its parity and topology verdicts (a pair whose run
 * could not start shows the report's failure text). Tokens are decoded with the tokenizer of `hfCheckpoint`.
 */
async function buildRunHtmlInput(report: ParityReport, pairs: readonly [SessionParityRun | Error, SessionParityRun | Error][]): Promise<HtmlReportInput> {
  const decodeToken = await tokenDecoder(report.options.hfCheckpoint);
  const views = pairs.map(([v1, v2], i) => {
    const title = `trajectory ${i}`;
    if (v1 instanceof Error || v2 instanceof Error) {
      const failures = report.trajectories[i]?.parity.failures ?? [];
      return {
        ...pairView({ title, v1, v2, verdicts: [], decodeToken }),
        pass: false,
        failures: failures.map((failure) => ({ part: failure.part, text: `[${failure.part}] ${failure.message}`, paths: [] })),
      };
    }
    const verdicts = pairVerdicts(v1, v2, report.options.cycles, report.options.toolCallFailureMode).filter((verdict) => verdict !== null);
    return pairView({ title, v1, v2, verdicts, decodeToken });
  });
  return { title: "session-parity run", generatedAt: new Date().toISOString(), summary: summaryLines(report), pairs: views };
}

/** The complete page of a run. */
export async function renderRunHtml(report: ParityReport, pairs: readonly [SessionParityRun | Error, SessionParityRun | Error][]): Promise<string> {
  return renderHtmlReport(await buildRunHtmlInput(report, pairs));
}
