// The arithmetic "binary" unit against fast-check's own: the same strings from the same seeds, the same strings
// accepted without context, and the same counterexamples after shrinking, so suites may use either.
import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { BINARY_UNIT, binaryString } from "./binary-unit";

const CONSTRAINTS: Array<Omit<fc.StringConstraints, "unit">> = [{}, { maxLength: 4 }, { maxLength: 12 }, { minLength: 1, maxLength: 6 }, { size: "large" }];
const SEEDS = [1, 42, 20261201, -7, 987654321];

describe("binaryString", () => {
  it("draws exactly what fc.string({ unit: 'binary' }) draws from the same seeds", () => {
    for (const constraints of CONSTRAINTS) {
      for (const seed of SEEDS) {
        const ours = fc.sample(binaryString(constraints), { seed, numRuns: 300 });
        const library = fc.sample(fc.string({ ...constraints, unit: "binary" }), { seed, numRuns: 300 });
        expect(ours).toEqual(library);
      }
    }
  });

  it("accepts without context exactly the strings the library's unit accepts", () => {
    const library = fc.string({ unit: "binary" });
    const ours = binaryString();
    const texts = ["", "a", "__proto__", "\u0000", "\ud7ff", "\ud800", "\udfff", "\ue000", "😀", "\ud83d\ude00\ud83d", "\uffff", "\u{10ffff}", "a\udc00b", "é"];
    for (const text of texts) expect([text, ours.canShrinkWithoutContext(text)]).toEqual([text, library.canShrinkWithoutContext(text)]);
    for (const text of ["a", "\ud800", "😀", "ab", "", "\u{10ffff}"]) {
      expect([text, BINARY_UNIT.canShrinkWithoutContext(text)]).toEqual([
        text,
        fc.string({ unit: "binary", minLength: 1, maxLength: 1 }).canShrinkWithoutContext(text),
      ]);
    }
  });

  it("shrinks a failing property to the same counterexample along the same path", () => {
    const fails = (text: string) => !/[\u0100-\uffff]/u.test(text) || text.length < 2;
    for (const seed of SEEDS) {
      const ours = fc.check(fc.property(binaryString({ maxLength: 10 }), fails), { seed, numRuns: 500 });
      const library = fc.check(fc.property(fc.string({ unit: "binary", maxLength: 10 }), fails), { seed, numRuns: 500 });
      expect(ours.failed).toBe(true);
      expect([ours.counterexample, ours.counterexamplePath, ours.numShrinks]).toEqual([library.counterexample, library.counterexamplePath, library.numShrinks]);
    }
  });

  it("is also a unit for fc.jsonValue's strings", () => {
    for (const seed of SEEDS) {
      expect(fc.sample(fc.jsonValue({ stringUnit: BINARY_UNIT, maxDepth: 2 }), { seed, numRuns: 200 })).toEqual(
        fc.sample(fc.jsonValue({ stringUnit: "binary", maxDepth: 2 }), { seed, numRuns: 200 }),
      );
    }
  });
});
