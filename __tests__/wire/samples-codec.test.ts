// Samples codec behaviour (SPEC §7.4): round trips, overlay semantics, the defaults guard and encode refusals.
// Every payload here is real safetensors bytes produced by encodeSamples and read back by decodeSamplesReply.
import {
  InputSampleDefaultsError,
  SamplesCodecError,
  WIRE_FIELDS_V1,
  WIRE_FIELDS_V2,
  decodeSamplesReply,
  encodeSamples,
  readSafetensors,
} from "../../src/wire";
import { PrefixCacheInfo, Sample, SpecInfo, type JsonObject } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";
import { computedSample, mutatePayload } from "./wire-test-helpers";

const V1 = { fields: WIRE_FIELDS_V1 };
const V2 = { fields: WIRE_FIELDS_V2 };

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}

describe("field lists", () => {
  test("v1 carries the six JSON fields, v2 adds reward", () => {
    expect([...WIRE_FIELDS_V1]).toEqual(["response", "response_length", "status", "weight_versions", "prefix_cache_info", "metadata"]);
    expect([...WIRE_FIELDS_V2]).toEqual([...WIRE_FIELDS_V1, "reward"]);
  });

  test("an unknown field name is refused on both sides", () => {
    expect(thrown(() => encodeSamples([], {}, { fields: ["tokens", "bogus"] })).message).toMatch(/unknown wire field "bogus"/);
    const payload = encodeSamples([], {}, V1);
    expect(thrown(() => decodeSamplesReply(payload, new Sample(), { fields: ["label"] })).message).toMatch(/unknown wire field "label"/);
  });
});

describe("round trip", () => {
  test("overlays computed fields and keeps the input sample's own fields, never mutating it", () => {
    const input = new Sample({
      group_index: 7,
      index: 3,
      prompt: [{ role: "user", content: "hi" }],
      label: "lbl",
      reward: 1.5,
      metadata: { task: "t", lifecycle: "stale" },
      routing_key: "rk",
      train_metadata: { loss: "ppo" },
    });
    const reply = decodeSamplesReply(encodeSamples([computedSample()], { max_trim_tokens: 1 }, V1), input, V1);
    expect(reply.empty_reason).toBeNull();
    expect(reply.session_metadata).toEqual({ max_trim_tokens: 1 });
    const [out] = reply.samples;
    expect(out).toBeInstanceOf(Sample);
    expect(out.tokens).toEqual([1, 2, 3, 10, 11]);
    expect(Array.isArray(out.tokens)).toBe(true);
    expect(out.rollout_log_probs).toEqual([-0.5, -0.1234567891234567]);
    expect(out.loss_mask).toEqual([1, 1]);
    expect(out.response).toBe("[10][11]");
    expect(out.response_length).toBe(2);
    expect(out.status).toBe("completed");
    expect(out.weight_versions).toEqual(["w1", "w2"]);
    expect(out.prefix_cache_info).toBeInstanceOf(PrefixCacheInfo);
    expect(out.prefix_cache_info.toDict()).toEqual({ cached_tokens: 2, total_prompt_tokens: 3 });
    expect(out.rollout_routed_experts).toBeInstanceOf(Tensor);
    expect(out.rollout_routed_experts?.dtype).toBe("I32");
    expect(out.rollout_routed_experts?.shape).toEqual([4, 3, 2]);
    expect([...(out.rollout_routed_experts?.data ?? [])]).toEqual(Array.from({ length: 24 }, (_, i) => i));
    expect(out.rollout_indexer_topk).toBeNull();
    expect(out.group_index).toBe(7);
    expect(out.index).toBe(3);
    expect(out.prompt).toEqual([{ role: "user", content: "hi" }]);
    expect(out.label).toBe("lbl");
    expect(out.reward).toBe(1.5);
    expect(out.routing_key).toBe("rk");
    expect(out.train_metadata).toEqual({ loss: "ppo" });
    expect(out.metadata).toEqual({
      task: "t",
      lifecycle: [{ t0: 1.0, t1: 2.0, turn: 1 }],
      messages: [{ role: "assistant", content: "done" }],
    });
    expect(input.tokens).toEqual([]);
    expect(input.metadata).toEqual({ task: "t", lifecycle: "stale" });
    (out.prompt as Array<Record<string, string>>)[0].content = "changed";
    expect(input.prompt).toEqual([{ role: "user", content: "hi" }]);
  });

  test("decodes a Node Buffer payload (as an HTTP client hands it over)", () => {
    const payload = Buffer.from(encodeSamples([computedSample()], {}, V1));
    expect(decodeSamplesReply(payload, new Sample(), V1).samples[0].tokens).toEqual([1, 2, 3, 10, 11]);
  });

  test("a two-sample reply keeps per-sample tensors and metadata apart", () => {
    const a = computedSample({ metadata: { server_only: { sample: "a" } } });
    const b = computedSample({
      tokens: [1, 2, 3, 10, 11, 20, 21, 30],
      rollout_routed_experts: new Tensor(
        "I32",
        [7, 3, 2],
        Int32Array.from({ length: 42 }, (_, i) => 100 + i),
      ),
      rollout_log_probs: [-1.0, -2.0],
      metadata: { server_only: { sample: "b" } },
    });
    const input = new Sample({ metadata: { input_only: { value: 1 } } });
    const payload = encodeSamples([a, b], {}, V1);
    expect([...readSafetensors(payload).tensors.keys()].sort()).toEqual([
      "_samples_meta",
      "loss_mask.0",
      "loss_mask.1",
      "rollout_log_probs.0",
      "rollout_log_probs.1",
      "rollout_routed_experts.0",
      "rollout_routed_experts.1",
      "tokens.0",
      "tokens.1",
    ]);
    const [outA, outB] = decodeSamplesReply(payload, input, V1).samples;
    expect(outA.tokens).toEqual(a.tokens);
    expect(outB.tokens).toEqual(b.tokens);
    expect([...(outA.rollout_routed_experts?.data ?? [])]).toEqual([...(a.rollout_routed_experts?.data ?? [])]);
    expect(outB.rollout_routed_experts?.shape).toEqual([7, 3, 2]);
    expect([...(outB.rollout_routed_experts?.data ?? [])]).toEqual([...(b.rollout_routed_experts?.data ?? [])]);
    expect(outB.rollout_log_probs).toEqual([-1.0, -2.0]);
    expect(outA.metadata).toEqual({ input_only: { value: 1 }, server_only: { sample: "a" } });
    expect(outB.metadata).toEqual({ input_only: { value: 1 }, server_only: { sample: "b" } });
    (outA.metadata.input_only as { value: number }).value = 2;
    expect(outB.metadata.input_only).toEqual({ value: 1 });
    expect(input.metadata).toEqual({ input_only: { value: 1 } });
  });

  test("an empty reply keeps empty_reason and skips the defaults guard", () => {
    const evolved = new Sample({ weight_versions: ["stale"] });
    for (const reason of ["no_records", "all_truncated"] as const) {
      const reply = decodeSamplesReply(encodeSamples([], { max_trim_tokens: 0 }, { emptyReason: reason, fields: WIRE_FIELDS_V1 }), evolved, V1);
      expect(reply.samples).toEqual([]);
      expect(reply.empty_reason).toBe(reason);
      expect(reply.session_metadata).toEqual({ max_trim_tokens: 0 });
    }
  });

  test("a zero-size tensor is distinct from a null field", () => {
    const sample = computedSample({ rollout_routed_experts: new Tensor("I32", [0, 3, 2], new Int32Array(0)), rollout_indexer_topk: null });
    const [out] = decodeSamplesReply(encodeSamples([sample], {}, V1), new Sample(), V1).samples;
    expect(out.rollout_routed_experts).toBeInstanceOf(Tensor);
    expect(out.rollout_routed_experts?.shape).toEqual([0, 3, 2]);
    expect(out.rollout_indexer_topk).toBeNull();
  });

  test("null tensor fields: listed in nulls, decoded to fresh empty values ([] for tokens, null otherwise)", () => {
    const sample = computedSample({ loss_mask: null, rollout_log_probs: null, rollout_routed_experts: null });
    const payload = encodeSamples([sample], {}, V1);
    expect([...readSafetensors(payload).tensors.keys()].sort()).toEqual(["_samples_meta", "tokens.0"]);
    const input = new Sample({ loss_mask: [9], rollout_log_probs: [0.5] });
    const [out] = decodeSamplesReply(payload, input, V1).samples;
    expect(out.loss_mask).toBeNull();
    expect(out.rollout_log_probs).toBeNull();
    expect(out.rollout_routed_experts).toBeNull();
  });

  test("null tokens decode to a fresh [] per sample, never one shared array", () => {
    const payload = mutatePayload(encodeSamples([computedSample(), computedSample()], {}, V1), (meta, tensors) => {
      meta.samples.forEach((wire, index) => {
        (wire.nulls as string[]).push("tokens");
        tensors.delete(`tokens.${index}`);
      });
    });
    const input = new Sample();
    const [a, b] = decodeSamplesReply(payload, input, V1).samples;
    expect(a.tokens).toEqual([]);
    expect(b.tokens).toEqual([]);
    expect(a.tokens).not.toBe(b.tokens);
    expect(a.tokens).not.toBe(input.tokens);
  });

  test("a non-contiguous (sliced / strided) replay tensor round-trips with correct values", () => {
    // Sliced: rows 2..5 of a larger routed tensor, a view whose data starts 4 bytes past an 8-byte boundary.
    const big = Int32Array.from({ length: 9 * 2 * 2 }, (_, i) => i * 3 - 50);
    const sliced = new Tensor("I32", [4, 2, 2], big.subarray(2 * 4 + 1, 2 * 4 + 1 + 16));
    expect(sliced.data.byteOffset % 8).toBe(4);
    // Strided: every other row of an (8, 3, 2) tensor, gathered into a view on a shared scratch buffer.
    const source = Int32Array.from({ length: 48 }, (_, i) => i);
    const scratch = new Int32Array(64);
    const everyOtherRow = scratch.subarray(7, 7 + 24);
    for (let row = 0; row < 4; row++) everyOtherRow.set(source.subarray(row * 2 * 6, row * 2 * 6 + 6), row * 6);
    const strided = new Tensor("I32", [4, 3, 2], everyOtherRow);

    const sample = computedSample({ rollout_routed_experts: sliced, rollout_indexer_topk: strided });
    const [out] = decodeSamplesReply(encodeSamples([sample], {}, V1), new Sample(), V1).samples;
    expect(out.rollout_routed_experts?.shape).toEqual([4, 2, 2]);
    expect([...(out.rollout_routed_experts?.data ?? [])]).toEqual([...big.subarray(9, 25)]);
    expect(out.rollout_indexer_topk?.shape).toEqual([4, 3, 2]);
    const expectedRows = [0, 2, 4, 6].flatMap((row) => [...source.subarray(row * 6, row * 6 + 6)]);
    expect([...(out.rollout_indexer_topk?.data ?? [])]).toEqual(expectedRows);
  });

  test("JSON values keep exact bits: -0, tiny floats and large safe integers", () => {
    const sample = computedSample({ reward: -0, metadata: { z: -0, tiny: 5e-324, big: 2 ** 53 - 1, nested: [{ "10": 1, a: "é\u0000" }] } });
    const [out] = decodeSamplesReply(encodeSamples([sample], {}, V2), new Sample(), V2).samples;
    expect(Object.is(out.reward, -0)).toBe(true);
    expect(Object.is(out.metadata.z, -0)).toBe(true);
    expect(out.metadata.tiny).toBe(5e-324);
    expect(out.metadata.big).toBe(2 ** 53 - 1);
    expect(out.metadata.nested).toEqual([{ "10": 1, a: "é\u0000" }]);
  });

  test("tokens beyond int32 and negative tokens survive the int64 wire", () => {
    const tokens = [0, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 - 1, -(2 ** 53 - 1), 123_456_789_012];
    const sample = computedSample({ tokens, response_length: 0, loss_mask: [], rollout_log_probs: [] });
    const [out] = decodeSamplesReply(encodeSamples([sample], {}, V1), new Sample(), V1).samples;
    expect(out.tokens).toEqual(tokens);
    const wire = readSafetensors(encodeSamples([sample], {}, V1)).tensors.get("tokens.0") as Tensor<"I64">;
    expect([...wire.data]).toEqual(tokens.map(BigInt));
  });

  test("log-probs keep NaN, infinities and -0 bit for bit", () => {
    const sample = computedSample({ response_length: 3, loss_mask: [0, 1, 1], rollout_log_probs: [Number.NaN, -Infinity, -0] });
    const [out] = decodeSamplesReply(encodeSamples([sample], {}, V1), new Sample(), V1).samples;
    expect(out.rollout_log_probs?.[0]).toBeNaN();
    expect(out.rollout_log_probs?.[1]).toBe(-Infinity);
    expect(Object.is(out.rollout_log_probs?.[2], -0)).toBe(true);
  });
});

describe("objects of another realm (Jest's sandbox vs Node's own fetch)", () => {
  test("metadata parsed by Node's Response.json() encodes and decodes like local JSON", async () => {
    const foreign = (await new Response('{"agent":{"turns":[1,-2.5,{"k":null}]},"tag":"x"}').json()) as JsonObject;
    expect(Object.getPrototypeOf(foreign)).not.toBe(Object.prototype); // really another realm here
    const local = { agent: { turns: [1, -2.5, { k: null }] }, tag: "x" };
    const fromForeign = encodeSamples([computedSample({ metadata: foreign })], foreign, V1);
    expect(Buffer.from(fromForeign).equals(Buffer.from(encodeSamples([computedSample({ metadata: local })], local, V1)))).toBe(true);
    expect(decodeSamplesReply(fromForeign, new Sample(), V1).session_metadata).toEqual(local);
  });

  test("the overlay's deep copy rebuilds a foreign input metadata in this realm", async () => {
    const foreign = (await new Response('{"task":{"id":7}}').json()) as JsonObject;
    const [out] = decodeSamplesReply(encodeSamples([computedSample()], {}, V1), new Sample({ metadata: foreign }), V1).samples;
    expect(Object.getPrototypeOf(out.metadata.task)).toBe(Object.prototype);
    expect(out.metadata.task).toEqual({ id: 7 });
    expect(out.metadata.task).not.toBe(foreign.task);
  });

  test("class instances are still refused", () => {
    class Meta {
      a = 1;
    }
    expect(thrown(() => encodeSamples([], { m: new Meta() as never }, V1)).message).toMatch(
      /session_metadata\.m: \[object Object\] is not a plain JSON object/,
    );
  });
});

describe("v2 reward", () => {
  test("a v2 reply overlays the server's reward", () => {
    const payload = encodeSamples([computedSample({ reward: { score: 0.75 } })], {}, V2);
    const [out] = decodeSamplesReply(payload, new Sample({ reward: 1 }), V2).samples;
    expect(out.reward).toEqual({ score: 0.75 });
  });

  test("a null v2 reward keeps the input sample's reward", () => {
    const payload = encodeSamples([computedSample({ reward: null })], {}, V2);
    const [out] = decodeSamplesReply(payload, new Sample({ reward: 0.25 }), V2).samples;
    expect(out.reward).toBe(0.25);
  });

  test("v1 does not carry reward, and a v1 decode of a v2 reply ignores it", () => {
    const v1Payload = encodeSamples([computedSample({ reward: 3 })], {}, V1);
    const meta = JSON.parse(Buffer.from((readSafetensors(v1Payload).tensors.get("_samples_meta") as Tensor).bytes()).toString("utf8"));
    expect(Object.keys(meta.samples[0])).toEqual([...WIRE_FIELDS_V1, "nulls"]);
    const v2Payload = encodeSamples([computedSample({ reward: 3 })], {}, V2);
    expect(decodeSamplesReply(v2Payload, new Sample({ reward: 1 }), V1).samples[0].reward).toBe(1);
    expect(decodeSamplesReply(v2Payload, new Sample({ reward: 1 }), V2).samples[0].reward).toBe(3);
  });

  test("a v2 decode of a v1 reply refuses the missing reward", () => {
    const v1Payload = encodeSamples([computedSample()], {}, V1);
    expect(thrown(() => decodeSamplesReply(v1Payload, new Sample(), V2)).message).toMatch(/sample 0 lacks JSON field "reward"/);
  });
});

describe("input-defaults guard (non-empty replies)", () => {
  const payload = encodeSamples([computedSample()], {}, V1);
  const cases: Array<[string, Sample, RegExp]> = [
    ["weight_versions", new Sample({ weight_versions: ["stale"] }), /weight_versions must be empty, got \["stale"\]/],
    ["prefix_cache_info", new Sample({ prefix_cache_info: new PrefixCacheInfo({ cached_tokens: 1 }) }), /prefix_cache_info must be zeros/],
    ["spec_info", new Sample({ spec_info: new SpecInfo({ spec_verify_ct: 2 }) }), /spec_info must be zeros/],
    ["teacher_log_probs", new Sample({ teacher_log_probs: [-1.0] }), /teacher_log_probs must be null/],
    ["opd_reverse_kl", new Sample({ opd_reverse_kl: [0.1] }), /opd_reverse_kl must be null/],
    ["opd_student_top_logprobs", new Sample({ metadata: { opd_student_top_logprobs: [[[-0.1, 1]]] } }), /metadata must not hold "opd_student_top_logprobs"/],
  ];
  test.each(cases)("rejects an input sample carrying %s", (_name, input, message) => {
    const error = thrown(() => decodeSamplesReply(payload, input, V1));
    expect(error).toBeInstanceOf(InputSampleDefaultsError);
    expect(error).toBeInstanceOf(SamplesCodecError);
    expect(error.message).toMatch(message);
  });
});

describe("encode refusals (value-changing conversions and wrong replay dtypes)", () => {
  const encodeOne = (overrides: Parameters<typeof computedSample>[0], index = 0): Error => {
    const samples = [computedSample(), computedSample(overrides)].slice(index === 0 ? 1 : 0);
    const error = thrown(() => encodeSamples(samples, {}, V1));
    expect(error).toBeInstanceOf(SamplesCodecError);
    return error;
  };

  test("a float32 routed-experts tensor", () => {
    const f32 = new Tensor("F32", [4, 3, 2], new Float32Array(24)) as unknown as Tensor<"I32">;
    expect(encodeOne({ rollout_routed_experts: f32 }).message).toMatch(/rollout_routed_experts of sample 0 must have dtype I32, got F32/);
  });

  test("an int64 indexer top-k tensor, on the second sample", () => {
    const i64 = new Tensor("I64", [1], new BigInt64Array(1)) as unknown as Tensor<"I32">;
    expect(encodeOne({ rollout_indexer_topk: i64 }, 1).message).toMatch(/rollout_indexer_topk of sample 1 must have dtype I32, got I64/);
  });

  test("a replay field that is not a Tensor", () => {
    expect(encodeOne({ rollout_routed_experts: [[1]] as unknown as Tensor<"I32"> }).message).toMatch(
      /rollout_routed_experts of sample 0 must be an I32 Tensor, got an array/,
    );
  });

  test("a loss mask holding -1", () => {
    expect(encodeOne({ loss_mask: [1, -1] }).message).toMatch(/loss_mask of sample 0: value -1 at index 1 does not fit wire dtype U8/);
  });

  test("a loss mask holding 256", () => {
    expect(encodeOne({ loss_mask: [256, 1] }).message).toMatch(/loss_mask of sample 0: value 256 at index 0 does not fit wire dtype U8/);
  });

  test("a fractional loss mask", () => {
    expect(encodeOne({ loss_mask: [1, 0.5] }).message).toMatch(/loss_mask of sample 0: value 0.5 at index 1 does not fit wire dtype U8/);
  });

  test("a non-integer token", () => {
    expect(encodeOne({ tokens: [1, 2.5, 3] }).message).toMatch(/tokens of sample 0: value 2.5 at index 1 does not fit wire dtype I64 exactly/);
  });

  test("a token beyond 2^53", () => {
    expect(encodeOne({ tokens: [2 ** 53 + 2, 1, 2] }).message).toMatch(
      /tokens of sample 0: value 9007199254740994 at index 0 does not fit wire dtype I64 exactly/,
    );
  });

  test("a non-number log-prob", () => {
    expect(encodeOne({ rollout_log_probs: [-0.5, "x" as unknown as number] }).message).toMatch(
      /rollout_log_probs of sample 0: value "x" at index 1 does not fit wire dtype F64/,
    );
  });

  test("metadata holding undefined or a class instance (NaN is written as miles' codec writes it)", () => {
    expect(encodeOne({ metadata: { a: undefined } as never }).message).toMatch(/metadata of sample 0\.a: a undefined is not representable/);
    expect(encodeOne({ metadata: { when: new Date(0) } as never }).message).toMatch(/metadata of sample 0\.when: \[object Date\] is not a plain JSON object/);
  });

  test("an unknown status, a negative response_length, an unknown empty reason", () => {
    expect(encodeOne({ status: "done" as never }).message).toMatch(/status of sample 0 must be one of pending, completed/);
    expect(encodeOne({ response_length: -1 }).message).toMatch(/response_length of sample 0 must be a non-negative integer/);
    expect(thrown(() => encodeSamples([], {}, { emptyReason: "nope" as never, fields: WIRE_FIELDS_V1 })).message).toMatch(/unknown empty reason "nope"/);
  });
});
