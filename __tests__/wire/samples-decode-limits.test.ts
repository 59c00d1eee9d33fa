// The samples decoder's caps (sample count, tensor count, elements per tensor), checked before the work they bound, and
// a mutation sweep proving by deterministic work counters that no input costs more than linear time and memory.
import { checkTrainingSampleInvariants } from "../../src/matchers/sample-invariants";
import {
  DecodeWork,
  DEFAULT_SAMPLES_DECODE_LIMITS,
  SafetensorsFormatError,
  SAMPLES_META_TENSOR,
  SamplesCodecError,
  WIRE_FIELDS_V1,
  WIRE_FIELDS_V2,
  decodeSamplesReply,
  encodeSamples,
  writeSafetensors,
  type DecodeSamplesOptions,
} from "../../src/wire";
import { Sample } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";
import { buildContainer, computedSample, mutatePayload } from "./wire-test-helpers";

const V2 = { fields: WIRE_FIELDS_V2 };

/** A container holding only `_samples_meta` with `metaText`. */
function metaOnly(metaText: string): Uint8Array {
  const bytes = new Uint8Array(Buffer.from(metaText, "utf8"));
  return writeSafetensors(new Map([[SAMPLES_META_TENSOR, new Tensor("U8", [bytes.length], bytes)]]));
}

function refusal(payload: Uint8Array, options: DecodeSamplesOptions = V2): Error {
  try {
    decodeSamplesReply(payload, new Sample(), options);
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the decoder to refuse the payload");
}

describe("caps", () => {
  test("a reply declaring a million samples is refused by count before its JSON is parsed or any sample copied", () => {
    const payload = metaOnly(`{"samples":[${'{"nulls":[]},'.repeat(999_999)}{"nulls":[]}],"session_metadata":{},"empty_reason":null}`);
    const work = new DecodeWork();
    const error = refusal(payload, { ...V2, work });
    expect(error).toBeInstanceOf(SamplesCodecError);
    expect(error.message).toBe("samples reply: _samples_meta declares more than 10000 samples; the limit is 10000 (limits.maxSamples)");
    expect(work.sampleCopies).toBe(0);
    // Only the counting pass ran, and it stopped after the 10,001st sample (13 bytes each).
    expect(work.scannedBytes).toBeLessThan(13 * 10_001 + 400);
  });

  test("a count the key search cannot see (an escaped key) is refused by structure before parsing, before the overlay", () => {
    const work = new DecodeWork();
    const payload = metaOnly(`{"samples":[${'{"null\\u0073":[]},'.repeat(20)}{"nulls":[]}],"session_metadata":{},"empty_reason":null}`);
    const error = refusal(payload, { ...V2, limits: { maxSamples: 20 }, work });
    expect(error.message).toBe("samples reply: _samples_meta declares more than 20 samples; the limit is 20 (limits.maxSamples)");
    expect(work.sampleCopies).toBe(0);
  });

  // Whatever the key spelling, each is refused before its JSON is parsed: work bounded by the bytes, no sample copied.
  test.each([
    [
      "a million samples that omit nulls",
      () => metaOnly(`{"samples":[${"{},".repeat(999_999)}{}],"session_metadata":{},"empty_reason":null}`),
      "samples reply: _samples_meta declares more than 10000 samples; the limit is 10000 (limits.maxSamples)",
    ],
    [
      "twelve million empty objects in the session metadata",
      () => metaOnly(`{"samples":[],"session_metadata":{"x":[${"{},".repeat(12_000_000)}{}]},"empty_reason":null}`),
      "samples reply: _samples_meta holds more than 2097152 JSON objects and arrays; the limit is 2097152 (limits.maxJsonContainers)",
    ],
    [
      "a million tensors whose data_offsets key is escaped",
      () => buildContainer(`{${'"t":{"dtype":"U8","shape":[0],"data_offset\\u0073":[0,0]},'.repeat(999_999)}"t":{}}`),
      "samples reply: safetensors: header declares more than 50001 tensors; the limit is 50001 (limits.maxTensors)",
    ],
  ])("%s is refused by structure before parsing", (_name, build, message) => {
    const payload = build();
    const work = new DecodeWork();
    const heapBefore = process.memoryUsage().heapUsed;
    const error = refusal(payload, { ...V2, work });
    expect(error).toBeInstanceOf(SamplesCodecError);
    expect(error.message).toBe(message);
    expect(work.sampleCopies).toBe(0);
    expect(work.listElements).toBe(0);
    // the key search and the structural scan, each at most once over the bytes: never the three passes of a parse
    expect(work.scannedBytes).toBeLessThanOrEqual(2 * payload.length);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
  });

  test("a header declaring 200,000 tensors is refused by count before it is parsed", () => {
    const entries = Array.from({ length: 200_000 }, (_, i) => `"t${i}":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}`);
    const payload = buildContainer(`{${entries.join(",")}}`);
    const work = new DecodeWork();
    const error = refusal(payload, { ...V2, work });
    expect(error).toBeInstanceOf(SamplesCodecError);
    expect(error.message).toBe("samples reply: safetensors: header declares more than 50001 tensors; the limit is 50001 (limits.maxTensors)");
    expect(work.scannedBytes).toBeLessThan(60 * 50_002); // entries of 55-57 bytes
    // The same cap, counted exactly, when the keys are escaped.
    const escaped = buildContainer(
      `{${entries
        .slice(0, 12)
        .join(",")
        .replace(/data_offsets/g, "data\\u005foffsets")}}`,
    );
    expect(refusal(escaped, { ...V2, limits: { maxTensors: 11 } }).message).toBe(
      "samples reply: safetensors: header declares 12 tensors; the limit is 11 (limits.maxTensors)",
    );
  });

  test("maxSamples moves the default tensor cap with it; both can be raised", () => {
    const two = encodeSamples([computedSample(), computedSample()], {}, V2);
    expect(refusal(two, { ...V2, limits: { maxSamples: 1 } }).message).toBe(
      "samples reply: safetensors: header declares more than 6 tensors; the limit is 6 (limits.maxTensors)",
    );
    expect(refusal(two, { ...V2, limits: { maxSamples: 1, maxTensors: 9 } }).message).toBe(
      "samples reply: _samples_meta declares more than 1 samples; the limit is 1 (limits.maxSamples)",
    );
    expect(decodeSamplesReply(two, new Sample(), { ...V2, limits: { maxSamples: 2 } }).samples).toHaveLength(2);
    expect(DEFAULT_SAMPLES_DECODE_LIMITS).toEqual({ maxSamples: 10_000, maxTensors: 50_001, maxTensorElements: 2 ** 26, maxJsonContainers: 2 ** 21 });
  });

  test("a tensor with more elements than maxTensorElements is refused naming it, before it becomes a list", () => {
    const work = new DecodeWork();
    const payload = encodeSamples([computedSample({ tokens: Array.from({ length: 11 }, (_, i) => i), response_length: 2 })], {}, V2);
    expect(refusal(payload, { ...V2, limits: { maxTensorElements: 10 }, work }).message).toBe(
      "samples reply: sample 0: tokens.0 holds 11 elements; the limit is 10 per tensor (limits.maxTensorElements)",
    );
    expect(work.listElements).toBe(0);
  });

  test.each([
    [{ maxSamples: -1 }, "samples codec: limits.maxSamples must be a non-negative integer, got -1"],
    [{ maxTensors: 1.5 }, "samples codec: limits.maxTensors must be a non-negative integer, got 1.5"],
    [{ maxTensorElements: Number.NaN }, "samples codec: limits.maxTensorElements must be a non-negative integer, got NaN"],
  ])("limits %p are refused", (limits, message) => {
    expect(refusal(encodeSamples([], {}, V2), { ...V2, limits }).message).toBe(message);
  });
});

describe("checkSample: checkTrainingSampleInvariants on decoded samples", () => {
  const broken = encodeSamples(
    [computedSample(), computedSample({ tokens: [1, -2, 3, 10, 11], loss_mask: [1, 7], rollout_log_probs: [-0.5, Number.NaN] })],
    {},
    V2,
  );

  test("without it a broken server's sample decodes silently", () => {
    expect(decodeSamplesReply(broken, new Sample(), V2).samples[1].loss_mask).toEqual([1, 7]);
  });

  test("with it the negative id, the loss-mask 7 and the NaN log-prob are named", () => {
    const error = refusal(broken, { ...V2, checkSample: checkTrainingSampleInvariants });
    expect(error).toBeInstanceOf(SamplesCodecError);
    expect(error.message).toMatch(/^samples reply: sample 1 fails checkSample: /);
    expect(error.message).toContain("[tokens] tokens[1] = -2");
    expect(error.message).toContain("[loss_mask] loss_mask[1] = 7");
    expect(error.message).toContain("[rollout_log_probs] rollout_log_probs[1] = NaN");
    expect(
      decodeSamplesReply(encodeSamples([computedSample()], {}, V2), new Sample(), { ...V2, checkSample: checkTrainingSampleInvariants }).samples,
    ).toHaveLength(1);
  });
});

describe("mutation sweep: no input costs more than linear work", () => {
  // A reply with every kind of tensor, JSON field and a second sample, as the seed of every mutation.
  const seed = encodeSamples(
    [
      computedSample({ reward: 1 }),
      computedSample({ rollout_indexer_topk: new Tensor("I32", [2, 2], Int32Array.of(5, 6, 7, 8)), loss_mask: null, reward: { a: [1, "b"] } }),
    ],
    { max_trim_tokens: 2 },
    V2,
  );
  const headerLength = Number(Buffer.from(seed).readBigUInt64LE(0));
  const header = Buffer.from(seed.subarray(8, 8 + headerLength)).toString("utf8");
  const data = seed.subarray(8 + headerLength);

  /** Deterministic pseudo-random numbers (a linear congruential generator), so every run sweeps the same cases. */
  function random(state: { s: number }): number {
    state.s = (state.s * 1103515245 + 12345) >>> 0;
    return state.s;
  }

  function* mutants(): Generator<[string, Uint8Array]> {
    for (let position = 0; position < seed.length; position += 1) {
      for (let bit = 0; bit < 8; bit += 1) {
        const flipped = seed.slice();
        flipped[position] ^= 1 << bit;
        yield [`bit ${bit} of byte ${position}`, flipped];
      }
    }
    for (let length = 0; length < seed.length; length += 7) yield [`truncated to ${length}`, seed.slice(0, length)];
    const rng = { s: 2028 };
    for (let i = 0; i < 300; i += 1) {
      // Header lies: the size field, data offsets, shapes and dtypes rewritten to other (often absurd) values.
      const lied = seed.slice();
      new DataView(lied.buffer).setUint32(0, random(rng) % (seed.length * 2), true);
      yield [`header size lie ${i}`, lied];
      const big = String(random(rng) * (i % 2 === 0 ? 1 : 4096));
      yield [`offset lie ${i}`, buildContainer(header.replace(/\d+\]/, `${big}]`), data)];
      const dims = Array.from({ length: 1 + (random(rng) % 4) }, () => random(rng) % (i % 3 === 0 ? 2 ** 31 : 5));
      yield [`shape lie ${i}`, buildContainer(header.replace(/"shape":\[[\d,]*\]/, `"shape":[${dims.join(",")}]`), data)];
      const dtypes = ["U8", "I32", "F64", "I64", "BOOL", "F16", "X9"];
      yield [`dtype lie ${i}`, buildContainer(header.replace(/"dtype":"[A-Z0-9]+"/, `"dtype":"${dtypes[random(rng) % dtypes.length]}"`), data)];
    }
    // Meta lies: more samples declared than tensors carry, samples without tensors, absurd counts of null markers.
    for (const extra of [1, 5, 50, 500, 5000]) {
      yield [
        `${extra} extra declared samples`,
        mutatePayload(seed, (meta) => {
          for (let i = 0; i < extra; i += 1) meta.samples.push({ ...meta.samples[0] });
        }),
      ];
      yield [`${extra} all-null samples`, metaOnly(`{"samples":[${'{"nulls":[]},'.repeat(extra)}{"nulls":[]}],"session_metadata":{},"empty_reason":null}`)];
    }
  }

  test("thousands of mutants decode or throw a documented error, with work linear in their size", () => {
    const outcomes: Record<string, number> = {};
    let cases = 0;
    for (const [name, payload] of mutants()) {
      cases += 1;
      const work = new DecodeWork();
      let outcome = "decoded";
      try {
        decodeSamplesReply(payload, new Sample(), { ...V2, work });
      } catch (error) {
        if (!(error instanceof SafetensorsFormatError || error instanceof SamplesCodecError)) throw new Error(`${name}: ${String(error)}`, { cause: error });
        outcome = (error as Error).name;
      }
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      const size = payload.length;
      // Time: every pass reads bytes that are there, a bounded number of times each.
      if (work.scannedBytes > 8 * size + 64) throw new Error(`${name}: scanned ${work.scannedBytes} bytes of a ${size}-byte payload`);
      // Memory: copies and number lists are bounded by the bytes they come from (1 element per byte at most), and
      // the input-sample copies by the samples the reply can declare (at least 12 bytes each, at most maxSamples).
      if (work.copiedBytes > size) throw new Error(`${name}: copied ${work.copiedBytes} bytes`);
      if (work.listElements > size) throw new Error(`${name}: built ${work.listElements} list elements from ${size} bytes`);
      if (work.sampleCopies > Math.min(size / 12, DEFAULT_SAMPLES_DECODE_LIMITS.maxSamples))
        throw new Error(`${name}: made ${work.sampleCopies} sample copies`);
    }
    expect(cases).toBeGreaterThan(5000);
    // The sweep reaches every layer: container refusals, contract refusals and decodable mutants.
    expect(Object.keys(outcomes).sort()).toEqual(["SafetensorsFormatError", "SamplesCodecError", "decoded"]);
  });

  test("the v1 field list decodes the seed with the same bounded work", () => {
    const work = new DecodeWork();
    decodeSamplesReply(seed, new Sample(), { fields: WIRE_FIELDS_V1, work });
    expect(work.sampleCopies).toBe(2);
    expect(work.listElements).toBe(5 + 2 + 2 + 5 + 2);
    expect(work.scannedBytes).toBeLessThan(4 * seed.length);
  });
});
