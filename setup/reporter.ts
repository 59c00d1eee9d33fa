// The Jest reporter entry (`reporters: ["default", "jest-session-parity/reporter"]`): gathers the parity verdicts the
// matchers reached in every worker and writes one self-contained HTML report when the run ends.
import { mkdtempSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { reportWrittenLine, writeTestRunReport, type SessionParityReporterOptions } from "../src/report/test-run-report";
import { REPORT_DIR_ENV } from "../src/report/verdict-recorder";

export type { SessionParityReporterOptions } from "../src/report/test-run-report";

/** The parts of Jest's aggregated result the reporter reads. */
interface AggregatedResultLike {
  numFailedTests: number;
  numTotalTests: number;
  testResults: { testFilePath: string; testResults: { fullName: string; status: string }[] }[];
}

/** Writes the HTML parity report of a Jest run (see {@link SessionParityReporterOptions}). */
export default class SessionParityReporter {
  private readonly directory: string;
  private readonly rootDir: string;

  constructor(
    globalConfig: { rootDir: string },
    private readonly options: SessionParityReporterOptions = {},
  ) {
    this.rootDir = globalConfig.rootDir;
    // Workers are started after the reporters, so they inherit the variable and record into this directory.
    this.directory = mkdtempSync(path.join(os.tmpdir(), "session-parity-report-"));
    process.env[REPORT_DIR_ENV] = this.directory;
  }

  /** Reads every recording, draws the page and writes it; then removes the recordings. */
  async onRunComplete(_contexts: unknown, results: AggregatedResultLike): Promise<void> {
    const failedTests = new Map<string, Set<string>>();
    for (const file of results.testResults) {
      const failed = file.testResults.filter((test) => test.status === "failed").map((test) => test.fullName);
      if (failed.length > 0) failedTests.set(file.testFilePath, new Set(failed));
    }
    const written = await writeTestRunReport(
      { rootDir: this.rootDir, recordingDir: this.directory, failedTests, totals: { tests: results.numTotalTests, failed: results.numFailedTests } },
      this.options,
    );
    if (written !== null) process.stderr.write(reportWrittenLine(written));
  }

  /** Jest asks every reporter for an error to fail the run with; this one never fails it. */
  getLastError(): undefined {
    return undefined;
  }
}
