// The Jest reporter entry (`reporters: ["default", "jest-session-parity/reporter"]`): gathers the parity verdicts the
// matchers reached in every worker and writes one self-contained HTML report when the run ends.
import { mkdtempSync, promises as fsp, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { readRecordings, recordingsToReport } from "../src/report/collect-recordings";
import { renderHtmlReport } from "../src/report/html-page";
import { REPORT_DIR_ENV } from "../src/report/verdict-recorder";

/** Options given in the reporter tuple: `["jest-session-parity/reporter", { outputFile: "parity-report.html" }]`. */
export interface SessionParityReporterOptions {
  /** Where the page goes, relative to Jest's rootDir (default `session-parity-report.html`). */
  outputFile?: string;
  /** Checkpoint directory whose tokenizer decodes the tokens (default: the packaged Qwen3 tokenizer). */
  hfCheckpoint?: string;
  /** Write the page only when some recorded check failed (default false: always). */
  onlyOnFailure?: boolean;
}

/** The parts of Jest's aggregated result the reporter reads. */
interface AggregatedResultLike {
  numFailedTests: number;
  numTotalTests: number;
  testResults: { testFilePath: string; testResults: { fullName: string; status: string }[] }[];
}

/** Writes the HTML parity report of a Jest run (see {@link SessionParityReporterOptions}). */
export default class SessionParityReporter {
  private readonly directory: string;
  private readonly outputFile: string;
  private readonly rootDir: string;

  constructor(
    globalConfig: { rootDir: string },
    private readonly options: SessionParityReporterOptions = {},
  ) {
    this.outputFile = path.resolve(globalConfig.rootDir, options.outputFile ?? "session-parity-report.html");
    this.rootDir = globalConfig.rootDir;
    // Workers are started after the reporters, so they inherit the variable and record into this directory.
    this.directory = mkdtempSync(path.join(os.tmpdir(), "session-parity-report-"));
    process.env[REPORT_DIR_ENV] = this.directory;
  }

  /** Reads every recording, draws the page and writes it; then removes the recordings. */
  async onRunComplete(_contexts: unknown, results: AggregatedResultLike): Promise<void> {
    try {
      const recordings = await readRecordings(this.directory);
      if (recordings.length === 0) return;
      const failedTests = new Map<string, Set<string>>();
      for (const file of results.testResults) {
        const failed = file.testResults.filter((test) => test.status === "failed").map((test) => test.fullName);
        if (failed.length > 0) failedTests.set(file.testFilePath, new Set(failed));
      }
      const { loadTokenizer } = await import("../src/tokenizer/load");
      const tokenizer = await loadTokenizer(this.options.hfCheckpoint === undefined ? {} : { hfCheckpoint: this.options.hfCheckpoint });
      const texts = new Map<number, string>();
      const decodeToken = (id: number): string => {
        let text = texts.get(id);
        if (text === undefined) texts.set(id, (text = tokenizer.decode([id])));
        return text;
      };
      const input = recordingsToReport(recordings, {
        rootDir: this.rootDir,
        decodeToken,
        failedTests,
        summary: [
          ["tests", `${results.numTotalTests - results.numFailedTests}/${results.numTotalTests} passed`],
          ["parity checks recorded", String(recordings.length)],
        ],
      });
      const failing = input.pairs.filter((pair) => !pair.pass).length;
      if (this.options.onlyOnFailure === true && failing === 0) return;
      await fsp.writeFile(this.outputFile, renderHtmlReport(input));
      process.stderr.write(`session-parity: HTML report of ${input.pairs.length} parity checks (${failing} failing) written to ${path.relative(process.cwd(), this.outputFile) || this.outputFile}\n`);
    } finally {
      rmSync(this.directory, { recursive: true, force: true });
    }
  }

  /** Jest asks every reporter for an error to fail the run with; this one never fails it. */
  getLastError(): undefined {
    return undefined;
  }
}
