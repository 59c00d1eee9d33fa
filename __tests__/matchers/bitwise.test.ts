// compareBitwise and the toBeBitwiseEqual matcher on every case of SPEC §5: verdicts and message text.
// Each case checks the raw differences and the rendered failure message.
import { PrefixCacheInfo, Sample, SpecInfo } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";
import { BitwiseUsageError, MISSING, type BitwiseOptions, compareBitwise, compareBitwiseSummary, formatDifferences, isBitwiseEqual } from "../../src/matchers";
import { fromFloat64Bits, thrownMessage } from "./helpers";

describe("signed zero", () => {
  test("at the top level", () => {
    const differences = compareBitwise(0, -0);
    expect(differences).toEqual([{ path: "value", reason: "value", left: 0, right: -0 }]);
    expect(formatDifferences(differences)).toBe("value: +0 vs -0");
    expect(() => expect(0).toBeBitwiseEqual(-0)).toThrow(/value: \+0 vs -0\n1 difference in total/);
    expect(-0).toBeBitwiseEqual(-0);
    expect(0).not.toBeBitwiseEqual(-0);
  });

  test("as a Sample field", () => {
    const differences = compareBitwise(new Sample({ reward: 0 }), new Sample({ reward: -0 }));
    expect(differences.map((d) => d.path)).toEqual(["sample.reward"]);
    expect(() => expect(new Sample({ reward: 0 })).toBeBitwiseEqual(new Sample({ reward: -0 }))).toThrow("sample.reward: +0 vs -0");
  });

  test("inside a number array", () => {
    const differences = compareBitwise([1, 0, 2], [1, -0, 2]);
    expect(differences).toEqual([{ path: "value[1]", reason: "value", left: 0, right: -0 }]);
    expect(() => expect([1, 0, 2]).toBeBitwiseEqual([1, -0, 2])).toThrow(/value\[1\]: \+0 vs -0/);
    expect([1, -0, 2]).toBeBitwiseEqual([1, -0, 2]);
  });

  test("inside a Float64Array", () => {
    const left = new Float64Array([3, -0, 0.5]);
    const right = new Float64Array([3, 0, 0.5]);
    const [difference, ...rest] = compareBitwise(left, right);
    expect(rest).toHaveLength(0);
    expect(difference).toMatchObject({ path: "value[1]", reason: "value", leftBits: "8000000000000000", rightBits: "0000000000000000" });
    expect(() => expect(left).toBeBitwiseEqual(right)).toThrow(/value\[1\]: -0 vs \+0/);
    expect(left).toBeBitwiseEqual(new Float64Array([3, -0, 0.5]));
  });

  test("inside a Tensor, reported at its coordinates", () => {
    const left = new Tensor("F64", [2, 3], new Float64Array([1, 2, 3, 0, 5, 6]));
    const right = new Tensor("F64", [2, 3], new Float64Array([1, 2, 3, -0, 5, 6]));
    expect(compareBitwise(left, right).map((d) => d.path)).toEqual(["tensor[1, 0]"]);
    expect(() => expect(left).toBeBitwiseEqual(right)).toThrow(/tensor\[1, 0\]: \+0 vs -0/);
    expect(left).toBeBitwiseEqual(left.clone());
  });
});

describe("NaN payloads", () => {
  const quiet = fromFloat64Bits(0x7ff8000000000000n);
  const payload = fromFloat64Bits(0x7ff8000000000001n);

  test("plain numbers with different payloads differ, equal payloads match", () => {
    expect(compareBitwise(quiet, payload)).toHaveLength(1);
    expect(isBitwiseEqual(quiet, fromFloat64Bits(0x7ff8000000000000n))).toBe(true);
    expect(() => expect(quiet).toBeBitwiseEqual(payload)).toThrow("value: 0x7ff8000000000000 (NaN) vs 0x7ff8000000000001 (NaN)");
  });

  test("inside a Float64Array the raw element bits are reported", () => {
    const left = new Float64Array(new BigUint64Array([0x3ff0000000000000n, 0x7ff8000000000000n]).buffer);
    const right = new Float64Array(new BigUint64Array([0x3ff0000000000000n, 0x7ff8000000000001n]).buffer);
    expect(compareBitwise(left, right)).toEqual([expect.objectContaining({ path: "value[1]", leftBits: "7ff8000000000000", rightBits: "7ff8000000000001" })]);
    expect(() => expect(left).toBeBitwiseEqual(right)).toThrow("value[1]: 0x7ff8000000000000 (NaN) vs 0x7ff8000000000001 (NaN)");
    expect(left).not.toBeBitwiseEqual(right);
  });
});

test("Float32Array vs Float64Array holding equal values is a type difference", () => {
  const left = new Float32Array([0.5, 1, 2]);
  const right = new Float64Array([0.5, 1, 2]);
  expect(compareBitwise(left, right)).toEqual([{ path: "value", reason: "type", left, right }]);
  expect(() => expect(left).toBeBitwiseEqual(right)).toThrow("value: Float32Array(3) vs Float64Array(3)");
  expect(left).toBeBitwiseEqual(new Float32Array([0.5, 1, 2]));
});

describe("Tensors", () => {
  test("equal bytes but a different shape", () => {
    const data = new Int32Array([1, 2, 3, 4, 5, 6]);
    const left = new Tensor("I32", [2, 3], data);
    const right = new Tensor("I32", [3, 2], data.slice());
    expect(compareBitwise(left, right)).toEqual([{ path: "tensor", reason: "shape", left: [2, 3], right: [3, 2] }]);
    expect(() => expect(left).toBeBitwiseEqual(right)).toThrow("tensor: shape [2, 3] vs [3, 2]");
  });

  test("different dtypes", () => {
    const left = new Tensor("U16", [2], new Uint16Array([1, 2]));
    const right = new Tensor("BF16", [2], new Uint16Array([1, 2]));
    expect(() => expect(left).toBeBitwiseEqual(right)).toThrow("tensor: dtype U16 vs BF16");
  });

  test("an int32 replay tensor difference names the element and counts all of them", () => {
    const left = new Tensor(
      "I32",
      [4, 2, 3],
      Int32Array.from({ length: 24 }, (_, i) => i),
    );
    const rightData = left.data.slice();
    rightData[1 * 6 + 1 * 3 + 2] = -1;
    rightData[23] = 99;
    const sampleLeft = new Sample({ rollout_routed_experts: left });
    const sampleRight = new Sample({ rollout_routed_experts: new Tensor("I32", [4, 2, 3], rightData) });
    const summary = compareBitwiseSummary(sampleLeft, sampleRight);
    expect(summary.total).toBe(2);
    expect(summary.differences.map((d) => d.path)).toEqual(["sample.rollout_routed_experts[1, 1, 2]", "sample.rollout_routed_experts[3, 1, 2]"]);
    expect(() => expect(sampleLeft).toBeBitwiseEqual(sampleRight)).toThrow(
      /sample\.rollout_routed_experts\[1, 1, 2\]: 11 vs -1 \(rollout_routed_experts: token row 1, layer 1, top-k slot 2\)\n.*\[3, 1, 2\]: 23 vs 99 \(rollout_routed_experts: token row 3, layer 1, top-k slot 2\)\n2 differences in total/,
    );
  });

  test("a sliced view compares by its own bytes only", () => {
    const full = new Tensor("I32", [3, 2], new Int32Array([1, 2, 3, 4, 5, 6]));
    expect(full.sliceRows(2)).toBeBitwiseEqual(new Tensor("I32", [2, 2], new Int32Array([1, 2, 3, 4])));
    const tail = new Int32Array([9, 9, 3, 4]).subarray(2);
    expect(tail).toBeBitwiseEqual(new Int32Array([3, 4]));
  });
});

describe("declared-field classes", () => {
  test("an undeclared property on a Sample is named", () => {
    const left = new Sample({ tokens: [1, 2] });
    const right = new Sample({ tokens: [1, 2] });
    Object.assign(left, { debug_note: "added by a test" });
    expect(compareBitwise(left, right)).toEqual([
      expect.objectContaining({ path: "sample.debug_note", reason: "undeclared", left: "added by a test", right: MISSING }),
    ]);
    expect(() => expect(left).toBeBitwiseEqual(right)).toThrow('sample.debug_note: undeclared field on the left: Sample declares no field "debug_note"');
    // the same undeclared field on both sides still fails: the declaration is the contract
    Object.assign(right, { debug_note: "added by a test" });
    expect(() => expect(left).toBeBitwiseEqual(right)).toThrow(/sample\.debug_note: undeclared field on the left and the right/);
  });

  test("non-enumerable and symbol-keyed own properties are undeclared fields too", () => {
    const hidden = new Sample();
    Object.defineProperty(hidden, "cache", { value: [1], enumerable: false });
    expect(() => expect(hidden).toBeBitwiseEqual(new Sample())).toThrow('sample.cache: undeclared field on the left: Sample declares no field "cache"');
    const tagged = new Sample();
    (tagged as unknown as Record<symbol, unknown>)[Symbol("tag")] = 1;
    expect(() => expect(new Sample()).toBeBitwiseEqual(tagged)).toThrow("undeclared field on the right: Sample declares no field Symbol(tag)");
    expect(compareBitwise(tagged, new Sample())).toEqual([expect.objectContaining({ reason: "undeclared", path: 'sample["Symbol(tag)"]' })]);
  });

  test("nested SpecInfo / PrefixCacheInfo are compared field by field", () => {
    const left = new Sample({ spec_info: new SpecInfo({ spec_verify_ct: 3 }), prefix_cache_info: new PrefixCacheInfo({ cached_tokens: 7 }) });
    const right = new Sample({ spec_info: new SpecInfo({ spec_verify_ct: 4 }), prefix_cache_info: new PrefixCacheInfo({ cached_tokens: 7 }) });
    expect(() => expect(left).toBeBitwiseEqual(right)).toThrow(/sample\.spec_info\.spec_verify_ct: 0x4008000000000000 \(3\) vs 0x4010000000000000 \(4\)/);
  });

  test("a user class with static FIELDS is walked; a different class is a type difference", () => {
    class Turn {
      static readonly FIELDS = ["role", "ids"] as const;
      constructor(
        readonly role: string,
        readonly ids: number[],
      ) {}
    }
    class OtherTurn {
      static readonly FIELDS = ["role", "ids"] as const;
      constructor(
        readonly role: string,
        readonly ids: number[],
      ) {}
    }
    expect(new Turn("user", [1])).toBeBitwiseEqual(new Turn("user", [1]));
    expect(() => expect(new Turn("user", [1])).toBeBitwiseEqual(new Turn("user", [2]))).toThrow(
      /turn\.ids\[0\]: 0x3ff0000000000000 \(1\) vs 0x4000000000000000 \(2\)/,
    );
    expect(() => expect(new Turn("user", [1])).toBeBitwiseEqual(new OtherTurn("user", [1]))).toThrow("turn: Turn vs OtherTurn");
    expect(() => expect(new Sample()).toBeBitwiseEqual({ ...new Sample() })).toThrow(/sample: Sample vs Object \{group_index, index/);
  });
});

describe("plain objects, null, undefined and missing keys", () => {
  test("the same entries in a different key order pass", () => {
    const left = { a: 1, b: { x: [1, 2], y: "s" }, c: null };
    const right = { c: null, b: { y: "s", x: [1, 2] }, a: 1 };
    expect(compareBitwise(left, right)).toEqual([]);
    expect(left).toBeBitwiseEqual(right);
    expect(thrownMessage(() => expect(left).not.toBeBitwiseEqual(right))).toMatch(
      /expect\(received\)\.not\.toBeBitwiseEqual\(expected\)\n\nReceived and expected are bitwise equal/,
    );
  });

  test("null, undefined and a missing key are three different things", () => {
    const withNull = { a: null };
    const withUndefined = { a: undefined };
    const without = {};
    expect(compareBitwise(withNull, withUndefined)).toEqual([{ path: "value.a", reason: "type", left: null, right: undefined }]);
    expect(() => expect(withNull).toBeBitwiseEqual(withUndefined)).toThrow("value.a: null vs undefined");
    expect(compareBitwise(withUndefined, without)).toEqual([{ path: "value.a", reason: "missing", left: undefined, right: MISSING }]);
    expect(() => expect(withUndefined).toBeBitwiseEqual(without)).toThrow("value.a: missing on the right");
    expect(() => expect(without).toBeBitwiseEqual(withNull)).toThrow("value.a: missing on the left");
    expect(null).not.toBeBitwiseEqual(undefined);
    for (const value of [withNull, withUndefined, without]) expect(value).toBeBitwiseEqual({ ...value });
  });

  test("a plain object of another realm (Node's Response.json() under Jest's sandbox) is a plain object", async () => {
    const foreign = (await new Response('{"a":{"b":[1,null]}}').json()) as Record<string, unknown>;
    expect(Object.getPrototypeOf(foreign)).not.toBe(Object.prototype);
    expect(foreign).toBeBitwiseEqual({ a: { b: [1, null] } });
    expect(() => expect(foreign).toBeBitwiseEqual({ a: { b: [1, 0] } })).toThrow("value.a.b[1]: null vs number +0");
  });

  test("a hole of a sparse array is a missing index, not an undefined element", () => {
    // eslint-disable-next-line no-sparse-arrays
    const holey = [, 1];
    expect(compareBitwise(holey, [undefined, 1])).toEqual([{ path: "value[0]", reason: "missing", left: MISSING, right: undefined }]);
    expect(() => expect([undefined, 1]).toBeBitwiseEqual(holey)).toThrow("value[0]: missing on the right");
    // eslint-disable-next-line no-sparse-arrays
    expect(holey).toBeBitwiseEqual([, 1]);
    expect([undefined, 1]).toBeBitwiseEqual([undefined, 1]);
  });

  test("a Sample metadata key missing on one side points at the leaf", () => {
    const left = new Sample({ metadata: { turn: 1, leaf: { node_id: 8 } } });
    const right = new Sample({ metadata: { turn: 1 } });
    expect(() => expect(left).toBeBitwiseEqual(right)).toThrow("sample.metadata.leaf: missing on the right");
  });

  test("number vs string, arrays of different length, odd keys and Maps", () => {
    expect(() => expect({ v: 1 }).toBeBitwiseEqual({ v: "1" })).toThrow('value.v: number 0x3ff0000000000000 (1) vs string "1"');
    expect(() => expect([1, 2, 3]).toBeBitwiseEqual([1, 2])).toThrow("value: length 3 vs 2");
    expect(() => expect({ "odd key": true }).toBeBitwiseEqual({ "odd key": false })).toThrow('value["odd key"]: true vs false');
    expect(new Map([["a", [1]]])).toBeBitwiseEqual(new Map([["a", [1]]]));
    expect(() => expect(new Map([["a", 1]])).toBeBitwiseEqual(new Map([["b", 1]]))).toThrow(
      /value\.get\("a"\): missing on the right\n {2}value\.get\("b"\): missing on the left/,
    );
    expect(() => expect(1n).toBeBitwiseEqual(2n)).toThrow("value: 1n vs 2n");
  });

  test("long strings show where they start to differ", () => {
    const left = "x".repeat(100) + "left tail";
    const right = "x".repeat(100) + "right tail";
    expect(() => expect({ response: left }).toBeBitwiseEqual({ response: right })).toThrow(
      /value\.response: strings differ at index 100 \(lengths 109 vs 110\)/,
    );
  });
});

describe("usage errors name the path", () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ["a function", () => 1, /value\.metadata\.hook: a function on the left cannot be compared bitwise/],
    ["a Date", new Date(0), /value\.metadata\.hook: a Date on the left cannot be compared bitwise/],
    ["a Symbol", Symbol("tag"), /value\.metadata\.hook: a symbol \(Symbol\(tag\)\) on the left cannot be compared bitwise/],
  ];
  test.each(cases)("%s", (_name, bad, message) => {
    const hook = bad;
    const left = { metadata: { hook } };
    const right = { metadata: { hook } };
    expect(() => compareBitwise(left, right)).toThrow(BitwiseUsageError);
    expect(() => compareBitwise(left, right)).toThrow(message);
    expect(() => expect(left).toBeBitwiseEqual(right)).toThrow(message);
    expect(() => expect(left).not.toBeBitwiseEqual(right)).toThrow(message);
    // also when the other side lacks the key: never a silent pass under .not
    expect(() => expect(left).not.toBeBitwiseEqual({ metadata: {} })).toThrow(message);
  });

  test("a cyclic object", () => {
    const left: Record<string, unknown> = { a: [1] };
    left.self = left;
    const right: Record<string, unknown> = { a: [1] };
    right.self = right;
    let error: unknown;
    try {
      compareBitwise(left, right);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(BitwiseUsageError);
    expect((error as BitwiseUsageError).path).toBe("value.self");
    expect(() => expect(left).toBeBitwiseEqual(right)).toThrow(/value\.self: cyclic reference on the left/);
    // shared, non-cyclic references are fine
    const shared = [1, 2];
    expect({ a: shared, b: shared }).toBeBitwiseEqual({ a: [1, 2], b: [1, 2] });
  });

  test("an instance of a class without FIELDS, a Set, a Promise and bad options", () => {
    class Undeclared {
      x = 1;
    }
    expect(() => compareBitwise([new Undeclared()], [new Undeclared()])).toThrow(/value\[0\]: an instance of Undeclared, a class without static FIELDS/);
    expect(() => compareBitwise({ s: new Set() }, { s: new Set() })).toThrow(/value\.s: a Set on the left/);
    expect(() => compareBitwise(Promise.resolve(1), 1)).toThrow(/value: a Promise on the left/);
    expect(() => compareBitwise(1, 1, { maxDifferences: -1 })).toThrow(/maxDifferences must be a non-negative integer/);
  });

  test("a misspelt or non-object options argument is refused, never silently ignored", () => {
    const typo = { maxDiferences: 3 } as unknown as BitwiseOptions;
    expect(() => compareBitwise(1, 1, typo)).toThrow('unknown bitwise option "maxDiferences"; known options: maxDifferences, metadataProjection, rootPath');
    expect(() => expect(1).toBeBitwiseEqual(1, typo)).toThrow(/unknown bitwise option "maxDiferences"/);
    expect(() => expect(1).not.toBeBitwiseEqual(2, typo)).toThrow(/unknown bitwise option "maxDiferences"/);
    expect(() => expect(1).toBeBitwiseEqual(1, "options" as unknown as BitwiseOptions)).toThrow("bitwise options must be an object, got string");
    expect(() => expect(1).toBeBitwiseEqual(1, [] as unknown as BitwiseOptions)).toThrow("bitwise options must be an object, got an array");
    expect(() => expect.bitwiseEqualTo(1, typo)).toThrow(BitwiseUsageError);
    expect(() => expect.not.bitwiseEqualTo(1, { metadataProjecton: () => ({}) } as unknown as BitwiseOptions)).toThrow(
      /unknown bitwise option "metadataProjecton"/,
    );
    expect(() => isBitwiseEqual(1, 1, typo)).toThrow(BitwiseUsageError);
  });
});

test("a difference at index 999 999 of a 1 000 000-element log-prob array is reported with that index", () => {
  const left = Array.from({ length: 1_000_000 }, (_, i) => -i / 128);
  const right = left.slice();
  right[999_999] = fromFloat64Bits(0x3fe0000000000001n);
  left[999_999] = 0.5;
  const differences = compareBitwise(new Sample({ rollout_log_probs: left }), new Sample({ rollout_log_probs: right }));
  expect(differences).toEqual([{ path: "sample.rollout_log_probs[999999]", reason: "value", left: 0.5, right: 0.5000000000000001 }]);
  expect(() => expect(new Sample({ rollout_log_probs: left })).toBeBitwiseEqual(new Sample({ rollout_log_probs: right }))).toThrow(
    "sample.rollout_log_probs[999999]: 0x3fe0000000000000 (0.5) vs 0x3fe0000000000001 (0.5000000000000001)",
  );
});

describe("reporting limits", () => {
  const left = Array.from({ length: 25 }, (_, i) => i);
  const right = left.map((v) => v + 0.25);

  test("the message shows 10 differences and the total; maxDifferences changes how many", () => {
    const message = thrownMessage(() => expect(left).toBeBitwiseEqual(right));
    const lines = message.split("\n").filter((line) => line.startsWith("  value["));
    expect(lines).toHaveLength(10);
    expect(lines[0]).toBe("  value[0]: +0 vs 0x3fd0000000000000 (0.25)");
    expect(message).toMatch(/\n25 differences in total \(the first 10 shown\)$/);
    expect(message).toMatch(/^expect\(received\)\.toBeBitwiseEqual\(expected\)\n\nReceived \(left\) and expected \(right\) are not bitwise equal:/);
    const three = thrownMessage(() => expect(left).toBeBitwiseEqual(right, { maxDifferences: 3 }));
    expect(three.split("\n").filter((line) => line.startsWith("  value["))).toHaveLength(3);
    expect(three).toMatch(/25 differences in total \(the first 3 shown\)$/);
    expect(three).toMatch(/^expect\(received\)\.toBeBitwiseEqual\(expected, options\)/);
  });

  test("compareBitwiseSummary counts every difference past maxDifferences", () => {
    const summary = compareBitwiseSummary(left, right, { maxDifferences: 2 });
    expect(summary.total).toBe(25);
    expect(summary.differences.map((d) => d.path)).toEqual(["value[0]", "value[1]"]);
    expect(compareBitwise(left, right)).toHaveLength(25);
    expect(compareBitwise(left, right, { rootPath: "run.samples[0].tokens" })[0].path).toBe("run.samples[0].tokens[0]");
  });
});

describe("expect.bitwiseEqualTo", () => {
  test("works inside toEqual, in both directions, and with .not", () => {
    const quietNaN = fromFloat64Bits(0x7ff8000000000000n);
    const payloadNaN = fromFloat64Bits(0x7ff8000000000001n);
    const sample = new Sample({ tokens: [1, 2, 3], response_length: 1, rollout_log_probs: [quietNaN] });
    const copy = new Sample({ tokens: [1, 2, 3], response_length: 1, rollout_log_probs: [quietNaN] });
    const flipped = new Sample({ tokens: [1, 2, 3], response_length: 1, rollout_log_probs: [payloadNaN] });
    expect({ run: sample }).toEqual({ run: expect.bitwiseEqualTo(copy) });
    expect({ run: flipped }).toEqual({ run: expect.not.bitwiseEqualTo(copy) });
    const message = thrownMessage(() => expect({ run: flipped }).toEqual({ run: expect.bitwiseEqualTo(copy) }));
    expect(message).toContain("BitwiseEqualTo<Sample>");
    // toEqual alone cannot see the NaN payload; the asymmetric matcher can
    expect(flipped).toEqual(copy);
  });

  test("usage errors surface through toEqual", () => {
    expect(() => expect({ f: () => 1 }).toEqual(expect.bitwiseEqualTo({ f: 1 }))).toThrow(/value\.f: a function/);
  });

  test("a usage error after the first difference still throws: .not never passes silently", () => {
    const f = (): number => 1;
    const left = { a: 1, f };
    const right = { a: 2, f };
    expect(() => isBitwiseEqual(left, right)).toThrow(/value\.f: a function \(f\) on the left cannot be compared bitwise/);
    expect(() => expect(left).toEqual(expect.not.bitwiseEqualTo(right))).toThrow(/value\.f: a function/);
    expect(() => expect(left).not.toBeBitwiseEqual(right)).toThrow(/value\.f: a function/);
    expect(isBitwiseEqual({ a: 1 }, { a: 2 })).toBe(false);
    expect(isBitwiseEqual({ a: 1 }, { a: 1 })).toBe(true);
  });
});

describe("typed-array element formatting", () => {
  test("float32 elements show their 32-bit pattern, integers their value", () => {
    const f32 = new Float32Array([0.5, 1]);
    const f32Other = new Float32Array(new Uint32Array([0x3f000001, 0x3f800000]).buffer);
    expect(() => expect(f32).toBeBitwiseEqual(f32Other)).toThrow("value[0]: 0x3f000000 (0.5) vs 0x3f000001 (0.5000000596046448)");
    expect(() => expect(new Int32Array([5, -1])).toBeBitwiseEqual(new Int32Array([6, -1]))).toThrow("value[0]: 5 vs 6");
    expect(() => expect(new BigInt64Array([1n])).toBeBitwiseEqual(new BigInt64Array([2n]))).toThrow("value[0]: 1n vs 2n");
    expect(() => expect(new Uint8Array([1, 2])).toBeBitwiseEqual(new Uint8Array([1, 2, 3]))).toThrow("value: length 2 vs 3");
  });

  test("16-bit float tensors show the raw pattern and the decoded value", () => {
    const left = new Tensor("BF16", [2], new Uint16Array([0x3f80, 0x0000]));
    const right = new Tensor("BF16", [2], new Uint16Array([0xbf80, 0x8000]));
    expect(() => expect(left).toBeBitwiseEqual(right)).toThrow(/tensor\[0\]: 0x3f80 \(1\) vs 0xbf80 \(-1\)\n {2}tensor\[1\]: \+0 vs -0/);
    const half = new Tensor("F16", [1], new Uint16Array([0x3c00]));
    expect(() => expect(half).toBeBitwiseEqual(new Tensor("F16", [1], new Uint16Array([0x3e00])))).toThrow("tensor[0]: 0x3c00 (1) vs 0x3e00 (1.5)");
  });
});
