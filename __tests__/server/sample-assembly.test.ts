// Pure sample assembly (SPEC §7.3) on hand-built records: alignment, trimming, truncation, merge rules.
// Uses the real Qwen3 decoder; expected values are written out by hand.
import {
  assembleTrajectorySample,
  mergeSamplePair,
  mergeTurnSamples,
  SampleAssemblyError,
  truncateTurnSamples,
  turnSamplesFromRecords,
  type SessionRecord,
} from "../../src/server";
import { loadTokenizer } from "../../src/tokenizer";
import { Sample } from "../../src/wire/sample";

let decode: (ids: readonly number[]) => string;
beforeAll(async () => {
  const tokenizer = await loadTokenizer();
  decode = (ids) => tokenizer.decode(ids);
});

function record(prompt: number[], output: number[], extra: { finish?: string; meta?: Record<string, unknown>; t?: number } = {}): SessionRecord {
  return {
    timestamp: extra.t ?? 100,
    request_timestamp: (extra.t ?? 100) - 1,
    method: "POST",
    path: "/v1/chat/completions",
    request: { input_ids: prompt },
    response: {
      choices: [
        {
          finish_reason: extra.finish ?? "stop",
          message: { role: "assistant", content: "" },
          meta_info: {
            output_token_logprobs: output.map((id, i) => [-i / 4, id]),
            completion_tokens: output.length,
            prompt_tokens: prompt.length,
            ...(extra.meta ?? {}),
          },
        },
      ],
    },
    status_code: 200,
  };
}

// Turn 1: prompt [10,11] output [20,21]; observation [30]; turn 2 output [40,41,42].
const r1 = record([10, 11], [20, 21], { t: 100, meta: { weight_version: "a", cached_tokens: 1, e2e_latency: 0.5 } });
const r2 = record([10, 11, 20, 21, 30], [40, 41, 42], { t: 101, meta: { weight_version: "b", cached_tokens: 2 } });
const ACC = [10, 11, 20, 21, 30, 40, 41, 42];

test("two turns merge with zeros over the observation", () => {
  const { sample, emptyReason } = assembleTrajectorySample([r1, r2], ACC, { decode, maxTrimTokens: 0, maxSeqLen: null });
  expect(emptyReason).toBeNull();
  expect(sample!.tokens).toEqual(ACC);
  expect(sample!.response_length).toBe(6);
  expect(sample!.loss_mask).toEqual([1, 1, 0, 1, 1, 1]);
  expect(sample!.rollout_log_probs).toEqual([-0, -0.25, 0, -0, -0.25, -0.5]);
  expect(Object.is(sample!.rollout_log_probs![0], -0)).toBe(true);
  expect(sample!.response).toBe(decode([20, 21]) + decode([30]) + decode([40, 41, 42]));
  expect(sample!.weight_versions).toEqual(["a", "b"]);
  expect(sample!.prefix_cache_info.toDict()).toEqual({ cached_tokens: 3, total_prompt_tokens: 7 });
  expect(sample!.status).toBe("completed");
  expect(sample!.metadata).toEqual({
    lifecycle: [
      { t0: 99.5, t1: 100, turn: 1, req_ts: 99 },
      { t0: null, t1: 101, turn: 2, req_ts: 100, prev_t1: 100 },
    ],
  });
});

test("extra metadata lands on the merged sample; no records is no_records", () => {
  const { sample } = assembleTrajectorySample([r1], [10, 11, 20, 21], { decode, maxTrimTokens: 0, maxSeqLen: null, extraMetadata: { leaf: { node_id: 0 } } });
  expect(sample!.metadata).toEqual({ lifecycle: { t0: 99.5, t1: 100, turn: 1, req_ts: 99 }, leaf: { node_id: 0 } });
  expect(assembleTrajectorySample([], [], { decode, maxTrimTokens: 0, maxSeqLen: null })).toEqual({ sample: null, emptyReason: "no_records" });
});

test("finish reasons map to statuses; merging stops after a non-completed turn", () => {
  const cut = record([10, 11], [20, 21], { finish: "length" });
  const turns = turnSamplesFromRecords([cut, r2], ACC, { decode, maxTrimTokens: 0 });
  expect(turns.map((t) => t.status)).toEqual(["truncated", "completed"]);
  expect(mergeTurnSamples(turns, decode)).toBe(turns[0]);
  expect(turnSamplesFromRecords([record([1], [2], { finish: "abort" })], [1, 2], { decode, maxTrimTokens: 0 })[0].status).toBe("aborted");
  expect(turnSamplesFromRecords([record([1], [2], { finish: "weird" })], [1, 2], { decode, maxTrimTokens: 0 })[0].status).toBe("pending");
});

test("unmatched trailing tokens are trimmed within max_trim_tokens, never on the last turn", () => {
  // Turn 1 emitted [20, 21, 99] but the next turn's prompt re-rendered 99 as 30.
  const t1 = record([10, 11], [20, 21, 99]);
  const ok = turnSamplesFromRecords([t1, r2], ACC, { decode, maxTrimTokens: 1 });
  expect(ok[0].tokens).toEqual([10, 11, 20, 21]);
  expect(ok[0].response_length).toBe(2);
  // mirrors miles/rollout/session/samples/merge.py compute_samples_from_openai_records (the trim_count assertion text,
  // pinned by tests/fast/rollout/session/test_samples.py::TestTITOTrailingTokenTrim)
  expect(() => turnSamplesFromRecords([t1, r2], ACC, { decode, maxTrimTokens: 0 })).toThrow(
    new SampleAssemblyError(
      "trim_count 1 exceeds allowed=0 (is_last=False, max_trim_tokens=0); output_ids[-3:]=[20, 21, 99], accumulated[cursor:cursor+3]=[20, 21, 30]",
    ),
  );
  expect(() => assembleTrajectorySample([r1, record([10, 11, 20, 21, 30], [40, 41, 7])], ACC, { decode, maxTrimTokens: 5, maxSeqLen: null })).toThrow(
    new SampleAssemblyError(
      "trim_count 1 exceeds allowed=0 (is_last=True, max_trim_tokens=5); output_ids[-3:]=[40, 41, 7], accumulated[cursor:cursor+3]=[40, 41, 42]",
    ),
  );
});

test("the walk must consume exactly the accumulated ids", () => {
  expect(() => assembleTrajectorySample([r1, r2], [...ACC, 5], { decode, maxTrimTokens: 0, maxSeqLen: null })).toThrow(
    new SampleAssemblyError("cursor 8 != len(accumulated_token_ids) 9 after processing all 2 records"),
  );
});

test("max_seq_len truncation: exact fit, partial turn, no room, all truncated", () => {
  const fresh = () => turnSamplesFromRecords([r1, r2], ACC, { decode, maxTrimTokens: 0 });
  expect(truncateTurnSamples(fresh(), 8, decode)).toHaveLength(2);
  const partial = truncateTurnSamples(fresh(), 6, decode);
  expect(partial).toHaveLength(2);
  expect(partial[1].tokens).toEqual([10, 11, 20, 21, 30, 40]);
  expect(partial[1].status).toBe("truncated");
  expect(partial[1].rollout_log_probs).toEqual([-0]);
  expect(truncateTurnSamples(fresh(), 5, decode)).toHaveLength(1);
  expect(truncateTurnSamples(fresh(), 2, decode)).toHaveLength(0);
  const merged = assembleTrajectorySample([r1, r2], ACC, { decode, maxTrimTokens: 0, maxSeqLen: 6 }).sample!;
  expect(merged.tokens).toEqual([10, 11, 20, 21, 30, 40]);
  expect(merged.loss_mask).toEqual([1, 1, 0, 1]);
  expect(merged.status).toBe("truncated");
  expect(assembleTrajectorySample([r1, r2], ACC, { decode, maxTrimTokens: 0, maxSeqLen: 1 })).toEqual({ sample: null, emptyReason: "all_truncated" });
});

test("merge refuses broken chains with an assembly error naming the rule", () => {
  const a = new Sample({ tokens: [1, 2], response_length: 1, loss_mask: [1], rollout_log_probs: [0], status: "completed" });
  const notPrefix = new Sample({ tokens: [1, 3, 4, 5], response_length: 1, loss_mask: [1], rollout_log_probs: [0], status: "completed" });
  // Python's AssertionError text alone (sample_utils._merge_sample_pair), which is what its 422 body carries
  expect(() => mergeSamplePair(a, notPrefix, decode)).toThrow(new SampleAssemblyError("b.tokens must start with a.tokens"));
  const noObs = new Sample({ tokens: [1, 2, 3], response_length: 1, loss_mask: [1], rollout_log_probs: [0], status: "completed" });
  expect(() => mergeSamplePair(a, noObs, decode)).toThrow(/obs_len must be > 0, got 0/);
  const otherMeta = new Sample({ tokens: [1, 2, 9, 3], response_length: 1, loss_mask: [1], rollout_log_probs: [0], status: "completed", metadata: { x: 1 } });
  expect(() => mergeSamplePair(a, otherMeta, decode)).toThrow(/metadata mismatch/);
  const otherReward = new Sample({ tokens: [1, 2, 9, 3], response_length: 1, loss_mask: [1], rollout_log_probs: [0], status: "completed", reward: 1 });
  expect(() => mergeSamplePair(a, otherReward, decode)).toThrow(new SampleAssemblyError("reward mismatch: a.reward=None, b.reward=1"));
  const good = new Sample({
    tokens: [1, 2, 9, 3],
    response_length: 1,
    loss_mask: [1],
    rollout_log_probs: [0.5],
    status: "completed",
    teacher_log_probs: [0.25],
  });
  const merged = mergeSamplePair(a, good, decode);
  expect(merged.loss_mask).toEqual([1, 0, 1]);
  expect(merged.teacher_log_probs).toEqual([0, 0, 0.25]);
  expect(merged.opd_reverse_kl).toBeNull();
  expect(a.tokens).toEqual([1, 2]);
});

test("malformed records are assembly errors", () => {
  const noIds = { ...r1, request: {} };
  expect(() => turnSamplesFromRecords([noIds], null, { decode, maxTrimTokens: 0 })).toThrow(
    new SampleAssemblyError("input_ids not found in request \u2014 the session server should populate it"),
  );
  const noMeta = { ...r1, response: { choices: [{}] } };
  expect(() => turnSamplesFromRecords([noMeta], null, { decode, maxTrimTokens: 0 })).toThrow(/output_token_logprobs missing/);
});
