// The Sample model (SPEC §4): declared fields and defaults, validate, stripLastOutputTokens with the real
// Qwen3 tokenizer, toDict/fromDict round trips, and the Tensor container it carries.
import { PrefixCacheInfo, SAMPLE_FIELDS, SAMPLE_STATUSES, Sample, SpecInfo, type SampleStatus } from "../../src/wire/sample";
import { DTYPE_BYTES, Tensor } from "../../src/wire/tensor";
import { loadTokenizer } from "../../src/tokenizer/load";
import type { Qwen3Tokenizer } from "../../src/tokenizer/qwen3-tokenizer";

const EXPECTED_DEFAULTS: Record<string, unknown> = {
  group_index: null,
  index: null,
  rollout_id: null,
  prompt: "",
  tokens: [],
  multimodal_inputs: null,
  multimodal_train_inputs: null,
  response: "",
  response_length: 0,
  label: null,
  reward: null,
  loss_mask: null,
  weight_versions: [],
  rollout_log_probs: null,
  rollout_routed_experts: null,
  rollout_indexer_topk: null,
  remove_sample: false,
  teacher_log_probs: null,
  opd_reverse_kl: null,
  status: "pending",
  metadata: {},
  generate_function_path: null,
  train_metadata: null,
  adapter: null,
  reward_spec: null,
  routing_key: null,
  non_generation_time: 0,
  spec_info: { spec_accept_token_num: 0, spec_draft_token_num: 0, spec_verify_ct: 0, completion_token_num: 0 },
  prefix_cache_info: { cached_tokens: 0, total_prompt_tokens: 0 },
};

describe("declared fields and defaults", () => {
  test("FIELDS lists exactly the SPEC §4 fields, in wire order, and a new Sample owns exactly those", () => {
    expect([...Sample.FIELDS]).toEqual(Object.keys(EXPECTED_DEFAULTS));
    expect(Sample.FIELDS).toBe(SAMPLE_FIELDS);
    expect(Object.keys(new Sample()).sort()).toEqual([...Sample.FIELDS].sort());
    expect(SpecInfo.FIELDS).toEqual(["spec_accept_token_num", "spec_draft_token_num", "spec_verify_ct", "completion_token_num"]);
    expect(PrefixCacheInfo.FIELDS).toEqual(["cached_tokens", "total_prompt_tokens"]);
    expect(Tensor.FIELDS).toEqual(["dtype", "shape", "data"]);
  });

  test("defaults match the SPEC table bit for bit", () => {
    const sample = new Sample();
    expect(sample.toDict()).toBeBitwiseEqual(EXPECTED_DEFAULTS);
    expect(sample.spec_info).toBeInstanceOf(SpecInfo);
    expect(sample.prefix_cache_info).toBeInstanceOf(PrefixCacheInfo);
    expect(Object.is(sample.non_generation_time, 0)).toBe(true);
  });

  test("mutable defaults are not shared between instances", () => {
    const a = new Sample();
    const b = new Sample();
    a.tokens.push(1);
    a.weight_versions.push("v1");
    a.metadata.x = 1;
    a.spec_info.spec_verify_ct = 5;
    a.prefix_cache_info.cached_tokens = 5;
    expect(b).toBeBitwiseEqual(new Sample());
  });

  test("the constructor sets given fields and refuses unknown ones by name", () => {
    const sample = new Sample({ index: 3, status: "completed", metadata: { turn: 1 } });
    expect(sample.index).toBe(3);
    expect(sample.status).toBe("completed");
    expect(sample.metadata).toEqual({ turn: 1 });
    expect(() => new Sample({ tokenz: [1] } as never)).toThrow('Sample: unknown field "tokenz"');
    expect(() => new SpecInfo({ spec_verify: 1 } as never)).toThrow('SpecInfo: unknown field "spec_verify"');
  });

  test("SpecInfo and PrefixCacheInfo add field by field", () => {
    const spec = new SpecInfo({ spec_accept_token_num: 1, spec_draft_token_num: 2, spec_verify_ct: 3, completion_token_num: 4 });
    expect(spec.add(new SpecInfo({ spec_accept_token_num: 10, completion_token_num: 40 })).toDict()).toEqual({
      spec_accept_token_num: 11,
      spec_draft_token_num: 2,
      spec_verify_ct: 3,
      completion_token_num: 44,
    });
    expect(
      new PrefixCacheInfo({ cached_tokens: 3, total_prompt_tokens: 10 }).add(new PrefixCacheInfo({ cached_tokens: 4, total_prompt_tokens: 5 })),
    ).toBeBitwiseEqual(new PrefixCacheInfo({ cached_tokens: 7, total_prompt_tokens: 15 }));
  });
});

describe("validate", () => {
  const valid = (): Sample =>
    new Sample({ tokens: [1, 2, 3, 4], response_length: 2, loss_mask: [1, 1], rollout_log_probs: [-0.5, -0.25], status: "completed" });

  test("a consistent sample passes", () => {
    expect(() => valid().validate()).not.toThrow();
    expect(() => new Sample().validate()).not.toThrow();
  });

  test.each([
    ["tokens shorter than response_length", { tokens: [1] }, "tokens has 1 entries, fewer than response_length 2"],
    ["loss_mask", { loss_mask: [1] }, "loss_mask has 1 entries, expected response_length 2"],
    ["rollout_log_probs", { rollout_log_probs: [-1, -2, -3] }, "rollout_log_probs has 3 entries, expected response_length 2"],
    ["teacher_log_probs", { teacher_log_probs: [] }, "teacher_log_probs has 0 entries, expected response_length 2"],
    ["opd_reverse_kl", { opd_reverse_kl: [0] }, "opd_reverse_kl has 1 entries, expected response_length 2"],
    ["a negative response_length", { response_length: -1 }, "response_length must be a non-negative integer, got -1"],
    ["an unknown status", { status: "done" as SampleStatus }, 'unknown status "done"'],
    [
      "a non-I32 replay tensor",
      { rollout_routed_experts: new Tensor("I64", [1], new BigInt64Array(1)) as never },
      "rollout_routed_experts must be an I32 Tensor or null, got a I64 Tensor",
    ],
  ])("refuses %s", (_name, change, message) => {
    const sample = valid();
    Object.assign(sample, change);
    expect(() => sample.validate()).toThrow(`Sample.validate: ${message}`);
  });
});

describe("stripLastOutputTokens", () => {
  let tokenizer: Qwen3Tokenizer;
  beforeAll(async () => {
    tokenizer = await loadTokenizer();
  });

  function generated(): { sample: Sample; promptIds: number[]; outputIds: number[] } {
    const promptIds = tokenizer.encode("<|im_start|>user\nWhat's the weather in Beijing?<|im_end|>\n<|im_start|>assistant\n");
    const outputIds = [...tokenizer.encode("It is sunny and 22°C in Beijing."), 151645];
    const n = outputIds.length;
    const sample = new Sample({
      tokens: [...promptIds, ...outputIds],
      response: tokenizer.decode(outputIds),
      response_length: n,
      loss_mask: outputIds.map(() => 1),
      rollout_log_probs: outputIds.map((_, i) => -i / 128),
      teacher_log_probs: outputIds.map((_, i) => -i / 64),
      opd_reverse_kl: outputIds.map((_, i) => i / 32),
      rollout_routed_experts: new Tensor(
        "I32",
        [promptIds.length + n - 1, 2, 2],
        Int32Array.from({ length: (promptIds.length + n - 1) * 4 }, (_, i) => i),
      ),
      metadata: { opd_student_top_logprobs: outputIds.map((id) => [id]), turn: 1 },
    });
    return { sample, promptIds, outputIds };
  }

  test("removes the last n output tokens from every per-token field and re-decodes the response", () => {
    const { sample, promptIds, outputIds } = generated();
    const before = generated().sample;
    const originalMetadata = sample.metadata;
    const rows = sample.rollout_routed_experts!.shape[0];
    sample.stripLastOutputTokens(2, (ids) => tokenizer.decode(ids));
    const kept = outputIds.slice(0, -2);
    expect(sample.tokens).toEqual([...promptIds, ...kept]);
    expect(sample.response_length).toBe(kept.length);
    expect(sample.response).toBe(tokenizer.decode(kept));
    expect(sample.response).not.toContain("<|im_end|>");
    expect(sample.loss_mask).toEqual(before.loss_mask!.slice(0, -2));
    expect(sample.rollout_log_probs).toBeBitwiseEqual(before.rollout_log_probs!.slice(0, -2));
    expect(sample.teacher_log_probs).toBeBitwiseEqual(before.teacher_log_probs!.slice(0, -2));
    expect(sample.opd_reverse_kl).toBeBitwiseEqual(before.opd_reverse_kl!.slice(0, -2));
    expect(sample.rollout_routed_experts!.shape).toEqual([rows - 2, 2, 2]);
    expect(sample.rollout_routed_experts).toBeBitwiseEqual(before.rollout_routed_experts!.sliceRows(rows - 2));
    expect(sample.metadata.opd_student_top_logprobs).toEqual(kept.map((id) => [id]));
    expect(sample.metadata.turn).toBe(1);
    expect(originalMetadata.opd_student_top_logprobs).toHaveLength(outputIds.length); // shared metadata untouched
    expect(() => sample.validate()).not.toThrow();
  });

  test("n = 0 changes nothing; stripping every output token leaves an empty response", () => {
    const { sample, promptIds, outputIds } = generated();
    sample.stripLastOutputTokens(0, () => "never called");
    expect(sample).toBeBitwiseEqual(generated().sample);
    sample.stripLastOutputTokens(outputIds.length, () => "never called");
    expect(sample.response).toBe("");
    expect(sample.tokens).toEqual(promptIds);
    expect(sample.loss_mask).toEqual([]);
  });

  test("refuses to strip more than the output or a bad n", () => {
    const { sample, outputIds } = generated();
    const decode = (ids: readonly number[]): string => tokenizer.decode(ids);
    expect(() => sample.stripLastOutputTokens(outputIds.length + 1, decode)).toThrow(
      `cannot strip ${outputIds.length + 1} tokens, only ${outputIds.length} output tokens`,
    );
    expect(() => sample.stripLastOutputTokens(-1, decode)).toThrow("n must be a non-negative integer, got -1");
    expect(() => sample.stripLastOutputTokens(1.5, decode)).toThrow("n must be a non-negative integer, got 1.5");
    expect(sample).toBeBitwiseEqual(generated().sample); // nothing changed
  });
});

describe("toDict / fromDict", () => {
  function full(): Sample {
    return new Sample({
      group_index: 0,
      index: 7,
      prompt: [{ role: "user", content: "hi" }],
      tokens: [1, 2, 3],
      response: "x",
      response_length: 1,
      reward: -0,
      loss_mask: [1],
      weight_versions: ["3"],
      rollout_log_probs: [-0.125],
      rollout_indexer_topk: new Tensor("I32", [2, 1], new Int32Array([5, -6])),
      status: "truncated",
      metadata: { lifecycle: { t0: null, t1: 1.5, turn: 1 } },
      spec_info: new SpecInfo({ spec_verify_ct: 2 }),
      prefix_cache_info: new PrefixCacheInfo({ cached_tokens: 1, total_prompt_tokens: 2 }),
      non_generation_time: 0.25,
    });
  }

  test("toDict has snake_case keys and plain nested info; fromDict restores a bitwise-equal Sample", () => {
    const dict = full().toDict();
    expect(Object.keys(dict)).toEqual([...Sample.FIELDS]);
    expect(Object.getPrototypeOf(dict.spec_info)).toBe(Object.prototype);
    expect(dict.prefix_cache_info).toEqual({ cached_tokens: 1, total_prompt_tokens: 2 });
    expect(Sample.fromDict(dict)).toBeBitwiseEqual(full());
  });

  test("fromDict fills missing keys with defaults and accepts plain tensor objects", () => {
    const sample = Sample.fromDict({ tokens: [9], rollout_routed_experts: { dtype: "I32", shape: [1, 2], data: new Int32Array([1, 2]) } });
    expect(sample).toBeBitwiseEqual(new Sample({ tokens: [9], rollout_routed_experts: new Tensor("I32", [1, 2], new Int32Array([1, 2])) }));
    const json = JSON.parse(JSON.stringify({ ...full().toDict(), rollout_indexer_topk: null }));
    expect(Sample.fromDict(json)).toBeBitwiseEqual(Object.assign(full(), { rollout_indexer_topk: null, reward: 0 }));
  });

  test.each([
    [{ tokenz: [] }, 'Sample.fromDict: unknown field "tokenz"'],
    [{ status: "done" }, `Sample.fromDict: status must be one of ${SAMPLE_STATUSES.join(", ")}, got "done"`],
    [{ spec_info: { spec_verify_ct: "2" } }, "spec_info.spec_verify_ct: expected a number, got string"],
    [{ prefix_cache_info: { hits: 1 } }, 'prefix_cache_info: unknown field "hits"'],
    [
      { rollout_routed_experts: new Tensor("F32", [1], new Float32Array(1)) },
      "Sample.fromDict: rollout_routed_experts must be an I32 Tensor, a {dtype, shape, data} object or null, got a F32 Tensor",
    ],
    [{ rollout_indexer_topk: [1, 2] }, "rollout_indexer_topk must be an I32 Tensor"],
  ])("fromDict refuses %p", (dict, message) => {
    expect(() => Sample.fromDict(dict as Record<string, unknown>)).toThrow(message);
  });
});

describe("Tensor", () => {
  test("checks dtype, element count and the typed-array kind", () => {
    expect(() => new Tensor("I32", [2, 3], new Int32Array(5))).toThrow("Tensor: shape [2, 3] needs 6 elements, data has 5");
    expect(() => new Tensor("I32", [2], new Float32Array(2) as never)).toThrow("Tensor: dtype I32 needs a Int32Array");
    expect(() => new Tensor("Q4" as never, [1], new Uint8Array(1) as never)).toThrow('Tensor: unknown dtype "Q4"');
    expect(() => new Tensor("U8", [-1], new Uint8Array(0))).toThrow("Tensor: invalid dimension -1");
    expect(DTYPE_BYTES.I32).toBe(4);
  });

  test("bytes() and sliceRows() are views; clone() owns its memory", () => {
    const tensor = new Tensor("I32", [3, 2], new Int32Array([1, 2, 3, 4, 5, 6]));
    const bytes = tensor.bytes();
    expect(bytes.buffer).toBe(tensor.data.buffer);
    expect(bytes.byteLength).toBe(24);
    const head = tensor.sliceRows(2);
    expect(head.shape).toEqual([2, 2]);
    expect(head.data.buffer).toBe(tensor.data.buffer);
    expect(tensor.sliceRows(10).shape).toEqual([3, 2]);
    const copy = tensor.clone();
    copy.data[0] = 100;
    expect(tensor.data[0]).toBe(1);
    expect(() => new Tensor("F64", [], new Float64Array(1)).sliceRows(0)).toThrow("scalar tensor has no rows");
  });
});
