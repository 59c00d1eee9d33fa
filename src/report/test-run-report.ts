// What both runner reporters do when a run ends: read the workers' recordings, decode tokens, write the page.
// The Jest and Vitest reporter entries only translate their runner's results into failed-test names.
import { promises as fsp, rmSync } from "node:fs";
import * as path from "node:path";
import { readRecordings, recordingsToReport } from "./collect-recordings";
import { renderHtmlReport } from "./html-page";

/** Options of a runner reporter: `["jest-session-parity/reporter", { outputFile: "parity-report.html" }]`. */
export interface SessionParityReporterOptions {
  /** Where the page goes, relative to the runner's root directory (default `session-parity-report.html`). */
  outputFile?: string;
  /** Checkpoint directory whose tokenizer decodes the tokens (default: the packaged Qwen3 tokenizer). */
  hfCheckpoint?: string;
  /** Write the page only when some recorded check failed (default false: always). */
  onlyOnFailure?: boolean;
}

/** What a finished test run tells the report. */
export interface FinishedTestRun {
  /** The runner's root directory (test paths are shown relative to it). */
  rootDir: string;
  /** Directory the workers recorded into (removed afterwards). */
  recordingDir: string;
  /** Full names of failed tests by test file path. */
  failedTests: ReadonlyMap<string, ReadonlySet<string>>;
  /** Tests run and failed. */
  totals: { tests: number; failed: number };
}

/**
 * Writes the page of a finished run (when any parity check was recorded) and removes the recordings.
 * @returns the file written and its counts, or null when nothing was written.
 */
export async function writeTestRunReport(
  run: FinishedTestRun,
  options: SessionParityReporterOptions,
): Promise<{ file: string; checks: number; failing: number } | null> {
  try {
    const recordings = await readRecordings(run.recordingDir);
    if (recordings.length === 0) return null;
    const { loadCheckpoint } = await import("../tokenizer/load");
    // the vocabulary alone: any family's checkpoint decodes its ids
    const { tokenizer } = await loadCheckpoint(options.hfCheckpoint === undefined ? {} : { hfCheckpoint: options.hfCheckpoint });
    const texts = new Map<number, string>();
    const decodeToken = (id: number): string => {
      let text = texts.get(id);
      if (text === undefined) texts.set(id, (text = tokenizer.decode([id])));
      return text;
    };
    const input = recordingsToReport(recordings, {
      rootDir: run.rootDir,
      decodeToken,
      failedTests: run.failedTests,
      summary: [
        ["tests", `${run.totals.tests - run.totals.failed}/${run.totals.tests} passed`],
        ["parity checks recorded", String(recordings.length)],
      ],
    });
    const failing = input.pairs.filter((pair) => !pair.pass).length;
    if (options.onlyOnFailure === true && failing === 0) return null;
    const file = path.resolve(run.rootDir, options.outputFile ?? "session-parity-report.html");
    await fsp.writeFile(file, renderHtmlReport(input));
    return { file, checks: input.pairs.length, failing };
  } finally {
    rmSync(run.recordingDir, { recursive: true, force: true });
  }
}

/** The line a reporter prints once the page is written. */
export function reportWrittenLine(written: { file: string; checks: number; failing: number }): string {
  return `session-parity: HTML report of ${written.checks} parity checks (${written.failing} failing) written to ${path.relative(process.cwd(), written.file) || written.file}\n`;
}
