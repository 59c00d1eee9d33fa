// The bit-tree snapshot text: exact lines for each kind of leaf, the large-array threshold, the edge cases that must
// round-trip and be told apart, usage errors naming the path, and unreadable text naming the line.
import { createHash } from "node:crypto";
import { compareBitwise, formatDifferences } from "../../src/matchers";
import {
  ArrayDigest,
  bitTreeSerializer,
  LARGE_ARRAY_THRESHOLD,
  parseBitTree,
  projectSessionMetadata,
  serializeBitTree,
  SnapshotTextError,
  trajectoryPayload,
} from "../../src/snapshot";
import { BitwiseUsageError } from "../../src/matchers/bitwise-types";
import { Sample } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";
import type { SessionParityRun } from "../../src/fixture/types";

const text = (value: unknown): string => serializeBitTree(value).text;
const roundTrip = (value: unknown): unknown => parseBitTree(text(value));

function nanWithPayload(low: number): number {
  return new Float64Array(new Uint32Array([low, 0x7ff80000]).buffer)[0];
}

describe("bit-tree text", () => {
  test("writes every leaf kind on its own line, numbers as float64 bits with the value beside them", () => {
    expect(text({ zero: 0, negativeZero: -0, half: 0.5, s: 'a"b\n', yes: true, none: null, gone: undefined, big: -12n })).toBe(
      [
        "Object {",
        '  "zero": 0x0000000000000000 (0)',
        '  "negativeZero": 0x8000000000000000 (-0)',
        '  "half": 0x3fe0000000000000 (0.5)',
        '  "s": "a\\"b\\n"',
        '  "yes": true',
        '  "none": null',
        '  "gone": undefined',
        '  "big": -12n',
        "}",
      ].join("\n"),
    );
    expect(text(new Float32Array([0.5, -0]))).toBe("Float32Array(2) [\n  0x3f000000 (0.5)\n  0x80000000 (-0)\n]");
    expect(text(new Tensor("BF16", [1, 2], new Uint16Array([0x3f80, 0xc000])))).toBe("Tensor BF16 [1, 2] [\n  0x3f80 (1)\n  0xc000 (-2)\n]");
    // eslint-disable-next-line no-sparse-arrays -- the hole is the value under test
    expect(text(new Map<unknown, unknown>([["k", [1, , 2]]]))).toBe(
      ["Map(1) {", '  "k" => Array(3) [', "    0x3ff0000000000000 (1)", "    <hole>", "    0x4000000000000000 (2)", "  ]", "}"].join("\n"),
    );
  });

  test("writes a Sample field by field in declared order", () => {
    const lines = text(new Sample({ tokens: [7], response_length: 1 })).split("\n");
    const fields = lines.filter((line) => /^ {2}[a-z_]+: /.test(line)).map((line) => line.trim().split(":")[0]);
    expect(fields).toEqual([...Sample.FIELDS]);
  });

  test(`arrays up to ${LARGE_ARRAY_THRESHOLD} elements are inline; larger ones are one SHA-256 line`, () => {
    expect(text(new Array(LARGE_ARRAY_THRESHOLD).fill(1)).split("\n")).toHaveLength(LARGE_ARRAY_THRESHOLD + 2);
    const large = new Int32Array(LARGE_ARRAY_THRESHOLD + 1).fill(3);
    // SHA-256 of 4097 little-endian int32 3s, computed independently of the writer.
    const expected = createHash("sha256").update(Buffer.from(large.buffer)).digest("hex");
    expect(text(large)).toBe(`Int32Array(4097) length 4097 sha256 ${expected}`);
    const tensor = new Tensor("I32", [4097, 1], large);
    expect(text(tensor)).toBe(`Tensor I32 [4097, 1] length 4097 sha256 ${expected}`);
    expect(roundTrip(tensor)).toEqual(new ArrayDigest("Tensor<I32>", [4097, 1], 4097, expected, false));
    // The same bytes as a float64 number array are another kind and another digest.
    expect(text(Array.from(large))).toMatch(/^Array\(4097\) length 4097 sha256 [0-9a-f]{64}$/);
    expect(text(Array.from(large))).not.toContain(expected);
  });

  test("a large number array digests its float64 bytes (over several hash chunks, a view's own range only); a non-number anywhere keeps it inline", () => {
    const length = 40_000; // more than two of the writer's 16384-element hash chunks, not a multiple of them
    const numbers = Array.from({ length }, (_, i) => (i % 7 === 0 ? -0 : i % 11 === 0 ? nanWithPayload(i) : i * 0.375 - 9));
    // SHA-256 of the numbers' float64 bytes, computed independently of the writer (one full copy, one update).
    const sha = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");
    const expected = sha(new Uint8Array(Float64Array.from(numbers).buffer));
    expect(text(numbers)).toBe(`Array(${length}) length ${length} sha256 ${expected}`);
    // The stored form builds the full float64 copy; its digest is the same.
    expect(serializeBitTree(numbers, { largeArrays: "safetensors" }).text).toBe(`Array(${length}) length ${length} sha256 ${expected} stored`);
    // A typed array that is a view into a larger buffer digests only its own bytes.
    const backing = new Float64Array(length + 10).fill(5);
    const view = backing.subarray(3, 3 + length);
    view.set(numbers);
    expect(text(view)).toBe(`Float64Array(${length}) length ${length} sha256 ${expected}`);
    // A string past the first hash chunk: not a number array, so every element is written inline.
    const mixed: unknown[] = numbers.slice(0, LARGE_ARRAY_THRESHOLD + 1);
    mixed.push("late");
    const lines = text(mixed).split("\n");
    expect(lines).toHaveLength(LARGE_ARRAY_THRESHOLD + 4);
    expect(lines[lines.length - 2]).toBe('  "late"');
    const lateString = numbers.slice();
    (lateString as unknown[])[20_000] = "x";
    expect(text(lateString).split("\n")).toHaveLength(length + 2);
  });

  test("-0, NaN payloads, Float32Array vs Float64Array and undefined vs missing round-trip and are told apart", () => {
    const values = {
      zero: 0,
      negativeZero: -0,
      quietNaN: nanWithPayload(0),
      payloadNaN: nanWithPayload(1),
      payloads: new Float64Array([nanWithPayload(0), nanWithPayload(2)]),
      f32: new Float32Array([1.5]),
      f64: new Float64Array([1.5]),
      undefinedKey: undefined,
    };
    const back = roundTrip(values) as Record<string, unknown>;
    expect(compareBitwise(back, values)).toEqual([]);
    expect(text(back)).toBe(text(values));
    expect(Object.prototype.hasOwnProperty.call(back, "undefinedKey")).toBe(true);

    const missing: Record<string, unknown> = { ...values };
    delete missing.undefinedKey;
    const told = compareBitwise(roundTrip({ ...values, zero: -0, payloadNaN: nanWithPayload(0), f32: new Float64Array([1.5]) }), roundTrip(missing));
    expect(formatDifferences(told)).toBe(
      [
        "value.zero: -0 vs +0",
        "value.payloadNaN: 0x7ff8000000000000 (NaN) vs 0x7ff8000000000001 (NaN)",
        "value.f32: Float64Array(1) vs Float32Array(1)",
        "value.undefinedKey: missing on the right",
      ].join("\n"),
    );
  });

  test("a function, a cycle or a Date is a usage error naming its path", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { back: cyclic };
    expect(() => text({ metadata: { hook: function onTurn() {} } })).toThrow(
      new BitwiseUsageError(
        "value.metadata.hook",
        "a function (onTurn) has no bit tree to snapshot (only numbers, strings, booleans, bigints, null, undefined, arrays, typed arrays, Tensors, plain objects, Maps and classes with static FIELDS have)",
      ),
    );
    expect(() => text(cyclic)).toThrow("value.self.back: cyclic reference (the value contains itself); a cycle has no bit tree to snapshot");
    expect(() => text(new Sample({ metadata: { at: new Date(0) as never } }))).toThrow("sample.metadata.at: a Date has no bit tree to snapshot");
    const extra = new Sample();
    (extra as unknown as Record<string, unknown>).leaf = 1;
    expect(() => text(extra)).toThrow('sample.leaf: undeclared field: Sample declares no field "leaf"');
  });

  test("text edited into an unreadable form fails with the line and what is wrong", () => {
    const good = text({ a: [1, 2], b: "x" });
    const lines = good.split("\n");
    const readError = (edited: string): SnapshotTextError => {
      try {
        parseBitTree(edited);
      } catch (error) {
        if (error instanceof SnapshotTextError) return error;
        throw error;
      }
      throw new Error("parsed");
    };
    expect(readError(good.replace("0x4000000000000000 (2)", "0x4000000000000000 (3)")).message).toBe(
      "line 4: the value beside the bits (3) is not what the bits hold (2)",
    );
    expect(readError(good.replace("Array(2)", "Array(3)")).message).toBe("line 2: Array(3) holds 2 elements");
    expect(readError(good.replace('  "b": "x"', '  "b": x')).message).toBe('line 6: not a bit-tree value: "x"');
    expect(readError(lines.slice(0, -1).join("\n")).message).toBe("line 6: the text ends inside a value (a closing bracket is missing)");
    expect(readError(good.replace('  "b"', '   "b"')).message).toBe("line 6: expected 2 spaces of indentation, got 3");
  });

  test("the exported serializer prints Samples and tensors as bit trees for toMatchSnapshot", () => {
    const sample = new Sample({ reward: -0 });
    expect(bitTreeSerializer.test(sample)).toBe(true);
    expect(bitTreeSerializer.test({ reward: -0 })).toBe(false);
    const printed = bitTreeSerializer.serialize(sample, {}, "  ");
    expect(printed.split("\n")[0]).toBe("Sample {");
    expect(printed).toContain("\n    reward: 0x8000000000000000 (-0)\n");
    expect(printed.endsWith("\n  }")).toBe(true);
  });

  test("trajectoryPayload keeps samples and session metadata and hides the v2 tree's commit times", () => {
    const run: SessionParityRun = {
      version: "v2",
      samples: [new Sample({ tokens: [1] })],
      sessionMetadata: { max_trim_tokens: 0, tree: { nodes: [{ id: 0, parent: null, committed_at: 1764520000.25 }], leaves: [] } },
      preCollect: { session_id: "s", records: [], metadata: {} },
      emptyReason: null,
    };
    expect(trajectoryPayload(run)).toEqual([
      {
        version: "v2",
        samples: run.samples,
        sessionMetadata: { max_trim_tokens: 0, tree: { nodes: [{ id: 0, parent: null, committed_at: "<runtime>" }], leaves: [] } },
        emptyReason: null,
        failure: null,
      },
    ]);
    expect((run.sessionMetadata.tree as { nodes: Array<{ committed_at: unknown }> }).nodes[0].committed_at).toBe(1764520000.25);
    expect(projectSessionMetadata({ a: 1 })).toEqual({ a: 1 });
  });
});
