// Reads back what the workers recorded and turns it into the report page's data, with token texts decoded.
// Used by the Jest reporter when the run ends; the page itself is drawn by the pure renderer.
import { promises as fsp } from "node:fs";
import * as path from "node:path";
import type { RecordedVerdict } from "./verdict-recorder";
import type { HtmlReportInput, ReportPairView, ReportSampleView } from "./types";

/** Every recorded verdict in `directory`, in file then line order (files sorted by name). */
export async function readRecordings(directory: string): Promise<RecordedVerdict[]> {
  let names: string[];
  try {
    names = (await fsp.readdir(directory)).filter((name) => name.endsWith(".jsonl")).sort();
  } catch {
    return [];
  }
  const out: RecordedVerdict[] = [];
  for (const name of names) {
    const text = await fsp.readFile(path.join(directory, name), "utf8");
    for (const line of text.split("\n")) if (line.trim() !== "") out.push(JSON.parse(line) as RecordedVerdict);
  }
  return out;
}

function withTexts(sample: ReportSampleView | null, decodeToken: (id: number) => string): ReportSampleView | null {
  if (sample === null || sample.tokenTexts !== null) return sample;
  return { ...sample, tokenTexts: sample.tokens.map((id) => (Number.isInteger(id) && id >= 0 ? decodeToken(id) : "\uFFFD")) };
}

/** Options of {@link recordingsToReport}. */
export interface RecordingsToReportOptions {
  /** Directory test paths are shown relative to. */
  rootDir: string;
  /** Decodes one token id (the tokenizer's `decode([id])`). */
  decodeToken?: (id: number) => string;
  /** Full names of the tests that failed, by test path (the report marks their pairs). */
  failedTests?: ReadonlyMap<string, ReadonlySet<string>>;
  /** Summary lines above the pairs. */
  summary?: [string, string][];
}

/**
 * The page data of a test run. A check made under `.not` shows as passing when it found the difference it expected.
 * Pairs are ordered by test file, then in the order the checks ran.
 */
export function recordingsToReport(recordings: readonly RecordedVerdict[], options: RecordingsToReportOptions): HtmlReportInput {
  const sorted = [...recordings].sort((a, b) => (a.testPath ?? "").localeCompare(b.testPath ?? ""));
  const pairs: ReportPairView[] = sorted.map((recording) => {
    const file = recording.testPath === null ? "(unknown file)" : path.relative(options.rootDir, recording.testPath);
    const testFailed =
      recording.testPath !== null && recording.testName !== null && (options.failedTests?.get(recording.testPath)?.has(recording.testName) ?? false);
    const pass = recording.isNot ? !recording.pair.pass : recording.pair.pass;
    const decode = options.decodeToken;
    const pair = recording.pair;
    return {
      ...pair,
      pass,
      origin: `${file}${testFailed ? " — this test failed" : ""}${recording.isNot ? " — checked under .not" : ""}`,
      v1: pair.v1 === null || decode === undefined ? pair.v1 : { ...pair.v1, sample: withTexts(pair.v1.sample, decode) },
      v2: pair.v2 === null || decode === undefined ? pair.v2 : { ...pair.v2, sample: withTexts(pair.v2.sample, decode) },
    };
  });
  return { title: "session-parity test report", generatedAt: new Date().toISOString(), summary: options.summary ?? [], pairs };
}
