// registerSessionParityMatchers on an expect-like object other than Jest's global (the Vitest entry's path).
// The installed factories must build working asymmetric matchers, and extend must receive every matcher.
import { BitwiseEqualTo } from "../../src/matchers";
import { registerSessionParityMatchers, sessionParityMatchers, type ExpectLike } from "../../src/entries/registry";

test("registers every matcher and installs expect.bitwiseEqualTo / expect.not.bitwiseEqualTo", () => {
  const extended: Array<Record<string, unknown>> = [];
  const target: ExpectLike & { not: Record<string, unknown> } & Record<string, unknown> = {
    extend: (matchers) => {
      extended.push(matchers);
    },
    not: {},
  };
  registerSessionParityMatchers(target);
  registerSessionParityMatchers(target); // idempotent
  expect(extended).toHaveLength(2);
  expect(extended[0]).toBe(sessionParityMatchers);
  expect(Object.keys(extended[0])).toContain("toBeBitwiseEqual");

  const positive = (target.bitwiseEqualTo as (value: unknown) => BitwiseEqualTo)([0.5, -0]);
  const negative = (target.not.bitwiseEqualTo as (value: unknown) => BitwiseEqualTo)([0.5, -0]);
  expect(positive).toBeInstanceOf(BitwiseEqualTo);
  expect(positive.$$typeof).toBe(Symbol.for("jest.asymmetricMatcher"));
  expect(positive.asymmetricMatch([0.5, -0])).toBe(true);
  expect(positive.asymmetricMatch([0.5, 0])).toBe(false);
  expect(negative.asymmetricMatch([0.5, 0])).toBe(true);
  expect(negative.asymmetricMatch([0.5, -0])).toBe(false);
  // After a failed match the description names the first differing leaf (shown inside toEqual's diff).
  expect(positive.toAsymmetricMatcher()).toBe("BitwiseEqualTo<Array(2)> (received vs expected: value[1]: +0 vs -0)");
  expect(negative.toString()).toBe("NotBitwiseEqualTo");
});

test("Jest's global expect got the same factories from the setup entry", () => {
  expect(typeof expect.bitwiseEqualTo).toBe("function");
  expect(typeof expect.not.bitwiseEqualTo).toBe("function");
  expect([1, 2]).toEqual(expect.bitwiseEqualTo([1, 2]));
});

test("Jest's own asymmetric form of toBeBitwiseEqual (typed) tells +0 from -0 inside toEqual", () => {
  expect({ reward: 0 }).toEqual({ reward: expect.toBeBitwiseEqual(0) });
  expect({ reward: 0 }).not.toEqual({ reward: expect.toBeBitwiseEqual(-0) });
  expect({ reward: 0 }).toEqual({ reward: expect.not.toBeBitwiseEqual(-0) });
});
