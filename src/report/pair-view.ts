// Turns one v1/v2 pair and the verdicts the matchers gave it into the report's pair view.
// Failure texts come from the matchers' own formatter, so the page says exactly what the terminal says.
import { formatVerdict, type ParityVerdict } from "../matchers/parity-verdict";
import type { SessionParityRun } from "../fixture/types";
import { runView } from "./run-view";
import type { ReportFailureView, ReportPairView } from "./types";

/** What {@link pairView} reads. */
export interface PairViewInput {
  /** Heading of the pair. */
  title: string;
  /** Test file and name, when the pair comes from a test. */
  origin?: string | null;
  /** The v1 run (or the error that replaced it), or null when the check had none. */
  v1: SessionParityRun | Error | null;
  /** The v2 run (or the error that replaced it), or null when the check had none. */
  v2: SessionParityRun | Error | null;
  /** The verdicts of every check made on the pair. */
  verdicts: readonly ParityVerdict[];
  /** Decodes one token id to text (the tokenizer's `decode([id])`); token ids are shown alone without it. */
  decodeToken?: (id: number) => string;
}

/** The failing parts of `verdicts` as the matchers print them, with the paths of their differing leaves. */
function failureViews(verdicts: readonly ParityVerdict[]): ReportFailureView[] {
  return verdicts.flatMap((verdict) =>
    verdict.failures.map((failure) => ({
      part: failure.part,
      text: formatVerdict({ pass: false, failures: [failure], checkedParts: [failure.part] }, { indent: "" }),
      paths: failure.differences.map((difference) => difference.path),
    })),
  );
}

/** The pair as the report draws it. */
export function pairView(input: PairViewInput): ReportPairView {
  const failures = failureViews(input.verdicts);
  return {
    title: input.title,
    origin: input.origin ?? null,
    pass: input.verdicts.every((verdict) => verdict.pass) && failures.length === 0,
    v1: input.v1 === null ? null : runView(input.v1, "v1", input.decodeToken),
    v2: input.v2 === null ? null : runView(input.v2, "v2", input.decodeToken),
    failures,
  };
}
