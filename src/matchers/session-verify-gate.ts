// The session-verify gate of miles' onboarding check, over a batch of collected runs or samples.
// Mirrors utils/test_utils/session_verify_agent.py (generate) and session_verify_runner.py (assert_session_verify_metrics).
import type { SessionParityRun } from "../fixture/types";
import { Sample } from "../wire/sample";
import { VerdictBuilder, type ParityVerdict } from "./parity-verdict";
import { isPlainRecord } from "./run-shapes";

/** The mismatch types that must never occur in a TITO-correct setup (`_FORBIDDEN_MISMATCH_TYPES`). */
export const FORBIDDEN_MISMATCH_TYPES: readonly string[] = ["special_token_count", "special_token_type", "non_assistant_text"];

/** miles' `ASSISTANT_TEXT_MISMATCH_RATIO_THRESHOLD` (session_verify_runner.py). */
export const DEFAULT_ASSISTANT_TEXT_THRESHOLD = 0.2;

/**
 * The per-family `assistant_text_threshold` miles' multi-role e2e tests set
 * (tests/e2e/sglang/test_session_server_multi_role/test_<family>.py); other families use the default 0.2.
 */
export const ASSISTANT_TEXT_THRESHOLDS: Readonly<Record<string, number>> = Object.freeze({ qwen3: 0.25, deepseekv4: 0.05, minimax_m27: 0.1, nemotron3: 1.0 });

/**
 * Ids of the added tokens Qwen3's tokenizer.json flags special (`<|endoftext|>` 151643 to `<|video_pad|>` 151656):
 * the segment boundaries of Qwen3's mismatch report, used to turn a `segment_index` into a token span.
 */
export const QWEN3_SPECIAL_TOKEN_IDS: readonly number[] = Object.freeze(Array.from({ length: 14 }, (_, i) => 151643 + i));

/** Families on Qwen3's vocabulary, whose special ids are {@link QWEN3_SPECIAL_TOKEN_IDS}. */
const QWEN3_VOCABULARY_FAMILIES: readonly string[] = ["qwen3", "qwennext", "qwen35"];

/** Options of {@link checkSessionVerifyGate}. */
export interface SessionVerifyGateOptions {
  /** The family (default: the samples' `metadata.tito_model`, else `"qwen3"`); picks the threshold and special ids. */
  titoModel?: string;
  /** Roles the family may append (default all four, Qwen3's): each adds a required driver event. */
  allowedAppendRoles?: readonly string[];
  /** Largest allowed share of samples with an `assistant_text` mismatch (default per family, else 0.2). */
  assistantTextThreshold?: number;
  /** Ids that cut mismatch segments, to name token spans (default Qwen3's for Qwen3-vocabulary families). */
  specialTokenIds?: Iterable<number>;
  /** Differences kept per failing part (default 10). */
  maxDifferences?: number;
}

/** One sample under the gate and where it came from. */
interface GateSample {
  label: string;
  sample: Sample;
  runFailure: string | null;
}

function gateSamples(received: unknown): GateSample[] | string {
  const items = Array.isArray(received) ? (received as unknown[]) : [received];
  if (items.length === 0) return "received an empty batch: there is nothing to gate";
  const out: GateSample[] = [];
  for (const [i, item] of items.entries()) {
    if (item instanceof Sample) out.push({ label: `sample ${i}`, sample: item, runFailure: null });
    else if (isPlainRecord(item) && Array.isArray(item.samples) && (item.version === "v1" || item.version === "v2")) {
      const run = item as unknown as SessionParityRun;
      run.samples.forEach((sample, k) =>
        out.push({
          label: `sample ${i}${run.samples.length > 1 ? `.${k}` : ""} (${run.version}, session ${run.preCollect.session_id})`,
          sample,
          runFailure: run.failure ?? null,
        }),
      );
    } else return `item ${i} is neither a Sample nor a run of runAgenticRetryTrajectories`;
  }
  return out;
}

interface MismatchEntry {
  type: string;
  segment_index: number;
  expected_text: string;
  actual_text: string;
  detail: string;
}

function readMismatches(value: unknown): MismatchEntry[] | null {
  if (!Array.isArray(value)) return null;
  return value.map((entry) => {
    const record = isPlainRecord(entry) ? entry : {};
    return {
      type: String(record.type),
      segment_index: typeof record.segment_index === "number" ? record.segment_index : -1,
      expected_text: typeof record.expected_text === "string" ? record.expected_text : "",
      actual_text: typeof record.actual_text === "string" ? record.actual_text : "",
      detail: typeof record.detail === "string" ? record.detail : "",
    };
  });
}

/** The token span `[start, end)` of segment `index` of `ids` cut at `special` (each special id its own segment). */
function segmentSpan(ids: readonly number[], special: ReadonlySet<number>, index: number): [number, number] | null {
  let segment = -1;
  let start = 0;
  for (let i = 0; i < ids.length; i += 1) {
    const opens = special.has(ids[i]) || i === 0 || special.has(ids[i - 1]);
    if (opens) {
      if (segment === index) return [start, i];
      segment += 1;
      start = i;
    }
  }
  return segment === index ? [start, ids.length] : null;
}

/** Characters quoted before and after the first character where expected and actual texts differ. */
const QUOTE_BEFORE = 30;
const QUOTE_AFTER = 50;

/** Both texts around their first difference, JSON-quoted (`..."x": 1}"...`). */
function quoteDifference(expected: string, actual: string): [string, string] {
  let at = 0;
  while (at < expected.length && at < actual.length && expected.charCodeAt(at) === actual.charCodeAt(at)) at += 1;
  const start = Math.max(0, at - QUOTE_BEFORE);
  const cut = (text: string): string =>
    `${start > 0 ? "..." : ""}${JSON.stringify(text.slice(start, at + QUOTE_AFTER))}${text.length > at + QUOTE_AFTER ? "..." : ""}`;
  return [cut(expected), cut(actual)];
}

/** `token span [812, 840) (segment 14)` or the whole sequence for a structural entry. */
function spanText(entry: MismatchEntry, sample: Sample, special: ReadonlySet<number> | null): string {
  const ids = Array.isArray(sample.metadata.accumulated_token_ids) ? (sample.metadata.accumulated_token_ids as number[]) : sample.tokens;
  if (entry.segment_index < 0) return `token span [0, ${ids.length}) (the whole sequence: ${entry.detail || "segment structure differs"})`;
  const span = special === null ? null : segmentSpan(ids, special, entry.segment_index);
  return span === null ? `segment ${entry.segment_index}` : `token span [${span[0]}, ${span[1]}) (segment ${entry.segment_index})`;
}

function describeEntry(label: string, entry: MismatchEntry, sample: Sample, special: ReadonlySet<number> | null): string {
  const [expected, actual] = quoteDifference(entry.expected_text, entry.actual_text);
  return `${label}: ${entry.type} at ${spanText(entry, sample, special)}: expected ${expected}, actual ${actual}`;
}

/** The first `shown` problems, one per line under the part's headline, and how many more there are. */
function listed(problems: readonly string[], shown: number): string {
  const lines = problems.slice(0, shown).map((problem) => `\n    - ${problem}`);
  if (problems.length > shown) lines.push(`\n    - and ${problems.length - shown} more`);
  return lines.join("");
}

/** Driver events every sample must hold for these roles (session_verify_agent.py `required_per_sample`). */
export function requiredDriverEvents(allowedAppendRoles: readonly string[]): string[] {
  const required = ["rollback"];
  if (allowedAppendRoles.includes("user")) required.push("append_user");
  if (allowedAppendRoles.includes("system")) required.push("append_system");
  if (allowedAppendRoles.includes("assistant")) required.push("append_assistant");
  return required;
}

/**
 * The session-verify gate over a batch: per sample, `tito_session_mismatch` is present (its absence means the server
 * could not build the report), holds no `special_token_count` / `special_token_type` / `non_assistant_text` entry,
 * and the driver events include every required one; across the batch, some sample appended a tool result, and the
 * share of samples with an `assistant_text` mismatch is at most the threshold. Failures name the sample, the
 * mismatch type and its token span.
 */
export function checkSessionVerifyGate(received: unknown, options: SessionVerifyGateOptions = {}): ParityVerdict {
  const builder = new VerdictBuilder(options.maxDifferences);
  const samples = gateSamples(received);
  if (typeof samples === "string") {
    builder.usage("batch", samples);
    return builder.verdict();
  }
  const stamped = samples.map(({ sample }) => sample.metadata.tito_model).find((name): name is string => typeof name === "string");
  const titoModel = options.titoModel ?? stamped ?? "qwen3";
  const roles = options.allowedAppendRoles ?? ["tool", "user", "system", "assistant"];
  const threshold = options.assistantTextThreshold ?? ASSISTANT_TEXT_THRESHOLDS[titoModel] ?? DEFAULT_ASSISTANT_TEXT_THRESHOLD;
  if (!(threshold >= 0 && threshold <= 1)) throw new TypeError(`checkSessionVerifyGate: assistantTextThreshold must be from 0 to 1, got ${String(threshold)}`);
  const specialIds =
    options.specialTokenIds !== undefined
      ? new Set(options.specialTokenIds)
      : QWEN3_VOCABULARY_FAMILIES.includes(titoModel)
        ? new Set(QWEN3_SPECIAL_TOKEN_IDS)
        : null;
  const required = requiredDriverEvents(roles);

  const missingReport: string[] = [];
  const forbidden: string[] = [];
  const missingEvents: string[] = [];
  const withAssistantText: string[] = [];
  let anyAppendTool = false;
  for (const { label, sample, runFailure } of samples) {
    const events = Array.isArray(sample.metadata.driver_events) ? (sample.metadata.driver_events as unknown[]) : [];
    anyAppendTool ||= events.includes("append_tool");
    const missing = required.filter((event) => !events.includes(event));
    if (missing.length > 0) {
      missingEvents.push(`${label} lacks driver events [${missing.join(", ")}]${runFailure === null ? "" : ` (its agent failed: ${runFailure})`}`);
    }
    const mismatches = readMismatches(sample.metadata.tito_session_mismatch);
    if (mismatches === null) {
      missingReport.push(`${label} has no tito_session_mismatch in its metadata: the server could not compute the report, a TITO setup bug, not a pass`);
      continue;
    }
    for (const entry of mismatches) if (FORBIDDEN_MISMATCH_TYPES.includes(entry.type)) forbidden.push(describeEntry(label, entry, sample, specialIds));
    const assistant = mismatches.find((entry) => entry.type === "assistant_text");
    if (assistant !== undefined) withAssistantText.push(describeEntry(label, assistant, sample, specialIds));
  }

  const report = (part: string, problems: string[], headline: string): void => {
    if (problems.length === 0) builder.passed(part);
    else builder.fail(part, `${headline}:${listed(problems, 5)}`);
  };
  report("tito_session_mismatch present", missingReport, `${missingReport.length} of ${samples.length} samples carry no mismatch report`);
  report(
    "forbidden mismatches",
    forbidden,
    `${forbidden.length} forbidden mismatch${forbidden.length === 1 ? "" : "es"} (these types must be 0 for a TITO-correct setup)`,
  );
  report("required driver events", missingEvents, `every sample must hold [${required.join(", ")}] for append roles [${roles.join(", ")}]`);
  if (anyAppendTool) builder.passed("append_tool in batch");
  else builder.fail("append_tool in batch", `no sample of ${samples.length} produced an append_tool event: the model may not be tool-calling`);
  const ratio = withAssistantText.length / samples.length;
  if (ratio <= threshold) builder.passed("assistant_text ratio");
  else {
    builder.fail(
      "assistant_text ratio",
      `assistant_text mismatch ratio ${withAssistantText.length}/${samples.length}=${ratio.toFixed(3)} exceeds the ${titoModel} threshold ${threshold}:` +
        listed(withAssistantText, 3),
    );
  }
  return builder.verdict();
}
