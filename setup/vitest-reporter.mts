// The Vitest reporter entry (`reporters: ["default", "jest-session-parity/vitest-reporter"]`): the same HTML report as
// the Jest reporter, from the verdicts the matchers reached in Vitest's workers.
import { mkdtempSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { reportWrittenLine, writeTestRunReport, type SessionParityReporterOptions } from "../src/report/test-run-report.js";
import { REPORT_DIR_ENV } from "../src/report/verdict-recorder.js";

export type { SessionParityReporterOptions } from "../src/report/test-run-report.js";

/** The parts of Vitest's test modules the reporter reads (Vitest 3 and 4). */
interface TestModuleLike {
  moduleId: string;
  children: { allTests(): Iterable<{ fullName: string; result(): { state: string } }> };
}

/** Writes the HTML parity report of a Vitest run. */
export default class SessionParityVitestReporter {
  private readonly directory: string;
  private rootDir = process.cwd();

  constructor(private readonly options: SessionParityReporterOptions = {}) {
    // Vitest starts its workers after the reporters, so they inherit the variable and record into this directory.
    this.directory = mkdtempSync(path.join(os.tmpdir(), "session-parity-report-"));
    process.env[REPORT_DIR_ENV] = this.directory;
  }

  /** Remembers the project root the output file is relative to. */
  onInit(vitest: { config: { root: string } }): void {
    this.rootDir = vitest.config.root;
  }

  /** Reads every recording, draws the page and writes it; then removes the recordings. */
  async onTestRunEnd(testModules: ReadonlyArray<TestModuleLike>): Promise<void> {
    const failedTests = new Map<string, Set<string>>();
    let tests = 0;
    let failed = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        tests++;
        if (test.result().state !== "failed") continue;
        failed++;
        const names = failedTests.get(module.moduleId) ?? new Set<string>();
        names.add(test.fullName);
        failedTests.set(module.moduleId, names);
      }
    }
    const written = await writeTestRunReport({ rootDir: this.rootDir, recordingDir: this.directory, failedTests, totals: { tests, failed } }, this.options);
    if (written !== null) process.stderr.write(reportWrittenLine(written));
  }
}
