// Fuzzing the samples decoder: random byte strings, random headers and single-byte mutations of a valid reply.
// Each input must either decode or throw one of the documented error classes; nothing else may escape.
import fc from "fast-check";
import { SafetensorsFormatError, SamplesCodecError, WIRE_FIELDS_V2, decodeSamplesReply, encodeSamples, type SamplesReply } from "../../src/wire";
import { Sample } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";
import { computedSample } from "./wire-test-helpers";

const V2 = { fields: WIRE_FIELDS_V2 };
const valid = encodeSamples(
  [
    computedSample({ reward: 1 }),
    computedSample({ rollout_indexer_topk: new Tensor("I32", [2, 2], Int32Array.of(5, 6, 7, 8)), loss_mask: null, reward: { a: [1, "b"] } }),
  ],
  { max_trim_tokens: 2 },
  V2,
);

type Outcome = "decoded" | "SafetensorsFormatError" | "SamplesCodecError";

/** Decodes and classifies; any other exception propagates and fails the property. */
function outcome(bytes: Uint8Array): Outcome {
  let reply: SamplesReply;
  try {
    reply = decodeSamplesReply(bytes, new Sample(), V2);
  } catch (error) {
    if (error instanceof SafetensorsFormatError) return "SafetensorsFormatError";
    if (error instanceof SamplesCodecError) return "SamplesCodecError";
    throw error;
  }
  if (!Array.isArray(reply.samples) || !reply.samples.every((sample) => sample instanceof Sample)) throw new Error("decoded reply without Sample instances");
  return "decoded";
}

function withHeader(headerText: string, data: Uint8Array): Uint8Array {
  const header = new TextEncoder().encode(headerText);
  const out = new Uint8Array(8 + header.length + data.length);
  new DataView(out.buffer).setUint32(0, header.length, true);
  out.set(header, 8);
  out.set(data, 8 + header.length);
  return out;
}

test("the valid reply used as the mutation seed decodes", () => {
  expect(outcome(valid)).toBe("decoded");
});

test("random byte strings decode or throw a documented error", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 256 }), (bytes) => {
      outcome(bytes);
    }),
    { numRuns: 3000, seed: 20240601 },
  );
});

test("random byte strings behind a consistent header size reach the JSON and tensor checks", () => {
  const seen = new Set<Outcome>();
  fc.assert(
    fc.property(fc.oneof(fc.json(), fc.string({ maxLength: 64 })), fc.uint8Array({ maxLength: 64 }), (header, data) => {
      seen.add(outcome(withHeader(header, data)));
    }),
    { numRuns: 2000, seed: 7 },
  );
  expect(seen.has("SafetensorsFormatError")).toBe(true);
});

test("random single-byte mutations of a valid reply decode or throw a documented error", () => {
  const seen = new Set<Outcome>();
  fc.assert(
    fc.property(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 }), (position, value) => {
      const mutated = valid.slice();
      mutated[position] = value;
      seen.add(outcome(mutated));
    }),
    { numRuns: 4000, seed: 42 },
  );
  // The sweep must have exercised all three outcomes, or it is not reaching the samples layer.
  expect([...seen].sort()).toEqual(["SafetensorsFormatError", "SamplesCodecError", "decoded"]);
});

test("every single-bit flip at every position decodes or throws a documented error", () => {
  const counts: Record<Outcome, number> = { decoded: 0, SafetensorsFormatError: 0, SamplesCodecError: 0 };
  for (let position = 0; position < valid.length; position++) {
    for (let bit = 0; bit < 8; bit++) {
      const mutated = valid.slice();
      mutated[position] ^= 1 << bit;
      counts[outcome(mutated)] += 1;
    }
  }
  expect(counts.decoded + counts.SafetensorsFormatError + counts.SamplesCodecError).toBe(valid.length * 8);
  expect(counts.SamplesCodecError).toBeGreaterThan(0);
});

test("truncations and extensions of a valid reply are refused as containers", () => {
  for (let length = 0; length < valid.length; length++) {
    expect(outcome(valid.subarray(0, length))).toBe("SafetensorsFormatError");
  }
  const longer = new Uint8Array(valid.length + 3);
  longer.set(valid);
  expect(outcome(longer)).toBe("SafetensorsFormatError");
});
