// The per-op decode memo answers a list equal to one decoded before with the same text, and tells apart lists whose
// hashes collide; decoding errors are not kept.
import { decodeByContent, idsHash } from "../../../src/server/samples/decode-memo";

function counting(): { decode: (ids: readonly number[]) => string; calls: number[][] } {
  const calls: number[][] = [];
  return { calls, decode: (ids) => (calls.push([...ids]), ids.map((id) => `<${id}>`).join("")) };
}

test("an equal list (another array) is decoded once; a different one is decoded", () => {
  const { decode, calls } = counting();
  const memo = decodeByContent(decode);
  expect(memo([1, 2, 3])).toBe("<1><2><3>");
  expect(memo([1, 2, 3])).toBe("<1><2><3>");
  expect(memo([1, 2, 4])).toBe("<1><2><4>");
  expect(memo([1, 2])).toBe("<1><2>");
  expect(memo([])).toBe("");
  expect(memo([])).toBe("");
  expect(calls).toEqual([[1, 2, 3], [1, 2, 4], [1, 2], []]);
});

test("lists whose hashes collide each get their own text", () => {
  // FNV-1a multiplies by an odd prime, a bijection: equal states after the first id give a collision by construction
  const prime = 0x01000193;
  const start = 0x811c9dc5 ^ 2;
  const [a1, b1, a2] = [5, 9, 6];
  const b2 = Math.imul(start ^ a1, prime) ^ b1 ^ Math.imul(start ^ a2, prime);
  expect(idsHash([a1, b1])).toBe(idsHash([a2, b2]));
  const { decode, calls } = counting();
  const memo = decodeByContent(decode);
  expect(memo([a1, b1])).toBe(`<${a1}><${b1}>`);
  expect(memo([a2, b2])).toBe(`<${a2}><${b2}>`);
  expect(memo([a1, b1])).toBe(`<${a1}><${b1}>`);
  expect(memo([a2, b2])).toBe(`<${a2}><${b2}>`);
  expect(calls).toHaveLength(2);
});

test("0 and -0 are kept apart (no value is taken for another), and a failing decode is tried again", () => {
  const { decode, calls } = counting();
  const memo = decodeByContent(decode);
  memo([0]);
  memo([-0]);
  expect(calls).toHaveLength(2);
  let failures = 0;
  const failing = decodeByContent(() => {
    failures += 1;
    throw new Error("no ids");
  });
  expect(() => failing([7])).toThrow("no ids");
  expect(() => failing([7])).toThrow("no ids");
  expect(failures).toBe(2);
});

test("long lists are decoded every time", () => {
  const { decode, calls } = counting();
  const memo = decodeByContent(decode);
  const long = Array.from({ length: 5000 }, (_, i) => i);
  memo(long);
  memo(long);
  expect(calls).toHaveLength(2);
});
