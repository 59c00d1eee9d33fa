// The shape rules every training sample must satisfy, whatever server produced it.
// Bitwise parity alone cannot catch two servers that emit the same broken sample; these rules can.
import type { Tensor } from "../wire/tensor";
import { DEFAULT_PART_DIFFERENCES, VerdictBuilder, type ParityVerdict } from "./parity-verdict";

/** Options of {@link checkTrainingSampleInvariants}. */
export interface TrainingSampleInvariantOptions {
  /**
   * Records (generated turns) the sample was built from. When given, a non-empty `weight_versions` must hold
   * exactly one entry per record (a backend that reports no weight version leaves it empty).
   */
  recordCount?: number;
  /** Offending entries named per failing part (default 10). */
  maxDifferences?: number;
}

/** Replay tensors that carry one row per token transition. */
const REPLAY_FIELDS = ["rollout_routed_experts", "rollout_indexer_topk"] as const;

/**
 * Checks the invariants of a training sample, one named part per rule:
 * - `tokens`: non-negative integers;
 * - `response_length`: a non-negative integer, at most `tokens.length`;
 * - `loss_mask`: null or entries 0 or 1, `response_length` of them;
 * - `rollout_log_probs`: null or finite numbers ≤ 0, `response_length` of them;
 * - `weight_versions`: strings; with `recordCount`, empty or one per record;
 * - `rollout_routed_experts` / `rollout_indexer_topk`: null or a tensor with `tokens.length - 1` rows.
 * A value that is not a sample-like object is a usage failure.
 */
export function checkTrainingSampleInvariants(sample: unknown, options: TrainingSampleInvariantOptions = {}): ParityVerdict {
  const limit = options.maxDifferences ?? DEFAULT_PART_DIFFERENCES;
  const builder = new VerdictBuilder(limit);
  if (sample === null || typeof sample !== "object" || Array.isArray(sample)) {
    builder.usage(
      "sample",
      `expected a training sample (an object with tokens, response_length, ...), got ${sample === null ? "null" : Array.isArray(sample) ? "an array" : typeof sample}`,
    );
    return builder.verdict();
  }
  const fields = sample as Record<string, unknown>;
  const tokens = fields.tokens;
  const responseLength = fields.response_length;

  const check = (part: string, problems: string[]): void => {
    if (problems.length === 0) builder.passed(part);
    else builder.fail(part, `${problems.slice(0, limit).join("; ")}${problems.length > limit ? `; … ${problems.length - limit} more` : ""}`);
  };
  const entries = (name: string, value: unknown, ok: (item: unknown) => boolean, what: string): string[] => {
    if (!Array.isArray(value)) return [`${name} must be an array, got ${describe(value)}`];
    const problems: string[] = [];
    value.forEach((item, i) => {
      if (!ok(item)) problems.push(`${name}[${i}] = ${show(item)} is not ${what}`);
    });
    return problems;
  };
  const lengthProblem = (name: string, value: unknown): string[] =>
    Array.isArray(value) && Number.isSafeInteger(responseLength) && value.length !== responseLength
      ? [`${name} has ${value.length} entries, response_length is ${String(responseLength)}`]
      : [];

  check(
    "tokens",
    entries("tokens", tokens, (id) => Number.isSafeInteger(id) && (id as number) >= 0 && !Object.is(id, -0), "a non-negative integer"),
  );

  const lengthProblems: string[] = [];
  if (!Number.isSafeInteger(responseLength) || (responseLength as number) < 0)
    lengthProblems.push(`response_length must be a non-negative integer, got ${show(responseLength)}`);
  else if (Array.isArray(tokens) && tokens.length < (responseLength as number))
    lengthProblems.push(`tokens has ${tokens.length} entries, fewer than response_length ${String(responseLength)}`);
  check("response_length", lengthProblems);

  const mask = fields.loss_mask;
  check(
    "loss_mask",
    mask === null || mask === undefined ? [] : [...lengthProblem("loss_mask", mask), ...entries("loss_mask", mask, (m) => m === 0 || m === 1, "0 or 1")],
  );

  const logProbs = fields.rollout_log_probs;
  check(
    "rollout_log_probs",
    logProbs === null || logProbs === undefined
      ? []
      : [
          ...lengthProblem("rollout_log_probs", logProbs),
          ...entries("rollout_log_probs", logProbs, (p) => typeof p === "number" && Number.isFinite(p) && p <= 0, "a finite number ≤ 0"),
        ],
  );

  const versions = fields.weight_versions;
  const versionProblems = entries("weight_versions", versions, (v) => typeof v === "string", "a string");
  if (
    versionProblems.length === 0 &&
    options.recordCount !== undefined &&
    Array.isArray(versions) &&
    versions.length > 0 &&
    versions.length !== options.recordCount
  ) {
    versionProblems.push(`weight_versions has ${versions.length} entries, expected one per record (${options.recordCount})`);
  }
  check("weight_versions", versionProblems);

  for (const field of REPLAY_FIELDS) {
    const tensor = fields[field];
    if (tensor === null || tensor === undefined) continue;
    const problems: string[] = [];
    // A shape check, not instanceof: samples decoded in another realm (Jest's sandbox) must pass.
    if (!isTensorLike(tensor)) problems.push(`${field} must be a Tensor or null, got ${describe(tensor)}`);
    else if (Array.isArray(tokens) && (tensor.shape.length === 0 || tensor.shape[0] !== tokens.length - 1)) {
      problems.push(`${field} has shape [${tensor.shape.join(", ")}], expected ${Math.max(tokens.length - 1, 0)} rows (len(tokens) - 1)`);
    }
    check(field, problems);
  }
  return builder.verdict();
}

function isTensorLike(value: unknown): value is Pick<Tensor, "shape"> {
  return value !== null && typeof value === "object" && Array.isArray((value as { shape?: unknown }).shape);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value;
}

function show(value: unknown): string {
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : String(value);
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return describe(value);
}
