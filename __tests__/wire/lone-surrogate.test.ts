// hasLoneSurrogate (isWellFormed where the runtime has it) finds exactly what the /\p{Cs}/u regex finds: a UTF-16
// surrogate without its pair, the strings the samples metadata refuses (UTF-8 cannot carry them).
import { expect, it } from "@jest/globals";
import fc from "fast-check";
import { hasLoneSurrogate } from "../../src/wire/wire-json";
import { expectSame } from "../support/fast-expect";

const LONE_SURROGATE = /\p{Cs}/u;

it("agrees with the /\\p{Cs}/u regex on strings of any UTF-16 code units, pairs and halves included", () => {
  for (const text of ["", "ok", "😀", "\ud83d", "\ude00", "\ude00\ud83d", "a\ud83d\ude00b", "x\ud800", "\udfffy", "天气"]) {
    expect(hasLoneSurrogate(text)).toBe(LONE_SURROGATE.test(text));
  }
  const unit = fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0xd800, max: 0xdfff }));
  fc.assert(
    fc.property(fc.array(unit, { maxLength: 12 }), (units) => {
      const text = String.fromCharCode(...units);
      expectSame(hasLoneSurrogate(text), LONE_SURROGATE.test(text));
    }),
    { numRuns: 3000, seed: 29 },
  );
});
