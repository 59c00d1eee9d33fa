// Malformed samples replies: each broken rule is its own case, asserting the error class and the message.
// Payloads are built from a valid reply (re-packed after an edit) or assembled by hand, never mocked.
import { SafetensorsFormatError, SamplesCodecError, WIRE_FIELDS_V1, decodeSamplesReply, encodeSamples, writeSafetensors } from "../../src/wire";
import { Sample } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";
import { computedSample, mutatePayload } from "./wire-test-helpers";

const V1 = { fields: WIRE_FIELDS_V1 };
const valid = encodeSamples([computedSample()], { max_trim_tokens: 1 }, V1);

function decodeError(payload: Uint8Array): Error {
  try {
    decodeSamplesReply(payload, new Sample(), V1);
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected decodeSamplesReply to throw");
}

function metaTensor(text: string): Tensor {
  const bytes = new Uint8Array(Buffer.from(text, "utf8"));
  return new Tensor("U8", [bytes.length], bytes);
}

describe("container-level failures surface as SafetensorsFormatError", () => {
  test("a truncated reply", () => {
    const error = decodeError(valid.subarray(0, valid.length - 100));
    expect(error).toBeInstanceOf(SafetensorsFormatError);
    expect(error.message).toMatch(/out of range of the \d+-byte data section/);
  });

  test("an empty reply body", () => {
    const error = decodeError(new Uint8Array(0));
    expect(error).toBeInstanceOf(SafetensorsFormatError);
    expect(error.message).toMatch(/fewer than the 8-byte header size field/);
  });
});

describe("samples contract failures surface as SamplesCodecError", () => {
  const cases: Array<[string, () => Uint8Array, RegExp]> = [
    ["_samples_meta missing", () => writeSafetensors({ "tokens.0": new Tensor("I64", [3], new BigInt64Array(3)) }), /payload has no _samples_meta tensor/],
    [
      "_samples_meta of dtype I32",
      () => writeSafetensors({ _samples_meta: new Tensor("I32", [4], new Int32Array(4)) }),
      /_samples_meta must be a rank-1 U8 tensor, got I32 of rank 1/,
    ],
    [
      "_samples_meta of rank 2",
      () => writeSafetensors({ _samples_meta: new Tensor("U8", [2, 2], new Uint8Array(4)) }),
      /_samples_meta must be a rank-1 U8 tensor, got U8 of rank 2/,
    ],
    ["_samples_meta not UTF-8", () => writeSafetensors({ _samples_meta: new Tensor("U8", [2], Uint8Array.of(0x7b, 0xc3)) }), /_samples_meta is not UTF-8 JSON/],
    ["_samples_meta not JSON", () => writeSafetensors({ _samples_meta: metaTensor('{"samples":') }), /_samples_meta is not UTF-8 JSON/],
    ["_samples_meta not an object", () => writeSafetensors({ _samples_meta: metaTensor("[]") }), /_samples_meta must hold a JSON object/],
    [
      "_samples_meta without empty_reason",
      () => writeSafetensors({ _samples_meta: metaTensor('{"samples":[],"session_metadata":{}}') }),
      /_samples_meta lacks "empty_reason"/,
    ],
    [
      "samples not an array",
      () => writeSafetensors({ _samples_meta: metaTensor('{"samples":{},"session_metadata":{},"empty_reason":null}') }),
      /_samples_meta\.samples must be an array/,
    ],
    [
      "session_metadata not an object",
      () => writeSafetensors({ _samples_meta: metaTensor('{"samples":[],"session_metadata":[],"empty_reason":null}') }),
      /session_metadata must be a JSON object/,
    ],
    [
      "unknown empty_reason",
      () => writeSafetensors({ _samples_meta: metaTensor('{"samples":[],"session_metadata":{},"empty_reason":"later"}') }),
      /unknown empty_reason "later"/,
    ],
    [
      "a wire sample that is not an object",
      () => writeSafetensors({ _samples_meta: metaTensor('{"samples":[3],"session_metadata":{},"empty_reason":null}') }),
      /sample 0 must be a JSON object/,
    ],
    ["nulls missing", () => mutatePayload(valid, (meta) => delete meta.samples[0].nulls), /sample 0: "nulls" must be an array of field names/],
    [
      "null markers naming response",
      () => mutatePayload(valid, (meta) => (meta.samples[0].nulls as string[]).push("response")),
      /null markers name non-tensor fields: "response"/,
    ],
    [
      "a promised tensor absent",
      () => mutatePayload(valid, (_meta, tensors) => tensors.delete("tokens.0")),
      /sample 0 promises tensor "tokens.0" but the payload lacks it/,
    ],
    [
      "tokens of the wrong dtype",
      () => mutatePayload(valid, (_meta, tensors) => tensors.set("tokens.0", new Tensor("I32", [5], Int32Array.of(1, 2, 3, 10, 11)))),
      /tokens\.0: tokens must have dtype I64, got I32/,
    ],
    [
      "a routed-experts tensor of the wrong dtype",
      () => mutatePayload(valid, (_meta, tensors) => tensors.set("rollout_routed_experts.0", new Tensor("I64", [1], new BigInt64Array(1)))),
      /rollout_routed_experts\.0: rollout_routed_experts must have dtype I32, got I64/,
    ],
    [
      "a rank-2 loss mask",
      () => mutatePayload(valid, (_meta, tensors) => tensors.set("loss_mask.0", new Tensor("U8", [1, 2], Uint8Array.of(1, 1)))),
      /loss_mask\.0: loss_mask must be rank 1, got rank 2/,
    ],
    [
      "an int64 token beyond the safe-integer range",
      () => mutatePayload(valid, (_meta, tensors) => tensors.set("tokens.0", new Tensor("I64", [2], BigInt64Array.of(1n, 2n ** 60n)))),
      /tokens\.0: int64 value 1152921504606846976 at index 1 is outside the safe JavaScript integer range/,
    ],
    [
      "an extra unreferenced tensor",
      () => mutatePayload(valid, (_meta, tensors) => tensors.set("orphan", new Tensor("U8", [1], new Uint8Array(1)))),
      /payload carries unreferenced tensors: "orphan"/,
    ],
    [
      "a tensor present although its field is null-marked",
      () => mutatePayload(valid, (meta) => (meta.samples[0].nulls as string[]).push("loss_mask")),
      /payload carries unreferenced tensors: "loss_mask.0"/,
    ],
    ["a missing JSON field", () => mutatePayload(valid, (meta) => delete meta.samples[0].status), /sample 0 lacks JSON field "status"/],
    [
      "metadata not an object",
      () => mutatePayload(valid, (meta) => (meta.samples[0].metadata = ["not", "an", "object"])),
      /sample 0: metadata must be a JSON object, got an array/,
    ],
    [
      "an unknown status",
      () => mutatePayload(valid, (meta) => (meta.samples[0].status = "done")),
      /sample 0: status must be one of pending, completed, truncated, aborted, failed/,
    ],
    [
      "weight_versions not strings",
      () => mutatePayload(valid, (meta) => (meta.samples[0].weight_versions = [1])),
      /sample 0: weight_versions must be an array of strings/,
    ],
    [
      "prefix_cache_info with an unknown key",
      () => mutatePayload(valid, (meta) => (meta.samples[0].prefix_cache_info = { cached_tokens: 1, total_prompt_tokens: 2, x: 3 })),
      /sample 0: prefix_cache_info must be an object with numbers/,
    ],
    [
      "a fractional response_length",
      () => mutatePayload(valid, (meta) => (meta.samples[0].response_length = 1.5)),
      /sample 0: response_length must be a non-negative integer, got number 1.5/,
    ],
  ];

  test.each(cases)("%s", (_name, build, message) => {
    const error = decodeError(build());
    expect(error).toBeInstanceOf(SamplesCodecError);
    expect(error.message).toMatch(message);
  });

  test("a wire metadata key named __proto__ is stored as a plain key, not as the prototype", () => {
    const payload = mutatePayload(valid, (meta) => {
      meta.samples[0].metadata = JSON.parse('{"__proto__":{"polluted":true}}');
    });
    const [out] = decodeSamplesReply(payload, new Sample(), V1).samples;
    expect(Object.getPrototypeOf(out.metadata)).toBe(Object.prototype);
    expect((out.metadata as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(out.metadata, "__proto__")).toBe(true);
  });
});
