// The heap estimate behind the session budget, figure by figure: V8's one- and two-byte strings, Smis against boxed
// numbers, packed number arrays, shared objects counted once (session-budget-heap.test.ts checks it against the heap).
import { describe, expect, test } from "@jest/globals";
import { retainedBytes, retainedTreeBytes } from "../../src/server/retained-size";

// The layout the estimate assumes (64-bit slots): string header 16, object header 24, array headers 48, boxed number 16.
const string = (bytes: number): number => 16 + Math.ceil(bytes / 8) * 8;
const ARRAY = 48;
const OBJECT = 24;
const BOXED = 16;

describe("retainedBytes", () => {
  test("strings: one byte per character up to U+00FF, two beyond, short and long alike", () => {
    for (const length of [0, 1, 31, 32, 33, 200]) {
      const latin1 = "\u00e9".repeat(length);
      const wide = `${"a".repeat(Math.max(0, length - 1))}${length > 0 ? "\u20ac" : ""}`;
      expect([length, retainedBytes([latin1])]).toEqual([length, string(length)]);
      expect([length, retainedBytes([wide])]).toEqual([length, string(length > 0 ? 2 * length : 0)]);
    }
    expect(retainedBytes(["\u0100"])).toBe(string(2));
    expect(retainedBytes(["\u00ff"])).toBe(string(1));
  });

  test("numbers: 32-bit integers sit in their slot, others are boxed unless the array holds numbers only", () => {
    expect(retainedBytes([[1, 2.5, -0, 2 ** 40]])).toBe(ARRAY + 4 * 8);
    const mixed = (n: number): number => retainedBytes([[n, "a"]]) - (ARRAY + 2 * 8 + string(1));
    expect([2 ** 31 - 1, -(2 ** 31), 0, 7].map(mixed)).toEqual([0, 0, 0, 0]);
    expect([2 ** 31, -(2 ** 31) - 1, -0, 0.5, Number.NaN, Infinity].map(mixed)).toEqual(Array(6).fill(BOXED));
    expect(retainedBytes([{ a: 1, b: 1.5, c: -0, d: true, e: null, f: undefined }])).toBe(OBJECT + 6 * 8 + 2 * BOXED);
  });

  test("nested values, shared objects once, typed arrays and big integers", () => {
    const shared = { a: "x" };
    expect(retainedBytes([[shared, shared, [shared]]])).toBe(ARRAY + 3 * 8 + (OBJECT + 8 + string(1)) + (ARRAY + 8));
    const seen = new Set<object>();
    const first = retainedBytes([shared], seen);
    expect(first).toBe(OBJECT + 8 + string(1));
    expect(retainedBytes([shared], seen)).toBe(0);
    expect(retainedBytes([new Uint8Array(10)])).toBe(160 + 10);
    expect(retainedBytes([2n ** 64n])).toBe(string(9)); // 17 hex digits, 9 bytes
    expect(retainedBytes([{ n: 2n ** 64n, s: ["\u20ac"] }])).toBe(OBJECT + 2 * 8 + string(9) + ARRAY + 8 + string(2));
    const cyclic: unknown[] = ["a"];
    cyclic.push(cyclic);
    expect(retainedBytes([cyclic])).toBe(ARRAY + 2 * 8 + string(1));
  });
});

describe("retainedTreeBytes", () => {
  test("counts a parsed JSON tree as retainedBytes does, without a set of visited objects", () => {
    const text = JSON.stringify({
      id: "chatcmpl-1",
      choices: [
        { message: { role: "assistant", content: "Zürich ☀" }, logprobs: { content: [{ token: "Z", logprob: -0.25, bytes: [90], top_logprobs: [] }] } },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 1, ratio: 1.5 },
    });
    expect(retainedTreeBytes([JSON.parse(text)])).toBe(retainedBytes([JSON.parse(text)]));
  });

  test("counts a shared object once per path to it (the reason it takes trees only)", () => {
    const shared = { a: "x" };
    expect(retainedTreeBytes([[shared, shared]])).toBe(retainedBytes([[shared, shared]]) + (OBJECT + 8 + string(1)));
  });
});
