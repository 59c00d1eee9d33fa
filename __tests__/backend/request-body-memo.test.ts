// The direct route's memo of parsed request bodies: a repeat of the same bytes gets a value indistinguishable from a
// fresh JSON.parse (keys, order, descriptors, -0, "__proto__" keys) and never an object an earlier request was given.
import fc from "fast-check";
import { copyParsedJson, RequestBodyMemo, type ParsedBody } from "../../src/backend/request-body-memo";
import { expectEqual, expectNotSame, expectSame } from "../support/fast-expect";

/** Fails unless `copy` is structurally what JSON.parse gave (`original`) and shares no object with it. */
function expectSameJson(copy: unknown, original: unknown, path = "$"): void {
  if (original === null || typeof original !== "object") {
    expectEqual([path, Object.is(copy, original)], [path, true]);
    return;
  }
  expectNotSame(copy, original);
  expectSame(Object.getPrototypeOf(copy), Object.getPrototypeOf(original));
  expectSame(Array.isArray(copy), Array.isArray(original));
  const keys = Reflect.ownKeys(original);
  expectEqual(Reflect.ownKeys(copy as object), keys);
  for (const key of keys) {
    const a = Object.getOwnPropertyDescriptor(copy, key) as PropertyDescriptor;
    const b = Object.getOwnPropertyDescriptor(original, key) as PropertyDescriptor;
    expectEqual([a.writable, a.enumerable, a.configurable], [b.writable, b.enumerable, b.configurable]);
    if (key !== "length") expectSameJson(a.value, b.value, `${path}.${String(key)}`);
  }
}

/** JSON texts with the awkward parts JSON.parse keeps: "__proto__" and integer-like keys, -0, duplicate keys. */
const jsonTexts = fc.oneof(
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.constantFrom(
    '{"__proto__": {"polluted": true}, "b": [-0, 0, -0.0], "2": 1, "1": {"__proto__": [1]}, "a": {"a": {"a": []}}}',
    '{"k": 1, "k": 2, "z": null, "10": "x", "9": -0}',
    '{"input_ids": [151644, 872, 198], "messages": [{"role": "user", "content": "Zürich \\ud83d"}], "stream": false}',
  ),
);

test("a copy of a parse is indistinguishable from the parse itself", () => {
  fc.assert(
    fc.property(jsonTexts, (text) => {
      const parsed: unknown = JSON.parse(text);
      expectSameJson(copyParsedJson(parsed), parsed);
    }),
    { numRuns: 400, seed: 29 },
  );
});

test("repeated bytes are answered from the kept parse with a fresh copy per request, so changing one request's body changes no other", () => {
  let parses = 0;
  const memo = new RequestBodyMemo(
    (bytes) => Buffer.from(bytes).toString("utf8"),
    (text): ParsedBody => {
      parses++;
      return { parsed: JSON.parse(text) as Record<string, unknown> };
    },
  );
  // padded until the changed letter below sits between the sampled bytes of the memo's bucket key (every len/16-th)
  const padded = (pad: number): string => `{"input_ids":[1,2,3],"messages":[{"role":"user","content":"hi"}],"__proto__":{"x":-0},"pad":"${"p".repeat(pad)}"}`;
  const between = (text: string): boolean => (text.indexOf('"hi"') + 2) % Math.max(1, Math.floor(text.length / 16)) !== 0;
  const text = padded([0, 1, 2, 3, 4, 5, 6, 7].find((pad) => between(padded(pad))) as number);
  const miss = memo.parsed(Buffer.from(text)).body;
  expect(miss.copy).toBeUndefined(); // a first parse is the request's own
  const first = miss.parsed as Record<string, unknown>;
  (first.input_ids as number[]).push(99);
  (first.messages as Record<string, unknown>[])[0].content = "changed";
  delete first.__proto__;
  // a repeat reads the kept parse and copies it for the request: each copy is fresh and equal to a new parse
  const hit = memo.parsed(Buffer.from(text)).body;
  expectSameJson(hit.parsed, JSON.parse(text));
  const second = (hit.copy as () => Record<string, unknown>)();
  expectSameJson(second, JSON.parse(text));
  (second.messages as Record<string, unknown>[])[0].content = "changed again";
  (second.input_ids as number[]).length = 0;
  const again = memo.parsed(Buffer.from(text)).body;
  expect(again.parsed).toBe(hit.parsed);
  // every repeat of the same bytes gets the same frozen ParsedBody (what an engine derives from it is kept by it)
  expect(again).toBe(hit);
  expect(Object.isFrozen(again)).toBe(true);
  const third = (again.copy as () => Record<string, unknown>)();
  expect(third).not.toBe(second);
  expectSameJson(third, JSON.parse(text));
  expectSameJson(again.parsed, JSON.parse(text));
  expect(parses).toBe(1);
  // other bytes of the same length and sampled bytes are parsed, never answered from the kept body
  const other = text.replace('"hi"', '"ho"');
  expect(other.length).toBe(text.length);
  expectSameJson(memo.parsed(Buffer.from(other)).body.parsed, JSON.parse(other));
  expect(parses).toBe(2);
});

test("problems are not kept, and bodies nested deeper than the copy goes are parsed each time", () => {
  let parses = 0;
  const memo = new RequestBodyMemo(
    (bytes) => Buffer.from(bytes).toString("utf8"),
    (text): ParsedBody => {
      parses++;
      return text.startsWith("{") ? { parsed: JSON.parse(text) as Record<string, unknown> } : { problem: "request body must be a JSON object" };
    },
  );
  expect(memo.parsed(Buffer.from("[1]"))).toEqual({ body: { problem: "request body must be a JSON object" }, logged: "[1]" });
  expect(memo.parsed(Buffer.from("[1]"))).toEqual({ body: { problem: "request body must be a JSON object" }, logged: "[1]" });
  const deep = `{"a":${"[".repeat(200)}${"]".repeat(200)}}`;
  expectSameJson(memo.parsed(Buffer.from(deep)).body.parsed, JSON.parse(deep));
  expectSameJson(memo.parsed(Buffer.from(deep)).body.parsed, JSON.parse(deep));
  expect(parses).toBe(4);
});

test("a body past the size bound is parsed every time; 16 MB of distinct bodies pass with every repeat still kept", () => {
  let parses = 0;
  const memo = new RequestBodyMemo(
    (bytes) => Buffer.from(bytes).toString("utf8"),
    (text): ParsedBody => {
      parses++;
      return { parsed: JSON.parse(text) as Record<string, unknown> };
    },
  );
  const large = JSON.stringify({ messages: [{ role: "user", content: "x".repeat(70 * 1024) }] });
  for (let round = 0; round < 2; round++) expect(memo.parsed(Buffer.from(large)).body.parsed).toEqual(JSON.parse(large));
  expect(parses).toBe(2);
  // 400 distinct 40 KB bodies pass (16 MB): each answer is still its own parse, and repeats right after are kept
  for (let i = 0; i < 400; i++) {
    const text = JSON.stringify({ i, pad: "y".repeat(40 * 1024) });
    expectEqual(memo.parsed(Buffer.from(text)).body.parsed, { i, pad: "y".repeat(40 * 1024) });
    expectEqual(memo.parsed(Buffer.from(text)).body.parsed, { i, pad: "y".repeat(40 * 1024) });
  }
  expect(parses).toBe(2 + 400);
});
