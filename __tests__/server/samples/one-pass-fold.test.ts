// The one-pass assembly (assembleTrajectorySample, with and without a PathPrefixMemo) against the pairwise reference
// pipeline turnSamplesFromRecords -> truncateTurnSamples -> mergeTurnSamples on random and adversarial records.
import fc from "fast-check";
import {
  applyAdditionR3,
  assembleTrajectorySample,
  cloneJson,
  mergeTurnSamples,
  PathPrefixMemo,
  SampleAssemblyError,
  truncateTurnSamples,
  turnSamplesFromRecords,
  type SessionRecord,
  type TrajectoryAssembly,
  type TrajectoryAssemblyOptions,
} from "../../../src/server";
import { asAssemblyError } from "../../../src/server/samples/assembly-error";
import { loadTokenizer } from "../../../src/tokenizer";
import { pyFloat } from "../../../src/wire/py-json-values";
import type { Sample } from "../../../src/wire/sample";
import { expectEqual, expectSame } from "../../support/fast-expect";

let decode: (ids: readonly number[]) => string;
beforeAll(async () => {
  const tokenizer = await loadTokenizer();
  decode = (ids) => tokenizer.decode(ids);
});

/**
 * The assembly as it was written before the one-pass fold: per-turn Samples, max_seq_len over them, then the
 * pairwise left fold (miles/rollout/session/samples/merge.py: compute_samples_from_openai_records,
 * truncate_samples_by_total_tokens, then sample_utils.merge_samples; additional R3 after the merge).
 */
function referenceAssembly(records: readonly SessionRecord[], accumulated: readonly number[] | null, options: TrajectoryAssemblyOptions): TrajectoryAssembly {
  if (records.length === 0) return { sample: null, emptyReason: "no_records" };
  return asAssemblyError(() => {
    let turns = turnSamplesFromRecords(records, accumulated, options);
    if (options.maxSeqLen !== null) turns = truncateTurnSamples(turns, options.maxSeqLen, options.decode);
    if (turns.length === 0) return { sample: null, emptyReason: "all_truncated" as const };
    const sample = mergeTurnSamples(turns, options.decode);
    if (options.replay?.additionR3) applyAdditionR3(sample, records, options.replay);
    if (options.extraMetadata) {
      for (const [key, value] of Object.entries(options.extraMetadata)) sample.metadata[key] = cloneJson(value);
    }
    return { sample, emptyReason: null };
  });
}

type Outcome = { assembly: TrajectoryAssembly } | { error: string; assemblyError: boolean };

function outcome(run: () => TrajectoryAssembly): Outcome {
  try {
    return { assembly: run() };
  } catch (error) {
    return { error: String(error), assemblyError: error instanceof SampleAssemblyError };
  }
}

function expectSameOutcome(actual: Outcome, expected: Outcome): void {
  if ("error" in expected) {
    expectEqual(actual, expected);
    return;
  }
  expectSame("assembly" in actual, true);
  const got = (actual as { assembly: TrajectoryAssembly }).assembly;
  expectSame(got.emptyReason, expected.assembly.emptyReason);
  if (expected.assembly.sample === null) expect(got.sample).toBeNull();
  else expect(got.sample).toBeBitwiseEqual(expected.assembly.sample);
}

const LAYERS = 1;

/** Replay rows of a turn: one layer, top-1, `rows` rows (seeded so every turn's tensor differs). */
function rowsBase64(rows: number, seed: number): string {
  const values = Int32Array.from({ length: Math.max(rows, 0) }, (_, i) => i * 3 + seed);
  return Buffer.from(values.buffer).toString("base64");
}

/** How one turn of a generated trajectory goes wrong (or not). */
interface TurnPlan {
  output: number[];
  /** Observation tokens the next prompt adds (0: a prompt with no observation, refused by the merge). */
  observation: number;
  /** How many of this turn's last output tokens the next prompt re-renders differently (a trim, or a refusal). */
  rerendered: number;
  /** Flip one earlier token of the next prompt (the chain breaks). */
  breakChain: boolean;
  finish: string | null;
  logProbKind: "plain" | "negzero" | "pyfloat";
  weightVersion: boolean;
  cached: number | null;
  latency: number | null;
  routed: "none" | "full" | "short" | "bad";
  indexer: "none" | "full" | "nolayers";
  malformed: "none" | "noIds" | "floatId" | "badPair" | "noMeta" | "hole";
}

const turnPlan: fc.Arbitrary<TurnPlan> = fc.record({
  // (an empty output is rare: the real decoder refuses to decode no ids, so the turn fails in both paths)
  output: fc.oneof(
    { weight: 100, arbitrary: fc.array(fc.integer({ min: 0, max: 2000 }), { minLength: 1, maxLength: 5 }) },
    { weight: 1, arbitrary: fc.constant<number[]>([]) },
  ),
  observation: fc.oneof({ weight: 20, arbitrary: fc.integer({ min: 1, max: 3 }) }, { weight: 1, arbitrary: fc.constant(0) }),
  rerendered: fc.oneof({ weight: 12, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.integer({ min: 1, max: 2 }) }),
  breakChain: fc.oneof({ weight: 30, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  finish: fc.oneof(
    { weight: 30, arbitrary: fc.constantFrom("stop", "tool_calls") },
    { weight: 2, arbitrary: fc.constantFrom("length", "abort", "weird", "constructor", "__proto__") },
    { weight: 1, arbitrary: fc.constant(null) },
  ),
  logProbKind: fc.constantFrom("plain", "negzero", "pyfloat"),
  weightVersion: fc.boolean(),
  cached: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 9 }), fc.constantFrom(0.5, -0)),
  latency: fc.oneof(fc.constant(null), fc.constantFrom(0.25, 1)),
  routed: fc.oneof(
    { weight: 30, arbitrary: fc.constant<"none">("none") },
    { weight: 15, arbitrary: fc.constant<"full">("full") },
    {
      weight: 1,
      arbitrary: fc.constantFrom<"short" | "bad">("short", "bad"),
    },
  ),
  indexer: fc.oneof(
    { weight: 30, arbitrary: fc.constant<"none">("none") },
    { weight: 8, arbitrary: fc.constant<"full">("full") },
    {
      weight: 1,
      arbitrary: fc.constant<"nolayers">("nolayers"),
    },
  ),
  malformed: fc.oneof(
    { weight: 100, arbitrary: fc.constant<"none">("none") },
    {
      weight: 1,
      arbitrary: fc.constantFrom<TurnPlan["malformed"]>("noIds", "floatId", "badPair", "noMeta", "hole"),
    },
  ),
});

interface Trajectory {
  records: SessionRecord[];
  /** The tokens a TITO session would hold after the last turn. */
  accumulated: number[];
}

/** Builds records turn by turn; each prompt re-renders the previous turn's tokens, then adds an observation. */
function buildTrajectory(prompt0: number[], plans: TurnPlan[], additionR3: boolean): Trajectory {
  const records: SessionRecord[] = [];
  let prompt = prompt0;
  let routedStart = 0;
  let accumulated: number[] = [];
  plans.forEach((plan, k) => {
    const tokens = [...prompt, ...plan.output];
    const rows = tokens.length - 1;
    const meta: Record<string, unknown> = {
      output_token_logprobs: plan.output.map((id, i) => {
        const value = plan.logProbKind === "negzero" && i === 0 ? -0 : -(i + k) / 8;
        return [plan.logProbKind === "pyfloat" ? pyFloat(-(i + 1)) : value, id];
      }),
      prompt_tokens: prompt.length,
    };
    if (plan.weightVersion) meta.weight_version = `w${k}`;
    if (plan.cached !== null) meta.cached_tokens = plan.cached;
    if (plan.latency !== null) meta.e2e_latency = plan.latency;
    const request: Record<string, unknown> = { input_ids: prompt };
    if (plan.routed !== "none") {
      if (additionR3) {
        request.routed_experts_start_len = routedStart;
        meta.routed_experts = rowsBase64(rows - routedStart, k);
        routedStart = Math.max(rows, routedStart);
      } else {
        const routedRows = plan.routed === "short" ? Math.max(rows - 3, 0) : rows;
        meta.routed_experts = plan.routed === "bad" ? "abc" : rowsBase64(routedRows, k);
      }
    }
    if (plan.indexer !== "none") {
      meta.indexer_topk = rowsBase64(rows * 2, 100 + k);
      if (plan.indexer === "full") meta.indexer_topk_num_layers = 2;
    }
    const choice: Record<string, unknown> = { finish_reason: plan.finish, message: { role: "assistant", content: "" }, meta_info: meta };
    switch (plan.malformed) {
      case "noIds":
        delete request.input_ids;
        break;
      case "floatId":
        request.input_ids = [...prompt, 1.5];
        break;
      case "badPair":
        meta.output_token_logprobs = [[null, 3]];
        break;
      case "noMeta":
        delete choice.meta_info;
        break;
      case "hole": {
        // A holed pair list: the hole is skipped, as forEach skips it.
        const pairs = [...(meta.output_token_logprobs as unknown[])];
        pairs.length += 1;
        pairs.push([-1, 7]);
        meta.output_token_logprobs = pairs;
        break;
      }
      case "none":
        break;
    }
    records.push({
      timestamp: 1000 + k * 1.5,
      request_timestamp: 999 + k,
      method: "POST",
      path: "/v1/chat/completions",
      request,
      response: { choices: [choice] },
      status_code: 200,
    });
    accumulated = tokens;
    // The next prompt: this turn's tokens, its last `rerendered` outputs re-rendered, then the observation.
    const kept = tokens.slice(0, tokens.length - Math.min(plan.rerendered, plan.output.length));
    const rerendered = Array.from({ length: Math.min(plan.rerendered, plan.output.length) }, (_, i) => 3000 + i);
    const next = [...kept, ...rerendered, ...Array.from({ length: plan.observation }, (_, i) => 198 + i)];
    if (plan.breakChain && next.length > 0) next[Math.floor(next.length / 2)] += 1;
    prompt = next;
  });
  return { records, accumulated };
}

const trajectory = fc.record({
  prompt0: fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 4 }),
  plans: fc.oneof({ weight: 30, arbitrary: fc.array(turnPlan, { minLength: 1, maxLength: 7 }) }, { weight: 1, arbitrary: fc.constant<TurnPlan[]>([]) }),
  additionR3: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  accumulatedKind: fc.oneof(
    { weight: 20, arbitrary: fc.constant("exact") },
    { weight: 3, arbitrary: fc.constant("null") },
    { weight: 1, arbitrary: fc.constantFrom("extra", "short") },
  ),
  maxSeqLen: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: fc.integer({ min: 0, max: 40 }) }),
  maxTrimTokens: fc.nat(3),
  extra: fc.boolean(),
  numLayers: fc.oneof({ weight: 30, arbitrary: fc.constant<number | null>(LAYERS) }, { weight: 1, arbitrary: fc.constant(null) }),
});

function accumulatedFor(kind: string, accumulated: number[]): number[] | null {
  if (kind === "null") return null;
  if (kind === "extra") return [...accumulated, 5];
  if (kind === "short") return accumulated.slice(0, -1);
  return accumulated;
}

test("the one-pass assembly equals the pairwise reference on random trajectories (samples, empty reasons, errors)", () => {
  fc.assert(
    fc.property(trajectory, (t) => {
      const { records, accumulated } = buildTrajectory(t.prompt0, t.plans, t.additionR3);
      const options: TrajectoryAssemblyOptions = {
        decode,
        maxTrimTokens: t.maxTrimTokens,
        maxSeqLen: t.maxSeqLen,
        replay: { numLayers: t.numLayers, additionR3: t.additionR3 },
        extraMetadata: t.extra ? { leaf: { node_id: 3, path: [0, 1] } } : undefined,
      };
      const ids = accumulatedFor(t.accumulatedKind, accumulated);
      const expected = outcome(() => referenceAssembly(records, ids, options));
      expectSameOutcome(
        outcome(() => assembleTrajectorySample(records, ids, options)),
        expected,
      );
      // Through a memo (the v2 path), alone and after the trajectory's own prefixes were assembled through it.
      if (t.maxSeqLen === null) {
        expectSameOutcome(
          outcome(() => assembleTrajectorySample(records, ids, { ...options, prefixMemo: new PathPrefixMemo() })),
          expected,
        );
        const memo = new PathPrefixMemo();
        for (let end = 1; end < records.length; end++) {
          outcome(() => assembleTrajectorySample(records.slice(0, end), ids, { ...options, prefixMemo: memo }));
        }
        expectSameOutcome(
          outcome(() => assembleTrajectorySample(records, ids, { ...options, prefixMemo: memo })),
          expected,
        );
      }
    }),
    { numRuns: 2000, seed: 29 },
  );
});

/** A clean trajectory of `n` turns (prompt [1, 2], outputs of 3 tokens, 2 observation tokens between turns). */
function cleanTrajectory(n: number, finish: (k: number) => string = () => "stop"): Trajectory {
  const plans: TurnPlan[] = Array.from({ length: n }, (_, k) => ({
    output: [100 + k, 200 + k, 300 + k],
    observation: 2,
    rerendered: 0,
    breakChain: false,
    finish: finish(k),
    logProbKind: "plain",
    weightVersion: true,
    cached: k,
    latency: 0.25,
    routed: "none",
    indexer: "none",
    malformed: "none",
  }));
  return buildTrajectory([1, 2], plans, false);
}

function bothWays(records: SessionRecord[], ids: number[] | null, options: Partial<TrajectoryAssemblyOptions> = {}): { actual: Outcome; expected: Outcome } {
  const full: TrajectoryAssemblyOptions = { decode, maxTrimTokens: 0, maxSeqLen: null, ...options };
  return { actual: outcome(() => assembleTrajectorySample(records, ids, full)), expected: outcome(() => referenceAssembly(records, ids, full)) };
}

test("edge cases: one turn keeps its lone lifecycle segment, several give the list", () => {
  const one = cleanTrajectory(1);
  const single = bothWays(one.records, one.accumulated);
  expectSameOutcome(single.actual, single.expected);
  const sample = (single.actual as { assembly: TrajectoryAssembly }).assembly.sample as Sample;
  expect(sample.metadata.lifecycle).toEqual({ t0: 999.75, t1: 1000, turn: 1, req_ts: 999 });
  const three = cleanTrajectory(3);
  const merged = bothWays(three.records, three.accumulated);
  expectSameOutcome(merged.actual, merged.expected);
  expect(((merged.actual as { assembly: TrajectoryAssembly }).assembly.sample as Sample).metadata.lifecycle).toHaveLength(3);
});

test("edge cases: no records, all truncated, truncation inside a turn, a stop after a non-completed turn", () => {
  expect(assembleTrajectorySample([], [], { decode, maxTrimTokens: 0, maxSeqLen: null })).toEqual({ sample: null, emptyReason: "no_records" });
  const t = cleanTrajectory(4);
  for (const maxSeqLen of [0, 2, 3, 5, 6, 9, 10, 12, 13, 100]) {
    const { actual, expected } = bothWays(t.records, t.accumulated, { maxSeqLen });
    expectSameOutcome(actual, expected);
  }
  expect(assembleTrajectorySample(t.records, t.accumulated, { decode, maxTrimTokens: 0, maxSeqLen: 2 })).toEqual({
    sample: null,
    emptyReason: "all_truncated",
  });
  const cut = cleanTrajectory(4, (k) => (k === 1 ? "length" : "stop"));
  const stopped = bothWays(cut.records, cut.accumulated);
  expectSameOutcome(stopped.actual, stopped.expected);
  expect(((stopped.actual as { assembly: TrajectoryAssembly }).assembly.sample as Sample).status).toBe("truncated");
});

test("a finish reason naming an Object.prototype member sets no status, as Python's match on the string", () => {
  // miles/rollout/session/samples/merge.py, _compute_sample_from_openai_record: only stop/tool_calls/length/abort set one
  for (const finish of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
    const t = cleanTrajectory(1, () => finish);
    expect(assembleTrajectorySample(t.records, t.accumulated, { decode, maxTrimTokens: 0, maxSeqLen: null }).sample!.status).toBe("pending");
    expect(turnSamplesFromRecords(t.records, t.accumulated, { decode, maxTrimTokens: 0 })[0].status).toBe("pending");
  }
});

test("the assembled arrays belong to the sample: nothing is shared with the records or between memoized leaves", () => {
  const t = cleanTrajectory(3);
  const memo = new PathPrefixMemo();
  const shorter = assembleTrajectorySample(t.records.slice(0, 2), null, { decode, maxTrimTokens: 0, maxSeqLen: null, prefixMemo: memo }).sample!;
  const full = assembleTrajectorySample(t.records, null, { decode, maxTrimTokens: 0, maxSeqLen: null, prefixMemo: memo }).sample!;
  const single = assembleTrajectorySample(t.records.slice(0, 1), null, { decode, maxTrimTokens: 0, maxSeqLen: null }).sample!;
  const recordArrays = t.records.flatMap((record) => [
    record.request.input_ids,
    (record.response as { choices: { meta_info: unknown }[] }).choices[0].meta_info,
  ]);
  for (const sample of [shorter, full, single]) {
    for (const value of [sample.tokens, sample.loss_mask, sample.rollout_log_probs, sample.weight_versions, sample.metadata]) {
      expect(recordArrays).not.toContain(value);
    }
  }
  expect(full.tokens).not.toBe(shorter.tokens);
  expect(full.metadata.lifecycle).not.toBe(shorter.metadata.lifecycle);
});

test("replay tensors: a memoized prefix that ends a sample hands each sample its own copy", () => {
  const plans: TurnPlan[] = [0, 1, 2].map((k) => ({
    output: [100 + k, 200 + k],
    observation: 1,
    rerendered: 0,
    breakChain: false,
    finish: k === 0 ? "length" : "stop",
    logProbKind: "plain",
    weightVersion: false,
    cached: null,
    latency: null,
    routed: "full",
    indexer: "none",
    malformed: "none",
  }));
  const { records } = buildTrajectory([1, 2], plans, false);
  const options: TrajectoryAssemblyOptions = { decode, maxTrimTokens: 0, maxSeqLen: null, replay: { numLayers: LAYERS, additionR3: false } };
  const memo = new PathPrefixMemo();
  const a = assembleTrajectorySample(records.slice(0, 2), null, { ...options, prefixMemo: memo }).sample!;
  const b = assembleTrajectorySample(records, null, { ...options, prefixMemo: memo }).sample!;
  expect(a.status).toBe("truncated");
  expect(b).toBeBitwiseEqual(a);
  expect(b.rollout_routed_experts).not.toBe(a.rollout_routed_experts);
  expect(b.rollout_routed_experts!.data.buffer).not.toBe(a.rollout_routed_experts!.data.buffer);
  expect(b).toBeBitwiseEqual(referenceAssembly(records, null, options).sample!);
});
