// The cheaper ways dumpsPy and parsePyJson take (the text writer, int32 arrays spelled as bytes, the depth-and-lossy
// scans) against the reference writer and reader on random and adversarial trees: every output byte for byte the same.
// mirrors miles/rollout/session/core.py::chat_completions (json.dumps(request_body), default separators, upstream)
// and core.py::_render_json (compact, ensure_ascii=False); the reference writer is what the Python cross-checks in
// py-json.test.ts hold to Python's json module.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { findJsonDepthExcess } from "../../src/wire/json-depth";
import {
  dumpsPy,
  dumpsPyWriter,
  parsePyJson,
  parsePyJsonBytes,
  PY_DEFAULT_JSON,
  PY_RESPONSE_JSON,
  PY_SAMPLES_META_JSON,
  PY_TOJSON,
  PyBigInt,
  PyFloat,
  SpelledPyJson,
  pyObjectFromEntries,
} from "../../src/wire/py-json";
import { ALL_OPTIONS } from "./py-json-settings";
import { binaryString } from "../support/binary-unit";

/** dumpsPy's text (or error) beside the reference writer's, for every option set. */
function bothWriters(value: unknown): Array<[string, string]> {
  return ALL_OPTIONS.map((options) => {
    const spell = (write: typeof dumpsPy): string => {
      try {
        return write(value, options);
      } catch (error) {
        return `${(error as Error).name}: ${(error as Error).message}`;
      }
    };
    return [spell(dumpsPy), spell(dumpsPyWriter)];
  });
}

function expectSameAsReference(value: unknown): void {
  for (const [ours, reference] of bothWriters(value)) expect(ours).toBe(reference);
}

/** Characters each rule turns on: separators and quotes inside strings, escapes, DEL, non-ASCII, lone surrogates. */
const TRICKY_CHARS = [
  ",",
  ":",
  ", ",
  ": ",
  '"',
  "\\",
  "\n",
  "\u0000",
  "\u001f",
  " ",
  "~",
  "\u007f",
  "\u0080",
  "\u00e9",
  "\u2028",
  "\ud83d\ude00",
  "\ud800",
  "\udfff",
  "a",
];
const trickyString = fc.array(fc.constantFrom(...TRICKY_CHARS), { maxLength: 6 }).map((parts) => parts.join(""));

/** Numbers at the edges of each spelling: int32 bounds, safe-int bounds, -0, repr's exponent thresholds. */
const EDGE_NUMBERS = [
  0,
  -0,
  1,
  -1,
  2 ** 31 - 1,
  -(2 ** 31),
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53,
  1e16,
  1e21,
  1e-5,
  1e-4,
  0.5,
  -0.0078125,
  1.5e300,
];
const edgeNumber = fc.oneof(fc.constantFrom(...EDGE_NUMBERS), fc.integer(), fc.integer({ min: 0, max: 151_935 }), fc.double());

const leaf = fc.oneof(
  trickyString,
  binaryString({ maxLength: 6 }),
  fc.boolean(),
  fc.constant(null),
  edgeNumber,
  fc.constantFrom(undefined, Number.NaN, Number.POSITIVE_INFINITY),
  fc.double({ noNaN: true }).map((d) => new PyFloat(Math.trunc(d))),
  fc.constantFrom(new PyFloat(0), new PyFloat(-0), new PyFloat(1e16), new PyFloat(2)),
  fc.bigInt().map((b) => new PyBigInt(b)),
);

/** Token-id-like arrays long enough for the int32 path, now and then with one item that must send them elsewhere. */
const longNumberArray = fc
  .tuple(
    fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { minLength: 16, maxLength: 40 }),
    fc.option(fc.tuple(fc.nat(), fc.oneof(edgeNumber, leaf)), { freq: 2 }),
  )
  .map(([ids, odd]) => {
    if (odd !== null) ids[odd[0] % ids.length] = odd[1] as number;
    return ids;
  });

const tree = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    leaf,
    longNumberArray,
    fc.array(tie("node"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(trickyString, fc.nat({ max: 20 }).map(String)), tie("node"), { maxKeys: 4 }),
    fc
      .array(fc.tuple(fc.constantFrom("b", "1", "a", "0", "k,", "k:", "\u00e9"), tie("node")), { maxLength: 4 })
      .map((entries) => pyObjectFromEntries(entries.map(([k, v]) => [k, v as never]))),
  ),
})).node;

describe("dumpsPy's text writer and int32 arrays", () => {
  test("random trees: every option set gives the reference writer's bytes", () => {
    fc.assert(
      fc.property(tree, (value) => bothWriters(value).every(([ours, reference]) => ours === reference)),
      { numRuns: 3000, seed: 2930, endOnFailure: true },
    );
  });

  test("a copied text is spelled under other settings and passes through ensure_ascii as the reference does", () => {
    fc.assert(
      fc.property(tree, fc.constantFrom(...ALL_OPTIONS), (value, options) => {
        let text: string;
        try {
          text = dumpsPy(value, options);
        } catch {
          return true; // nothing to copy: the writers' errors are compared above
        }
        const copied = { a: new SpelledPyJson(value, text, options), b: [new SpelledPyJson(value, `${text}\u00e9`, options)] };
        return bothWriters(copied).every(([ours, reference]) => ours === reference);
      }),
      { numRuns: 500, seed: 2931, endOnFailure: true },
    );
  });

  test("the upstream body's shape: separators inside strings stay, ids get `, `, non-ASCII is escaped", () => {
    const ids = Array.from({ length: 40 }, (_, i) => (i * 7919) % 151_936);
    const body = {
      messages: [
        { role: "system", content: "Be brief, please: one sentence." },
        { role: "assistant", content: "", tool_calls: [{ function: { name: "get_weather", arguments: '{"location": "Zürich, CH"}' } }] },
      ],
      temperature: 1.0,
      seed: 7,
      input_ids: ids,
    };
    expect(dumpsPy(body, PY_DEFAULT_JSON)).toBe(
      '{"messages": [{"role": "system", "content": "Be brief, please: one sentence."}, ' +
        '{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get_weather", "arguments": "{\\"location\\": \\"Z\\u00fcrich, CH\\"}"}}]}], ' +
        `"temperature": 1, "seed": 7, "input_ids": [${ids.join(", ")}]}`,
    );
    expectSameAsReference(body);
  });

  test("each int32 rule is needed: -0, past 2^31, a float, a hole, a non-number send the array elsewhere", () => {
    const base = Array.from({ length: 20 }, (_, i) => i * 1000 - 9000);
    const cases: Array<[unknown, string]> = [
      [-0, "-0.0"],
      [2 ** 31, "2147483648"],
      [-(2 ** 31), "-2147483648"],
      [-(2 ** 31) - 1, "-2147483649"],
      [1e10, "10000000000"],
      [2 ** 53 - 1, "9007199254740991"],
      [2 ** 53, "9007199254740992"],
      [0.5, "0.5"],
      [1e-7, "1e-07"],
      [new PyFloat(3), "3.0"],
      [new PyBigInt(2n ** 70n), "1180591620717411303424"],
      ["7", '"7"'],
      [null, "null"],
      [undefined, "null"],
    ];
    for (const [odd, spelled] of cases) {
      const array: unknown[] = [...base];
      array[11] = odd;
      const expected = [...base.slice(0, 11).map(String), spelled, ...base.slice(12).map(String)];
      expect([odd, dumpsPy(array, PY_DEFAULT_JSON)]).toEqual([odd, `[${expected.join(", ")}]`]);
      expect([odd, dumpsPy({ x: array, s: "\u00e9" }, PY_RESPONSE_JSON)]).toEqual([odd, `{"x":[${expected.join(",")}],"s":"\u00e9"}`]);
      expectSameAsReference(array);
    }
    // eslint-disable-next-line no-sparse-arrays -- a hole is the case under test
    const holey = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, , 17];
    expect(dumpsPy(holey, PY_DEFAULT_JSON)).toBe("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, null, 17]");
    expectSameAsReference(holey);
  });

  test("an array past the reused buffer's size, and one written again from inside its own write, come out whole", () => {
    const long = Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 151_936);
    expect(dumpsPy(long, PY_DEFAULT_JSON)).toBe(`[${long.join(", ")}]`);
    const inner = Array.from({ length: 30 }, (_, i) => (i === 0 ? 7 : -i * 1_000_003));
    const outer = Array.from({ length: 30 }, (_, i) => i);
    let innerText = "";
    Object.defineProperty(outer, 5, {
      get: () => {
        innerText = dumpsPy(inner, PY_DEFAULT_JSON);
        return 5;
      },
      enumerable: true,
    });
    expect(dumpsPy(outer, PY_DEFAULT_JSON)).toBe(`[${outer.map((_, i) => i).join(", ")}]`);
    expect(innerText).toBe(`[${inner.join(", ")}]`);
    expect(dumpsPy(long, PY_DEFAULT_JSON)).toBe(`[${long.join(", ")}]`);
  });

  test("a string is quoted as it is only when JSON.stringify and ensure_ascii would leave it alone", () => {
    const strings = ['a"b', "a\\b", "tab\t", "\u0000", "\u001f", "\u007f", "\u0080", "\u00e9", "\ud83d\ude00", "\ud800", "\udfff x", "plain, : text ~"];
    for (const s of strings) {
      expect([s, dumpsPy([s], PY_DEFAULT_JSON)]).toEqual([
        s,
        `[${JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}]`,
      ]);
      expect([s, dumpsPy({ [s]: s }, PY_TOJSON)]).toEqual([s, `{${JSON.stringify(s)}: ${JSON.stringify(s)}}`]);
      expectSameAsReference({ [s]: [s, { k: s }] });
    }
  });
});

/** The two calls parsePyJsonBytes stands for, as the servers made them: the byte scan, then parsePyJson of the text. */
function referenceRead(bytes: Buffer, maxDepth: number): string {
  const excess = findJsonDepthExcess(bytes, maxDepth);
  if (excess !== null) return `excess ${JSON.stringify(excess)}`;
  try {
    return `value ${dumpsPy(parsePyJson(bytes.toString("utf8")), PY_SAMPLES_META_JSON)}`;
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

function combinedRead(bytes: Buffer, maxDepth: number): string {
  try {
    const read = parsePyJsonBytes(bytes, maxDepth);
    return read.excess !== null ? `excess ${JSON.stringify(read.excess)}` : `value ${dumpsPy(read.value, PY_SAMPLES_META_JSON)}`;
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

/** Spellings each reading rule turns on: integral floats, 16+ digit ints, `-0`, exponents, Python's literals. */
const NUMBER_TOKENS = [
  "1.0",
  "-0",
  "-0.0",
  "0",
  "7",
  "-12",
  "1e5",
  "1E+2",
  "2.5e-3",
  "0.99999999999999999",
  "0.1",
  "-0.0078125",
  "123456789012345",
  "1234567890123456",
  "9007199254740993",
  "-9999999999999999",
  "12345678901234567890",
  "1796075262.0039878",
  "1796075262.000000",
  "NaN",
  "-Infinity",
];
/** String bodies that a scan must skip whole: brackets, quotes, escapes, a backslash before the closing quote. */
const STRING_BODIES = ["", "a", "[", "]{", '\\"', "\\\\", "\\\\\\\\", "1.0", "-0", "\u00e9[", "\ud83d\ude00{", "\\u005b", "a,b: c"];
const KEYS = ['"a"', '"b"', '"1"', '"0"', '"20"', '"01"', '"-1"', '"\\u0031"', '"k["'];

const jsonText: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom(...NUMBER_TOKENS),
    fc.constantFrom(...STRING_BODIES).map((body) => `"${body}"`),
    fc.constantFrom("true", "null", '"x"'),
    fc.tuple(fc.array(tie("node"), { maxLength: 4 }), fc.constantFrom(",", ", ", " ,\n ")).map(([items, sep]) => `[${items.join(sep)}]`),
    fc
      .tuple(fc.array(fc.tuple(fc.constantFrom(...KEYS), tie("node")), { maxLength: 4 }), fc.constantFrom(",", ", "))
      .map(([entries, sep]) => `{${entries.map(([k, v]) => `${k}: ${v}`).join(sep)}}`),
  ),
})).node;

/** A valid text, or one broken by a cut or an inserted byte (a bracket, a quote, a backslash, a stray UTF-8 byte). */
const bodyBytes = fc
  .tuple(jsonText, fc.option(fc.tuple(fc.nat(), fc.constantFrom(0x5b, 0x7b, 0x5d, 0x22, 0x5c, 0x80, 0xc3, 0xe2, 0xff, 0x2c, -1)), { freq: 3 }))
  .map(([text, damage]) => {
    const bytes = Buffer.from(text, "utf8");
    if (damage === null) return bytes;
    const at = damage[0] % (bytes.length + 1);
    if (damage[1] === -1) return bytes.subarray(0, at);
    return Buffer.concat([bytes.subarray(0, at), Buffer.from([damage[1]]), bytes.subarray(at)]);
  });

describe("parsePyJsonBytes: the depth cap and the native-parser check in one scan", () => {
  test("random texts, valid and damaged, under small caps: the byte scan's excess or parsePyJson's value or error", () => {
    fc.assert(
      fc.property(bodyBytes, fc.integer({ min: 0, max: 5 }), (bytes, maxDepth) => combinedRead(bytes, maxDepth) === referenceRead(bytes, maxDepth)),
      { numRuns: 5000, seed: 2932, endOnFailure: true },
    );
  });

  test("each reading rule shows in the value: integral floats, long ints, -0, integer-like keys, even after a lossy token", () => {
    const texts = [
      "[1.0]",
      "[1e5, 2]",
      "[12345678901234567890]",
      "[1234567890123456]",
      "[9007199254740993, 1]",
      "[-0]",
      '{"b": 1, "1": 2}',
      '[1.0, {"b": 1, "1": 2}]',
      '["\\\\", 1.0]',
      '["a\\"b", -0]',
      '[{"1": 0}, 12345678901234567890, 1.0]',
      "[[[[1]]]], [[1.0]]",
      '["\u00e9", 1.0, [[[[]]]]]',
    ];
    for (const text of texts) {
      for (const maxDepth of [2, 3, 128]) {
        expect([text, maxDepth, combinedRead(Buffer.from(text), maxDepth)]).toEqual([text, maxDepth, referenceRead(Buffer.from(text), maxDepth)]);
      }
    }
    expect(parsePyJsonBytes(Buffer.from("[1.0, [2.0]]")).value).toEqual([new PyFloat(1), [new PyFloat(2)]]);
  });

  test("the excess is the byte scan's: its offset counts bytes, past non-ASCII text and after a lossy token", () => {
    const text = '["\u00e9\u00e9", 1.0, [[[1]]]]';
    expect(parsePyJsonBytes(Buffer.from(text), 3)).toEqual({
      value: undefined,
      excess: { offset: Buffer.byteLength('["\u00e9\u00e9", 1.0, [['), maxDepth: 3 },
    });
    expect(parsePyJsonBytes(Buffer.from('["[[[[", "\\\\"]'), 1)).toEqual({ value: ["[[[[", "\\"], excess: null });
    // a bracket inside a string does not count, and deep nesting is reported before an error after it
    expect(parsePyJsonBytes(Buffer.from("[[[[ oops"), 3).excess).toEqual({ offset: 3, maxDepth: 3 });
    expect(() => parsePyJsonBytes(Buffer.from("[[[ oops"), 3)).toThrow("Expecting value: line 1 column 5 (char 4)");
  });
});
