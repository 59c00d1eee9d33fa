// The cheap equality assertions against Jest's own: whenever the shortcut passes a comparison Jest passes it too, a
// failure is Jest's own error and message, and every call counts as one assertion as `expect(...)` does.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { isDeepStrictEqual } from "node:util";
import * as vm from "node:vm";
import { expectEqual, expectNotSame, expectSame, expectStrictEqual, provablyEqual } from "./fast-expect";

/** The error `run` throws (it must throw one). */
function thrown(run: () => void): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}

function passes(run: () => void): boolean {
  try {
    run();
    return true;
  } catch {
    return false;
  }
}

/** A generator: iterating it moves it on, so Jest's toEqual does not find a fresh one equal to itself. */
function* countingUp(): Generator<number> {
  yield 1;
  yield 2;
}
const counting = (): Generator<number> => countingUp();

/** Values whose kinds Node and Jest compare differently: their contents hidden from Node, or Jest-only rules. */
const exotic: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom("a=1", "a=2", "").map((query) => new URLSearchParams(query)),
  fc.constantFrom("1", "2").map((value) => new Headers({ a: value })),
  fc.constantFrom(1, 2).map((n) => {
    // a cycle of length n: all of them unfold alike
    const first: Record<string, unknown> = {};
    let last = first;
    for (let i = 1; i < n; i++) last = last.next = {};
    last.next = first;
    return first;
  }),
  fc.constantFrom(0, 1).map((hidden) => {
    const value: Record<string, unknown> = { a: 1 };
    if (hidden === 1) Object.defineProperty(value, "asymmetricMatch", { value: () => false, enumerable: false });
    return value;
  }),
  fc.constant(null).map(() => ({ constructor: {} })),
  fc.constantFrom(1, 2).map((n) => new Date(n)),
  fc.constantFrom("x", "y").map((message) => new Error(message)),
  fc.constantFrom("a", "b").map((source) => new RegExp(source)),
  fc.constant(null).map(() => new Float64Array([Number.NaN])),
  fc.constant(null).map(() => vm.runInNewContext("[1, { a: 2 }]") as unknown),
  fc.constant(null).map(() => counting()),
  fc.constant(null).map(() => {
    // a graph with a cycle (a tree node and its parent), shared by reference in shallow copies
    const parent: Record<string, unknown> = { children: [] };
    (parent.children as unknown[]).push({ parent, id: 1 });
    return parent;
  }),
  fc.constantFrom(-0, 0, Number.NaN, undefined, null, 1n, 0.5),
);
/** Everything `fc.anything` makes (holes, typed arrays, Maps, Sets, boxed values, null prototypes, ...) and the above. */
const anything = fc.anything({
  maxDepth: 3,
  maxKeys: 3,
  key: fc.constantFrom("a", "b", "constructor", "__proto__", "0", "size"),
  values: [exotic, fc.boolean(), fc.integer({ min: -2, max: 2 }), fc.double(), fc.string({ maxLength: 2 })],
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
  withUnicodeString: true,
});
/** A copy of the outer array or object only: its values are the original's own (shared by reference). */
function shallowCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice();
  if (typeof value !== "object" || value === null || classNameOf(value) !== "[object Object]") return value;
  return Object.assign(Object.create(Object.getPrototypeOf(value) as object | null) as object, value);
}
const classNameOf = (value: object): string => Object.prototype.toString.call(value);
/** Pairs: two equal-looking copies (built twice from the same choices), a value and its shallow copy, or two values drawn apart. */
const pairs = fc.oneof(
  fc.clone(anything, 2),
  anything.map((value) => [value, shallowCopy(value)] as const),
  fc.tuple(anything, anything),
);

/** An iterable whose contents are not an own enumerable property: two of them differ only in what they yield. */
class Bag {
  constructor(private readonly hidden: number[]) {
    Object.defineProperty(this, "hidden", { enumerable: false, value: hidden });
  }
  *[Symbol.iterator](): Generator<number> {
    yield* this.hidden;
  }
}
/** An array holding 1 with extra keys set in the given order. */
function withKeys(order: string[]): unknown[] {
  const array: unknown[] = [1];
  for (const key of order) (array as unknown as Record<string, number>)[key] = 1;
  return array;
}

describe("provablyEqual", () => {
  test("whenever it holds, Jest's toEqual and toStrictEqual pass; the values Node alone equates are all refused", () => {
    let provable = 0;
    let nodeOnly = 0;
    fc.assert(
      fc.property(pairs, ([a, b]) => {
        if (provablyEqual(a, b)) {
          provable += 1;
          expect(() => expect(a).toEqual(b)).not.toThrow();
          expect(() => expect(a).toStrictEqual(b)).not.toThrow();
          expect(() => expect(b).toStrictEqual(a)).not.toThrow();
        } else if (isDeepStrictEqual(a, b) && !passes(() => expect(a).toStrictEqual(b))) {
          nodeOnly += 1;
        }
      }),
      { numRuns: 3000, seed: 29_0401 },
    );
    // not a check that never says yes, and the generator reaches the cases Node's equality alone would pass
    expect(provable).toBeGreaterThan(600);
    expect(nodeOnly).toBeGreaterThan(20);
  });

  // Each of these is equal under Node's isDeepStrictEqual while Jest's matcher fails: the helpers must ask Jest.
  // (each pair is built anew for every comparison: comparing a generator moves it on)
  const nodeOnlyEqual: Array<[string, () => [unknown, unknown], "toEqual" | "toStrictEqual"]> = [
    ["URLSearchParams (contents hidden from Node)", () => [new URLSearchParams("a=1"), new URLSearchParams("a=2")], "toEqual"],
    ["Headers (contents hidden from Node)", () => [new Headers({ a: "1" }), new Headers({ a: "2" })], "toEqual"],
    ["cycles of other lengths", () => [cycle(1), cycle(2)], "toEqual"],
    ["an own non-enumerable asymmetricMatch", () => [{ a: 1 }, Object.defineProperty({ a: 1 }, "asymmetricMatch", { value: () => false })], "toEqual"],
    ["an own constructor under toStrictEqual", () => [{ constructor: {} }, { constructor: {} }], "toStrictEqual"],
    ["an iterable class instance", () => [new Bag([1]), new Bag([2])], "toEqual"],
    [
      "one generator on both sides",
      () => {
        const shared = counting();
        return [[shared], [shared]];
      },
      "toEqual",
    ],
    ["an array's extra keys set in another order, under toStrictEqual", () => [withKeys(["x", "y"]), withKeys(["y", "x"])], "toStrictEqual"],
    [
      "an Error-derived object with hidden messages",
      () => [Object.create(Error.prototype, { message: { value: "a" } }) as unknown, Object.create(Error.prototype, { message: { value: "b" } }) as unknown],
      "toEqual",
    ],
  ];

  test("a value held by both sides by reference is settled without walking it, cycles included", () => {
    const parent: Record<string, unknown> = { children: [] };
    (parent.children as unknown[]).push({ parent });
    const a = { node: parent, matched: 2 };
    const b = { node: parent, matched: 2 };
    expect(provablyEqual(a, b)).toBe(true);
    expect(() => expect(a).toStrictEqual(b)).not.toThrow();
    // the same graph built twice holds a cycle on each side: left to Jest (which passes it)
    const other: Record<string, unknown> = { children: [] };
    (other.children as unknown[]).push({ parent: other });
    expect(provablyEqual(a, { node: other, matched: 2 })).toBe(false);
    expectStrictEqual(a, { node: other, matched: 2 });
  });

  test.each(nodeOnlyEqual)("%s: Node equates them, the helper leaves them to Jest, which fails them", (_name, pair, matcher) => {
    expect(isDeepStrictEqual(...pair())).toBe(true);
    expect(provablyEqual(...pair())).toBe(false);
    const helper = matcher === "toEqual" ? expectEqual : expectStrictEqual;
    const [a, b] = pair();
    const [c, d] = pair();
    expect(thrown(() => helper(a, b)).message).toBe(thrown(() => expect(c)[matcher](d)).message);
  });
});

function cycle(length: number): Record<string, unknown> {
  const first: Record<string, unknown> = {};
  let last = first;
  for (let i = 1; i < length; i++) last = last.next = {};
  last.next = first;
  return first;
}

describe("a failing comparison is Jest's own", () => {
  const failing: Array<[string, unknown, unknown]> = [
    ["other numbers in a tuple", ["text", 1, 2], ["text", 1, 3]],
    ["-0 and +0", [-0], [0]],
    ["a hole and undefined", [1, , 3], [1, undefined, 3]], // eslint-disable-line no-sparse-arrays
    ["an undefined property and none", { a: 1, b: undefined }, { a: 1 }],
    ["other bytes", Buffer.from("ab"), Buffer.from("ac")],
    ["a Buffer and a Uint8Array", Buffer.from("ab"), new Uint8Array(Buffer.from("ab"))],
    ["other Map values", new Map([["k", [1]]]), new Map([["k", [2]]])],
    ["other dates", new Date(1), new Date(2)],
  ];

  test.each(failing)("toStrictEqual, %s: the same error type and message as expect(...)", (_name, a, b) => {
    const ours = thrown(() => expectStrictEqual(a, b));
    const jest = thrown(() => expect(a).toStrictEqual(b));
    expect(ours.constructor).toBe(jest.constructor);
    expect(ours.message).toBe(jest.message);
  });

  test.each(failing)("toEqual, %s: passes exactly when Jest passes, else Jest's message", (_name, a, b) => {
    const jestPasses = passes(() => expect(a).toEqual(b));
    expect(passes(() => expectEqual(a, b))).toBe(jestPasses);
    if (!jestPasses) expect(thrown(() => expectEqual(a, b)).message).toBe(thrown(() => expect(a).toEqual(b)).message);
  });

  test("what Jest passes though Node's strict equality does not is still passed (undefined keys, matchers, other realms)", () => {
    expectEqual({ a: 1, b: undefined }, { a: 1 });
    expectEqual([1, , 3], [1, undefined, 3]); // eslint-disable-line no-sparse-arrays
    expectEqual({ n: 5, s: "x" }, { n: expect.any(Number), s: expect.stringMatching(/x/) });
    expectStrictEqual({ n: 5 }, { n: expect.any(Number) });
    expectEqual(Buffer.from("ab"), new Uint8Array(Buffer.from("ab")));
    expectStrictEqual(vm.runInNewContext("[1, 2]"), [1, 2]);
  });

  test("toBe and not.toBe: Object.is decides, Jest writes the failure", () => {
    expectSame(Number.NaN, Number.NaN);
    expectNotSame(-0, 0);
    expectNotSame({}, {});
    const shared = { a: 1 };
    expect(thrown(() => expectSame(-0, 0)).message).toBe(thrown(() => expect(-0).toBe(0)).message);
    expect(thrown(() => expectSame({ a: 1 }, { a: 1 })).message).toBe(thrown(() => expect({ a: 1 }).toBe({ a: 1 })).message);
    expect(thrown(() => expectNotSame(shared, shared)).message).toBe(thrown(() => expect(shared).not.toBe(shared)).message);
  });

  test("the failure's stack starts at the line that called the helper, not inside the helper", () => {
    const failure = thrown(() => expectEqual([1], [2]));
    const firstFrame = (failure.stack ?? "").split("\n").find((line) => line.trimStart().startsWith("at "));
    expect(firstFrame).toContain("fast-expect.test.ts");
  });
});

describe("every helper call is one assertion", () => {
  test("passing and failing calls count as expect(...) counts them", () => {
    const state = (): { assertionCalls: number; numPassingAsserts: number } => expect.getState();
    const before = { ...state() };
    expectEqual([1, { a: "x" }], [1, { a: "x" }]);
    expectStrictEqual(new Uint8Array([1]), new Uint8Array([1]));
    expectSame("a", "a");
    expectNotSame([], []);
    expectEqual({ a: undefined }, {}); // decided by Jest, which passes it
    expect([state().assertionCalls - before.assertionCalls, state().numPassingAsserts - before.numPassingAsserts]).toEqual([5, 5]);
    thrown(() => expectEqual([1], [2]));
    expect(state().assertionCalls - before.assertionCalls).toBe(7); // the failing call and the expect just above
  });

  test("expect.assertions(n) sees them", () => {
    expect.assertions(3);
    expectEqual([1], [1]);
    expectStrictEqual({ a: [1] }, { a: [1] });
    expectSame(1, 1);
  });

  test("expect.hasAssertions() sees them", () => {
    expect.hasAssertions();
    expectEqual("a", "a");
  });
});
