// The samples encoder writes the per-token lists and the metadata straight into the reply's chunks: the bytes (or
// the refusal) must be those of the straightforward path, each list converted to its typed array and the whole map
// handed to writeSafetensorsChunks; replay tensors stay views on the samples' memory.
import fc from "fast-check";
import { SafetensorsFormatError, WIRE_FIELDS_V1, WIRE_FIELDS_V2, concatChunks, encodeSamples, encodeSamplesChunks } from "../../src/wire";
import { PrefixCacheInfo, SAMPLE_STATUSES, Sample, type JsonObject } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";
import { computedSample, referenceEncode } from "./wire-test-helpers";
import { binaryString } from "../support/binary-unit";

type Outcome = { bytes: Buffer } | { error: string; kind: string };

function outcome(encode: () => Uint8Array | Uint8Array[]): Outcome {
  try {
    const result = encode();
    return { bytes: Buffer.from(Array.isArray(result) ? concatChunks(result) : result) };
  } catch (error) {
    return { error: (error as Error).message, kind: (error as Error).constructor.name };
  }
}

function expectSameOutcome(samples: Sample[], sessionMetadata: JsonObject, fields: readonly string[]): Outcome {
  const expected = outcome(() => referenceEncode(samples, sessionMetadata, fields));
  const actual = outcome(() => encodeSamplesChunks(samples, sessionMetadata, { fields }));
  if ("bytes" in expected && "bytes" in actual) expect(actual.bytes.equals(expected.bytes)).toBe(true);
  else expect(actual).toEqual(expected);
  return actual;
}

// Lists that convert, and every kind of value a conversion refuses (holes, -0, huge, fractional, non-numbers).
const safeInt = fc.oneof(
  fc.integer({ min: 0, max: 151_935 }),
  fc.maxSafeInteger(),
  fc.maxSafeNat().map((n) => -n),
  fc.constant(-0),
);
const badNumber = fc.constantFrom<unknown>(2 ** 53, 0.5, -1, 256, Number.NaN, "7", null, undefined, 1n);
const withBad = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 9, arbitrary: good }, { weight: 1, arbitrary: badNumber });
const list = <T>(item: fc.Arbitrary<T>) => fc.array(item, { maxLength: 70 });

/** A replay tensor: contiguous, a row slice (a view at an offset), an empty one, or one whose shape lies. */
const replayTensor = fc.oneof(
  fc
    .tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 4 }))
    .map(([rows, layers, k, cut]) => {
      const full = new Tensor(
        "I32",
        [rows + cut, layers, k],
        Int32Array.from({ length: (rows + cut) * layers * k }, (_, i) => i * 2654435761),
      );
      return full.sliceRows(rows);
    }),
  fc.constant(null),
  fc.constant("lying shape" as const),
);

const jsonLeaf = fc.oneof(binaryString({ maxLength: 12 }), fc.double(), safeInt, fc.boolean(), fc.constant(null));
const metadataValue = fc.oneof(jsonLeaf, list(jsonLeaf), fc.dictionary(fc.string({ maxLength: 6 }), jsonLeaf, { maxKeys: 4 }));

const sampleArb = fc
  .record({
    tokens: fc.option(list(withBad(safeInt)), { freq: 8 }),
    loss_mask: fc.option(list(withBad(fc.oneof(fc.constantFrom(0, 1, -0), fc.integer({ min: 0, max: 255 })))), { freq: 8 }),
    rollout_log_probs: fc.option(list(withBad(fc.double())), { freq: 8 }),
    routed: replayTensor,
    indexer: replayTensor,
    response: fc.string({ unit: "grapheme", maxLength: 40 }),
    response_length: fc.nat(5000),
    status: fc.constantFrom(...SAMPLE_STATUSES),
    weight_versions: fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
    cached: fc.nat(100),
    reward: fc.oneof(fc.constant(null), fc.double(), fc.string({ maxLength: 4 })),
    metadata: fc.dictionary(fc.string({ unit: "grapheme", maxLength: 8 }), metadataValue, { maxKeys: 5 }),
    withIds: fc.boolean(),
  })
  .map((r) => {
    const replay = (spec: Tensor<"I32"> | null | "lying shape"): Tensor<"I32"> | null => {
      if (spec !== "lying shape") return spec;
      const tensor = new Tensor("I32", [2, 1, 1], Int32Array.of(1, 2));
      (tensor as unknown as { shape: number[] }).shape = [3, 1, 1]; // a hook edited it: the container writer refuses it
      return tensor;
    };
    const metadata: JsonObject = { ...(r.metadata as JsonObject) };
    // long id lists go through the digit writer and the per-payload text sharing
    if (r.withIds && Array.isArray(r.tokens)) metadata.accumulated_token_ids = [...(r.tokens as number[])];
    const sample = new Sample({
      response: r.response,
      response_length: r.response_length,
      status: r.status,
      weight_versions: r.weight_versions,
      prefix_cache_info: new PrefixCacheInfo({ cached_tokens: r.cached, total_prompt_tokens: r.cached + 1 }),
      reward: r.reward,
      metadata,
    });
    // assigned after construction: the Sample constructor's own checks are not what is tested here
    Object.assign(sample, {
      tokens: r.tokens,
      loss_mask: r.loss_mask,
      rollout_log_probs: r.rollout_log_probs,
      rollout_routed_experts: replay(r.routed),
      rollout_indexer_topk: replay(r.indexer),
    });
    return sample;
  });

describe("encodeSamplesChunks writes the reference bytes", () => {
  test("random replies (up to 12 samples, so tokens.10 sorts before tokens.2): same bytes, or the same refusal", () => {
    const kinds = new Set<string>();
    fc.assert(
      fc.property(
        fc.array(sampleArb, { maxLength: 12 }),
        fc.dictionary(fc.string({ maxLength: 6 }), metadataValue, { maxKeys: 4 }),
        fc.boolean(),
        (samples, session, v2) => {
          const result = expectSameOutcome(samples, session, v2 ? WIRE_FIELDS_V2 : WIRE_FIELDS_V1);
          kinds.add("bytes" in result ? "bytes" : result.kind);
        },
      ),
      { numRuns: 400, seed: 29_0129 },
    );
    // both outcomes, and both kinds of refusal, were reached
    expect([...kinds].sort()).toEqual(["SafetensorsFormatError", "SamplesCodecError", "bytes"]);
  });

  test("realistic samples: a long trajectory with replay tensors on one sample, none on the other", () => {
    const tokens = Array.from({ length: 3000 }, (_, i) => (i * 7919) % 151_936);
    const rows = tokens.length - 1;
    const routed = new Tensor(
      "I32",
      [rows, 4, 2],
      Int32Array.from({ length: rows * 8 }, (_, i) => i % 128),
    );
    const samples = [
      computedSample({
        tokens,
        loss_mask: tokens.map((_, i) => (i % 3 === 0 ? 0 : 1)),
        rollout_log_probs: tokens.map((_, i) => -i / 1024),
        rollout_routed_experts: routed,
        metadata: { accumulated_token_ids: [...tokens] },
      }),
      computedSample({ rollout_routed_experts: null, metadata: { lifecycle: [{ t0: null, t1: 1796141292.4501472, turn: 1 }] } }),
    ];
    const result = expectSameOutcome(samples, { accumulated_token_ids: [...tokens], max_trim_tokens: 0, tito_session_mismatch: [] }, WIRE_FIELDS_V2);
    expect("bytes" in result).toBe(true);
    const chunks = encodeSamplesChunks(samples, { max_trim_tokens: 0 }, { fields: WIRE_FIELDS_V2 });
    // head + the 8-byte lists, the replay tensor as a view (not copied), then the byte lists and the metadata
    expect(chunks).toHaveLength(3);
    expect(chunks[1].buffer).toBe(routed.data.buffer);
    expect(chunks[1].byteOffset).toBe(routed.data.byteOffset);
  });

  test("without replay tensors the whole reply is one chunk", () => {
    const samples = [computedSample({ rollout_routed_experts: null }), computedSample({ rollout_routed_experts: null })];
    const chunks = encodeSamplesChunks(samples, {}, { fields: WIRE_FIELDS_V1 });
    expect(chunks).toHaveLength(1);
    expect(Buffer.from(chunks[0]).equals(Buffer.from(referenceEncode(samples, {}, WIRE_FIELDS_V1)))).toBe(true);
    expect(encodeSamplesChunks([], {}, { fields: WIRE_FIELDS_V1 })).toHaveLength(1);
  });

  test("metadata beyond the kept scratch (and beyond its cap) with multi-byte characters", () => {
    for (const length of [30_000, 1_500_000]) {
      const text = "\u00e9\u{1F600}x".repeat(length / 4);
      const samples = [computedSample({ response: text, metadata: { note: text } })];
      expectSameOutcome(samples, { note: "\u4e2d" }, WIRE_FIELDS_V1);
    }
    // a short reply after the long ones: the scratch holds no stale bytes that could leak into it
    expectSameOutcome([computedSample()], {}, WIRE_FIELDS_V1);
  });

  test("metadata text past 4 Mi characters goes out as UTF-8 pieces of its own, never one string: the same bytes", () => {
    // 6 samples x 1.5 Mi characters of metadata (a samples op merging large request metadata into every leaf)
    const text = "\u00e9\u{1F600}xyz".repeat(300_000);
    const samples = Array.from({ length: 6 }, () => computedSample({ rollout_routed_experts: null, metadata: { note: text } }));
    const chunks = encodeSamplesChunks(samples, { agent: { note: text } }, { fields: WIRE_FIELDS_V2 });
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) expect(chunk.byteLength).toBeLessThan(3 * 2 ** 22 + 3 * text.length);
    expect(Buffer.from(concatChunks(chunks)).equals(Buffer.from(referenceEncode(samples, { agent: { note: text } }, WIRE_FIELDS_V2)))).toBe(true);
  });

  test("the refusals keep their order: a sample's lists, then its JSON fields, then later samples, then the container checks", () => {
    const lying = new Tensor("I32", [1, 1, 1], Int32Array.of(1));
    (lying as unknown as { shape: number[] }).shape = [2, 1, 1];
    const message = (samples: Sample[], session: JsonObject = {}): string => {
      const result = expectSameOutcome(samples, session, WIRE_FIELDS_V1);
      if ("bytes" in result) throw new Error("expected a refusal");
      return result.error;
    };
    // a bad token comes before a bad log-prob and before the sample's own JSON
    expect(message([computedSample({ tokens: [1, 0.5], rollout_log_probs: ["x" as never], metadata: { a: undefined } as never })])).toMatch(
      /tokens of sample 0: value 0.5 at index 1/,
    );
    // sample 0's JSON before sample 1's lists
    expect(message([computedSample({ metadata: { a: undefined } as never }), computedSample({ tokens: [0.5] })])).toMatch(/metadata of sample 0\.a/);
    // the session metadata before a replay tensor whose shape lies (the container writer's checks run last)
    expect(message([computedSample({ rollout_routed_experts: lying })], { bad: undefined } as never)).toMatch(/session_metadata\.bad/);
    const last = outcome(() => encodeSamplesChunks([computedSample({ rollout_routed_experts: lying })], {}, { fields: WIRE_FIELDS_V1 }));
    expect(last).toMatchObject({
      kind: SafetensorsFormatError.name,
      error: expect.stringMatching(/rollout_routed_experts\.0" data does not match dtype I32 and shape \[2, 1, 1\]/),
    });
    // holes are refused (a typed array's set would read them as 0 or NaN)
    // eslint-disable-next-line no-sparse-arrays
    expect(message([computedSample({ loss_mask: [1, , 1] as number[] })])).toMatch(/loss_mask of sample 0: value undefined at index 1/);
    // eslint-disable-next-line no-sparse-arrays
    expect(message([computedSample({ rollout_log_probs: [-1, , -2] as number[] })])).toMatch(/rollout_log_probs of sample 0: value undefined at index 1/);
  });

  test("encodeSamples is the chunks joined", () => {
    const samples = [computedSample(), computedSample({ rollout_indexer_topk: new Tensor("I32", [4, 1, 1], Int32Array.of(9, 8, 7, 6)) })];
    expect(
      Buffer.from(encodeSamples(samples, { a: 1 }, { fields: WIRE_FIELDS_V2 })).equals(Buffer.from(referenceEncode(samples, { a: 1 }, WIRE_FIELDS_V2))),
    ).toBe(true);
  });
});
