// spelledAlike decides whether a text written for one value may be copied for another: it must never say yes where
// `dumpsPy` would spell the two differently under any settings, and should say yes for a value read again.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { spelledAlike } from "../../src/wire/py-json-alike";
import { dumpsPy, parsePyJson, PY_DEFAULT_JSON, PyBigInt, PyFloat, SpelledPyJson } from "../../src/wire/py-json";
import { ALL_OPTIONS } from "./py-json-settings";
import { expectEqual, expectSame } from "../support/fast-expect";

/** dumpsPy's text (or error) under every setting. */
function spelling(value: unknown): string[] {
  return ALL_OPTIONS.map((options) => {
    try {
      return dumpsPy(value, options);
    } catch (error) {
      return `throws ${(error as Error).message}`;
    }
  });
}

const leaf = fc.oneof(
  fc.string({ maxLength: 4 }),
  fc.constantFrom(0, -0, 1, 1.5, NaN, Infinity, 2 ** 53, true, false, null, "é", "\u0001"),
  fc.constantFrom(new PyFloat(1), new PyFloat(-0), new PyBigInt(10n ** 20n), new PyBigInt(1n)),
);
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, leaf, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 3 }),
  object: fc.dictionary(fc.constantFrom("a", "b", "0", "1", "__proto__"), tie("value"), { maxKeys: 3 }),
})).value;

describe("spelledAlike", () => {
  test("never alike where dumpsPy spells the two apart, under any setting", () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        if (spelledAlike(a, b)) expectEqual(spelling(b), spelling(a));
      }),
      { numRuns: 3000 },
    );
  });

  test("a value read again from its own text is alike (as a re-sent history is), and alike its reading's reading", () => {
    fc.assert(
      fc.property(json, (value) => {
        const text = dumpsPy(value, PY_DEFAULT_JSON);
        const again = parsePyJson(text);
        expectSame(spelledAlike(again, parsePyJson(text)), true);
        expectEqual(spelling(parsePyJson(text)), spelling(again));
      }),
      { numRuns: 1000 },
    );
  });

  test("the differences the writer shows are differences: -0, int against float, key order, big ints, classes", () => {
    expect(spelledAlike(0, -0)).toBe(false);
    expect(spelledAlike(1, new PyFloat(1))).toBe(false);
    expect(spelledAlike(new PyFloat(0), new PyFloat(-0))).toBe(false);
    expect(spelledAlike(new PyBigInt(1n), new PyBigInt(2n))).toBe(false);
    expect(spelledAlike(new PyBigInt(7n), new PyBigInt(7n))).toBe(true);
    expect(spelledAlike({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(spelledAlike(parsePyJson('{"1": 0, "0": 0}'), parsePyJson('{"0": 0, "1": 0}'))).toBe(false);
    expect(spelledAlike(parsePyJson('{"1": 0, "0": 0}'), parsePyJson('{"1": 0, "0": 0}'))).toBe(true);
    expect(spelledAlike([1, [2]], [1, [2]])).toBe(true);
    expect(spelledAlike([1], { 0: 1 })).toBe(false);
    expect(spelledAlike(new SpelledPyJson(1, "1", PY_DEFAULT_JSON), new SpelledPyJson(1, "1", PY_DEFAULT_JSON))).toBe(false);
    expect(spelledAlike(NaN, NaN)).toBe(true);
  });
});
