// The syntax scan against the native parser it stands in for: its verdict is JSON.parse's on valid texts with any
// whitespace, on every small mutation of them, on arbitrary bytes and on the hand-picked edges of each grammar rule.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { findJsonDepthExcess } from "../../src/wire/json-depth";
import { isJsonText, outlineJsonObject } from "../../src/wire/json-syntax";
import { BINARY_UNIT } from "../support/binary-unit";
import { expectEqual, expectSame, expectStrictEqual } from "../support/fast-expect";

/** The reference: whether the native parser takes the text. */
function nativeTakes(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The bytes' UTF-8 reading, as a reply's text is read (broken sequences become U+FFFD). */
function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
}

/** The scan's verdict on a text equals the native parser's; on its bytes and (for the deep rule) with a cap. */
function expectSameVerdict(text: string): void {
  const bytes = Buffer.from(text, "utf8");
  const native = nativeTakes(text);
  expectEqual({ text, verdict: isJsonText(bytes) }, { text, verdict: native });
  // the UTF-8 reading of the bytes (lone surrogates become U+FFFD) gets the same verdict as the text itself
  expectSame(nativeTakes(utf8(bytes)), native);
}

const WHITESPACE = [" ", "\t", "\n", "\r", "\r\n", "  ", ""];

/** JSON text of a value with whitespace from `spaces` (cycled) around every token, as JSON.stringify spells tokens. */
function spaced(value: unknown, spaces: string[]): string {
  let k = 0;
  const space = (): string => (spaces.length === 0 ? "" : spaces[k++ % spaces.length]);
  const write = (v: unknown): string => {
    if (Array.isArray(v)) return `[${space()}${v.map((item) => `${space()}${write(item)}${space()}`).join(",")}${space()}]`;
    if (v !== null && typeof v === "object") {
      const entries = Object.entries(v).map(([key, item]) => `${space()}${JSON.stringify(key)}${space()}:${space()}${write(item)}${space()}`);
      return `{${space()}${entries.join(",")}${space()}}`;
    }
    return JSON.stringify(v);
  };
  return `${space()}${write(value)}${space()}`;
}

/** Values with every kind of string unit (lone surrogates included) and numbers of every size. */
const anyValue = fc.oneof(
  fc.jsonValue(),
  fc.jsonValue({ stringUnit: BINARY_UNIT }),
  fc.jsonValue({ stringUnit: "grapheme", maxDepth: 3 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const validText = fc.tuple(anyValue, fc.array(fc.constantFrom(...WHITESPACE), { maxLength: 12 })).map(([value, spaces]) => spaced(value, spaces));

/** Characters a mutation puts into a text: structure, number and literal letters, escapes, controls, non-ASCII. A swap
 * trades one bracket for another kind. */
const MUTATION_CHARS = [
  ...'{}[],:"\\/ \t\n\r0123456789-+.eEtrufalsnbxX',
  "\u0000",
  "\u0008",
  "\u001f",
  "\u007f",
  "\u00e9",
  "\ufeff",
  "\u00a0",
  "\u2028",
  "\ud800",
  "\udc00",
  "\u{1f600}",
];

type Mutation =
  | { kind: "delete"; at: number }
  | { kind: "insert"; at: number; text: string }
  | { kind: "replace"; at: number; text: string }
  | { kind: "truncate"; at: number }
  | { kind: "append"; text: string }
  | { kind: "swap"; at: number };

const junk = fc.array(fc.constantFrom(...MUTATION_CHARS), { minLength: 1, maxLength: 3 }).map((chars) => chars.join(""));

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), text: junk }),
  fc.record({ kind: fc.constant("replace" as const), at: fc.nat(), text: junk }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("append" as const), text: junk }),
  fc.record({ kind: fc.constant("swap" as const), at: fc.nat() }),
);

/** The bracket a swap puts in place of another (a closer of the other kind, an opener for a closer). */
const SWAPPED: Record<string, string> = { "]": "}", "}": "]", "[": "{", "{": "[" };

function mutate(text: string, change: Mutation): string {
  if (change.kind === "append") return text + change.text;
  if (change.kind === "swap") {
    const brackets = [...text.matchAll(/[[\]{}]/g)].map((match) => match.index);
    if (brackets.length === 0) return text;
    const at = brackets[change.at % brackets.length];
    return text.slice(0, at) + SWAPPED[text[at]] + text.slice(at + 1);
  }
  const at = text.length === 0 ? 0 : change.at % (text.length + 1);
  switch (change.kind) {
    case "delete":
      return text.slice(0, at) + text.slice(at + 1);
    case "insert":
      return text.slice(0, at) + change.text + text.slice(at);
    case "replace":
      return text.slice(0, at) + change.text + text.slice(at + 1);
    case "truncate":
      return text.slice(0, at);
  }
}

/** Texts with tokens the grammar is strict about, for mutations to break in the places that matter. */
const edgyText = fc
  .array(
    fc.constantFrom(
      '"a\\u00e9\\n"',
      '"\\ud800"',
      "-0.5e+10",
      "0",
      "1E-2",
      "true",
      "false",
      "null",
      '{"k":[1,2]}',
      "[]",
      "{}",
      '"\\"\\\\\\/\\b\\f\\n\\r\\t"',
      "12345678901234567890123",
    ),
    { minLength: 1, maxLength: 5 },
  )
  .map((tokens) => `[${tokens.join(",")}]`);

describe("isJsonText", () => {
  test("takes what JSON.parse takes: any value, any whitespace between tokens", () => {
    fc.assert(
      fc.property(validText, (text) => {
        expectSame(nativeTakes(text), true);
        expectSameVerdict(text);
      }),
      { numRuns: 1000 },
    );
  });

  test("refuses what JSON.parse refuses: a deleted, inserted or replaced character, a cut, junk after the end", () => {
    fc.assert(
      fc.property(fc.oneof(validText, edgyText), fc.array(mutation, { minLength: 1, maxLength: 3 }), (text, changes) => {
        expectSameVerdict(changes.reduce(mutate, text));
      }),
      { numRuns: 4000 },
    );
  });

  test("arbitrary bytes (broken UTF-8, bytes above 0x7f outside strings) get the verdict of their UTF-8 reading", () => {
    const chunk = fc.oneof(
      fc.uint8Array({ maxLength: 4 }),
      fc.constantFrom(...['"', "[", "]", "{", "}", ",", ":", "1", "-", "e", ".", "\\", "u", "n", " "].map((c) => Buffer.from(c))),
    );
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 12 }), (chunks) => {
        const bytes = Buffer.concat(chunks);
        expectSame(isJsonText(bytes), nativeTakes(utf8(bytes)));
        // inside a string any byte of 0x80 and above is taken, broken or not
        const inString = Buffer.concat([Buffer.from('["'), bytes.filter((b) => b >= 0x80), Buffer.from('"]')]);
        expectSame(isJsonText(inString), nativeTakes(utf8(inString)));
        expectSame(isJsonText(inString), true);
      }),
      { numRuns: 2000 },
    );
  });

  test.each([
    // empty, blank, whitespace V8 does not count as such, byte-order marks
    "",
    " ",
    " \t\n\r ",
    "\u00a0 1",
    "1\u00a0",
    "\ufeff{}",
    "{}\ufeff",
    "\u000b1",
    "\u000c1",
    // literals
    "true",
    "false",
    "null",
    "tru",
    "nul",
    "True",
    "nulll",
    "NaN",
    "Infinity",
    "-Infinity",
    "undefined",
    // numbers
    "0",
    "-0",
    "-",
    "--1",
    "+1",
    "01",
    "-01",
    "00",
    "1.",
    ".5",
    "-.5",
    "1.e5",
    "1e",
    "1e+",
    "1e-",
    "1E5",
    "1e+5",
    "1e-5",
    "1e05",
    "1e400",
    "-1e400",
    "1e-400",
    "123456789012345678901234567890",
    "0x10",
    "1_000",
    "0.0e0",
    "[1,-]",
    "[-0.0]",
    // strings and escapes
    '""',
    '"',
    '"abc',
    '"\\"',
    '"\\\\"',
    '"\\""',
    '"\\/"',
    '"\\b\\f\\n\\r\\t"',
    '"\\a"',
    '"\\x41"',
    '"\\0"',
    '"\\\'"',
    '"\\u0041"',
    '"\\u00e9\\u00E9"',
    '"\\u12"',
    '"\\u123"',
    '"\\u12g4"',
    '"\\U0041"',
    '"\\u"',
    '"\\ud800"',
    '"\\udc00\\ud800"',
    '"\\ud83d\\ude00"',
    '"\ud800"',
    '"\udfff x"',
    '"\u{1f600}"',
    '"\u0000"',
    '"\u0009"',
    '"\u000a"',
    '"\u001f"',
    '"\u0020"',
    '"\u007f"',
    '"\u2028\u2029"',
    '"\\',
    // containers
    "[]",
    "{}",
    "[",
    "]",
    "[1,]",
    "[,1]",
    "[1 2]",
    "[1,,2]",
    '{"a":1,}',
    '{"a" 1}',
    '{"a":}',
    '{"a"}',
    "{a:1}",
    "{'a':1}",
    "{1:1}",
    '{"a":1 "b":2}',
    '{"a":1,"a":2}',
    '[{"a":[]},{}]',
    '{"a":[1,{"b":null}]}',
    "[}",
    "{]",
    "{]1",
    "[1}",
    "[1,2}",
    '{"a":1]',
    '[{"a":[1}]}',
    "[[1]}",
    "[[]]]",
    "1 2",
    "{} {}",
    "[] x",
  ])("the edge %j gets JSON.parse's verdict", (text) => {
    expectSameVerdict(text);
  });

  test("nesting: any depth when uncapped (as JSON.parse), at most the cap with one", () => {
    const nested = (depth: number, open = "[", close = "]"): Buffer => Buffer.from(`${open.repeat(depth)}${close.repeat(depth)}`);
    expect(isJsonText(nested(128), 128)).toBe(true);
    expect(isJsonText(nested(129), 128)).toBe(false);
    expect(isJsonText(Buffer.from(`${'{"a":'.repeat(128)}1${"}".repeat(128)}`), 128)).toBe(true);
    expect(isJsonText(Buffer.from(`${'{"a":'.repeat(129)}1${"}".repeat(129)}`), 128)).toBe(false);
    // brackets in strings do not nest
    expect(isJsonText(Buffer.from(`["${"[".repeat(200)}"]`), 1)).toBe(true);
    // deeper than the stack the scan starts with: grown, and the verdict still JSON.parse's
    const deep = `${"[".repeat(100_000)}1${"]".repeat(100_000)}`;
    expect(isJsonText(Buffer.from(deep))).toBe(nativeTakes(deep));
    expect(isJsonText(Buffer.from(`${deep}]`))).toBe(false);
    expect(isJsonText(Buffer.from(`[${"{".repeat(1000)}`))).toBe(false);
  });

  test("with a cap: JSON.parse takes it and the depth scan finds no excess", () => {
    fc.assert(
      fc.property(fc.oneof(validText, edgyText), fc.array(mutation, { maxLength: 2 }), fc.nat({ max: 4 }), (text, changes, cap) => {
        const mutated = changes.reduce(mutate, text);
        const bytes = Buffer.from(mutated);
        expectSame(isJsonText(bytes, cap), nativeTakes(mutated) && findJsonDepthExcess(bytes, cap) === null);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("outlineJsonObject", () => {
  /** Object texts with repeated keys (JSON.parse keeps the first place and the last value) and escaped keys. */
  const objectText = fc
    .tuple(
      fc.array(fc.tuple(fc.constantFrom('"a"', '"b"', '"\\u0061"', '"records"', '"\\ud800"', '"é"', '"__proto__"'), anyValue), { maxLength: 6 }),
      fc.array(fc.constantFrom(...WHITESPACE), { maxLength: 6 }),
    )
    .map(([entries, spaces]) => {
      let k = 0;
      const space = (): string => (spaces.length === 0 ? "" : spaces[k++ % spaces.length]);
      return `${space()}{${entries.map(([key, value]) => `${space()}${key}${space()}:${spaced(value, spaces)}`).join(",")}${space()}}${space()}`;
    });

  test("the members' spans rebuild JSON.parse's object: keys in first-seen order, each holding its last value", () => {
    fc.assert(
      fc.property(objectText, (text) => {
        const bytes = Buffer.from(text);
        const members = outlineJsonObject(bytes);
        expect(members).toBeDefined();
        const slice = (start: number, end: number): string => utf8(bytes.subarray(start, end));
        const rebuilt: Record<string, unknown> = {};
        for (let m = 0; m < (members as number[]).length; m += 4) {
          const [keyStart, keyEnd, valueStart, valueEnd] = (members as number[]).slice(m, m + 4);
          // a span is exactly its token: no whitespace at either end
          expect(slice(keyStart, keyEnd)).toMatch(/^".*"$/s);
          expectSame(slice(valueStart, valueEnd), slice(valueStart, valueEnd).trim());
          Object.defineProperty(rebuilt, JSON.parse(slice(keyStart, keyEnd)) as string, {
            value: JSON.parse(slice(valueStart, valueEnd)),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        const parsed = JSON.parse(text) as Record<string, unknown>;
        expectEqual(Object.keys(rebuilt), Object.keys(parsed));
        expectStrictEqual(rebuilt, parsed);
      }),
      { numRuns: 1000 },
    );
  });

  test("undefined unless JSON.parse takes the text and its value is an object within the cap", () => {
    fc.assert(
      fc.property(fc.oneof(objectText, validText), fc.array(mutation, { maxLength: 2 }), (text, changes) => {
        const mutated = changes.reduce(mutate, text);
        const bytes = Buffer.from(mutated);
        let value: unknown;
        const takes = (() => {
          try {
            value = JSON.parse(mutated);
            return true;
          } catch {
            return false;
          }
        })();
        const isObject = takes && typeof value === "object" && value !== null && !Array.isArray(value);
        expectSame(outlineJsonObject(bytes) !== undefined, isObject);
        expectSame(outlineJsonObject(bytes, 2) !== undefined, isObject && findJsonDepthExcess(bytes, 2) === null);
      }),
      { numRuns: 2000 },
    );
  });

  test("top-level members only, empty objects, a value nested in the first member", () => {
    expect(outlineJsonObject(Buffer.from("{}"))).toEqual([]);
    expect(outlineJsonObject(Buffer.from(" { } "))).toEqual([]);
    expect(outlineJsonObject(Buffer.from('{"a":{"b":1,"c":[2]},"d":"x"}'))).toEqual([1, 4, 5, 20, 21, 24, 25, 28]);
    expect(outlineJsonObject(Buffer.from("[1]"))).toBeUndefined();
    expect(outlineJsonObject(Buffer.from('"{}"'))).toBeUndefined();
  });
});
