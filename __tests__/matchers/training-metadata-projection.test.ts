// trainingMetadataProjection alone and as the metadataProjection option of toBeBitwiseEqual.
// It must hide server-only keys and clock readings, yet still fail on a non-finite clock reading.
import { Sample } from "../../src/wire/sample";
import type { JsonObject } from "../../src/wire/sample";
import { RUNTIME_PLACEHOLDER, compareBitwise, trainingMetadataProjection } from "../../src/matchers";

function v1Metadata(): JsonObject {
  return {
    rollback_count: 2,
    max_trim_tokens: 0,
    lifecycle: [
      { t0: 1754000000.25, t1: 1754000001.5, turn: 1, req_ts: 1754000000.125, prev_t1: null },
      { t0: null, t1: 1754000003.75, turn: 2, req_ts: 1754000002.5, prev_t1: 1754000001.5 },
    ],
  };
}

function v2Metadata(): JsonObject {
  return {
    rollback_count: 2,
    leaf: { node_id: 8, parent: 7, path_node_ids: [0, 1, 2, 3, 6, 7, 8], response_id: "chatcmpl-0badf00d" },
    lifecycle: [
      { t0: 1754000100.5, t1: 1754000101, turn: 1, req_ts: 1754000100.25, prev_t1: null },
      { t0: null, t1: 1754000104, turn: 2, req_ts: 1754000102, prev_t1: 1754000101 },
    ],
  };
}

describe("trainingMetadataProjection", () => {
  test("drops leaf and max_trim_tokens and replaces non-null runtime times, keeping nulls and other keys", () => {
    const input = v1Metadata();
    const before = JSON.stringify(input);
    expect(trainingMetadataProjection(input)).toEqual({
      rollback_count: 2,
      lifecycle: [
        { t0: RUNTIME_PLACEHOLDER, t1: RUNTIME_PLACEHOLDER, turn: 1, req_ts: RUNTIME_PLACEHOLDER, prev_t1: null },
        { t0: null, t1: RUNTIME_PLACEHOLDER, turn: 2, req_ts: RUNTIME_PLACEHOLDER, prev_t1: RUNTIME_PLACEHOLDER },
      ],
    });
    expect(JSON.stringify(input)).toBe(before); // the input is not modified
  });

  test("a single lifecycle segment stays a single segment", () => {
    expect(trainingMetadataProjection({ lifecycle: { t0: 1, t1: 2, turn: 1 } })).toEqual({ lifecycle: { t0: "<runtime>", t1: "<runtime>", turn: 1 } });
    expect(trainingMetadataProjection({ lifecycle: null, other: 1 })).toEqual({ lifecycle: null, other: 1 });
  });

  test.each([
    [Infinity, "Infinity"],
    [NaN, "NaN"],
    ["12.5", '"12.5"'],
    [true, "boolean"],
  ])("refuses a runtime time of %p", (bad, shown) => {
    const metadata = {
      lifecycle: [
        { t0: 1, t1: 2 },
        { t0: 3, t1: bad as never },
      ],
    };
    expect(() => trainingMetadataProjection(metadata)).toThrow(`trainingMetadataProjection: lifecycle[1].t1 must be a finite number or null, got ${shown}`);
  });

  test("refuses a lifecycle segment that is not an object", () => {
    expect(() => trainingMetadataProjection({ lifecycle: [1] })).toThrow("lifecycle[0] must be an object, got 1");
  });
});

describe("metadataProjection option", () => {
  const sampleWith = (metadata: JsonObject): Sample => new Sample({ tokens: [1, 2], response_length: 1, metadata });

  test("hides leaf, max_trim_tokens and runtime lifecycle times", () => {
    const v1 = sampleWith(v1Metadata());
    const v2 = sampleWith(v2Metadata());
    expect(compareBitwise(v1, v2, { metadataProjection: trainingMetadataProjection })).toEqual([]);
    expect(v1).toBeBitwiseEqual(v2, { metadataProjection: trainingMetadataProjection });
    // without the projection the same pair differs, pointing at the leaves
    expect(() => expect(v1).toBeBitwiseEqual(v2)).toThrow(/sample\.metadata\.max_trim_tokens: missing on the right/);
    expect(() => expect(v1).toBeBitwiseEqual(v2)).toThrow(/sample\.metadata\.lifecycle\[0\]\.t0: 0x41da22faa0100000 \(1754000000\.25\) vs /);
    expect(() => expect(v1).toBeBitwiseEqual(v2)).toThrow(/sample\.metadata\.leaf: missing on the left/);
  });

  test("still sees a difference in a training-relevant key or a turn number", () => {
    const v2 = v2Metadata();
    (v2.lifecycle as JsonObject[])[1].turn = 3;
    expect(() => expect(sampleWith(v1Metadata())).toBeBitwiseEqual(sampleWith(v2), { metadataProjection: trainingMetadataProjection })).toThrow(
      /sample\.metadata\.lifecycle\[1\]\.turn: 0x4000000000000000 \(2\) vs 0x4008000000000000 \(3\)\n1 difference in total/,
    );
  });

  test("fails on a non-finite lifecycle time, naming the side and the key", () => {
    const broken = v1Metadata();
    (broken.lifecycle as JsonObject[])[1].t1 = Infinity;
    const left = sampleWith(broken);
    const right = sampleWith(v2Metadata());
    const differences = compareBitwise(left, right, { metadataProjection: trainingMetadataProjection });
    expect(differences).toEqual([expect.objectContaining({ path: "sample.metadata", reason: "projection" })]);
    expect(() => expect(left).toBeBitwiseEqual(right, { metadataProjection: trainingMetadataProjection })).toThrow(
      "sample.metadata: metadataProjection threw on the left: trainingMetadataProjection: lifecycle[1].t1 must be a finite number or null, got Infinity",
    );
    // the broken side fails even against itself
    expect(() => expect(left).toBeBitwiseEqual(sampleWith(broken), { metadataProjection: trainingMetadataProjection })).toThrow(
      /threw on the left: .*; on the right: /,
    );
  });
});
