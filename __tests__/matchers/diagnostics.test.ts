// Failure texts that point a user at the fix: a Sample compared with plain JSON, and expect.bitwiseEqualTo
// inside toEqual showing the differing bits in Jest's diff.
import { Sample } from "../../src/wire/sample";
import { bitwiseEqualTo } from "../../src/matchers/bitwise-equal-to";
import { thrownMessage } from "./helpers";

test("a Sample against its plain JSON (a golden file read back) says to use Sample.fromDict", () => {
  const sample = Sample.fromDict({ tokens: [1, 2], response: "ok", rollout_log_probs: [-0.5] });
  const golden = JSON.parse(JSON.stringify(sample)) as Record<string, unknown>;
  const message = thrownMessage(() => expect(sample).toBeBitwiseEqual(golden));
  expect(message).toContain("(a Sample only equals a Sample: build one from the plain JSON with Sample.fromDict(json))");
  expect(sample).toBeBitwiseEqual(Sample.fromDict(golden));
});

test("expect.bitwiseEqualTo inside toEqual shows the differing bits in the diff", () => {
  const message = thrownMessage(() =>
    expect({ log_probs: new Float64Array([0.5, 0.25]) }).toEqual({ log_probs: expect.bitwiseEqualTo(new Float64Array([0.5, 0.25000000000000006])) }),
  );
  expect(message).toContain(
    "BitwiseEqualTo<Float64Array(2)> (received vs expected: value[1]: 0x3fd0000000000000 (0.25) vs 0x3fd0000000000001 (0.25000000000000006))",
  );
});

test("a matching value leaves the printed matcher plain, and many differences are counted", () => {
  const matcher = bitwiseEqualTo([1, 2, 3, 4, 5]);
  expect(matcher.asymmetricMatch([1, 2, 3, 4, 5])).toBe(true);
  expect(matcher.toAsymmetricMatcher()).toBe("BitwiseEqualTo<Array(5)>");
  expect(matcher.asymmetricMatch([0, 0, 0, 0, 0])).toBe(false);
  expect(matcher.toAsymmetricMatcher()).toMatch(/^BitwiseEqualTo<Array\(5\)> \(received vs expected: value\[0\]: .*; 5 differences in total\)$/);
});
