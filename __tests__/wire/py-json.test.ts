// Lossless JSON in, Python JSON out: our parse + write against python3's json module on the same texts.
// mirrors miles/rollout/session/core.py::_render_json and prepare_chat_request (json.loads, compact response JSON),
// core.py::chat_completions (json.dumps(request_body) upstream) and samples/codec.py::encode_samples (_samples_meta).
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import {
  dumpsPy,
  dumpsPyWriter,
  isPyFloat,
  parsePyJson,
  PY_DEFAULT_JSON,
  PY_RESPONSE_JSON,
  PY_SAMPLES_META_JSON,
  PY_TOJSON,
  PyBigInt,
  PyFloat,
  PyJsonError,
  PyJsonWriteError,
  SpelledPyJson,
  pyFloatValue,
  pyIntValue,
  pyObjectFromEntries,
  pyObjectKeys,
  rememberKeyOrder,
} from "../../src/wire/py-json";
import { isLossyForNativeParse } from "../../src/wire/py-json";
import { stringifyExactJson } from "../../src/wire/wire-json";
import { pythonMissing, runPythonScript } from "../python/python3";
import { binaryString } from "../support/binary-unit";

const missing = pythonMissing();
if (missing !== null) console.warn(`py-json comparison with Python skipped: ${missing}`);
const testWithPython = missing === null ? test : test.skip;

const ATOMS = [
  "1.0",
  "1",
  "-0",
  "-0.0",
  "0.0",
  "1e16",
  "1E+16",
  "1e-7",
  "1e-05",
  "0.0001",
  "0.1",
  "0.10000000000000001",
  "2.50",
  "100.000",
  "12345678901234567890",
  "-9007199254740993",
  "9007199254740991",
  "1.5e300",
  "1e400",
  "-1e400",
  "NaN",
  "Infinity",
  "-Infinity",
  "0.99999999999999999",
  "1796075262.0039878",
  "1796075261.9999999999",
  "4503599627370496.5",
  "123456789012.99999",
  "-0.00",
  "1.0000000000000002",
  "99999999999.000001",
  "-1796075262.000000001",
  "0.000000000000001",
  "true",
  "false",
  "null",
  '"\u00e9\\u00e9\\ud83d\\ude00"',
  '"\\u2028 \\t \\" \\\\ /"',
  '""',
  '"\u007f"',
];

const atom = fc.oneof(
  fc.constantFrom(...ATOMS),
  fc.double().map((d) => (Number.isFinite(d) ? String(d) : "0")),
  fc.integer().map(String),
  fc.json({ maxDepth: 1 }),
);

const key = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 5 }).map((s) => JSON.stringify(s)),
  fc.nat({ max: 40 }).map((n) => `"${n}"`),
  fc.constantFrom('"a"', '"b"'),
);

const jsonText: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    atom,
    fc.tuple(fc.array(tie("node"), { maxLength: 4 }), fc.constantFrom(",", ", ", " ,\n ")).map(([items, sep]) => `[${items.join(sep)}]`),
    fc
      .tuple(fc.array(fc.tuple(key, tie("node")), { maxLength: 4 }), fc.constantFrom(",", ", "))
      .map(([entries, sep]) => `{${entries.map(([k, v]) => `${k}: ${v}`).join(sep)}}`),
  ),
})).node;

const INVALID = ["", " ", "{oops", "[1,]", "[1 2]", '{"a" 1}', '"abc', "01", "[1]x", '{"a":1,}', "tru", '"\\x"', "-", "[", '{"a":', "1.", ".5", '"\u0001"'];

/** Python's type names of a parsed value, in its key order (what the reference script reports). */
function typeTree(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(typeTree);
  if (value instanceof PyFloat) return "float";
  if (value instanceof PyBigInt) return "int";
  if (value !== null && typeof value === "object") {
    const keys = pyObjectKeys(value);
    const out: Record<string, unknown> = {};
    for (const k of keys)
      Object.defineProperty(out, k, { value: typeTree((value as Record<string, unknown>)[k]), enumerable: true, writable: true, configurable: true });
    rememberKeyOrder(out, keys);
    return out;
  }
  if (value === null) return "NoneType";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "string") return "str";
  return isPyFloat(value) ? "float" : "int";
}

type Reference = { error: string } | { default: string; tojson: string; meta: string; types: string; response?: string; response_error?: string };

describe("parsePyJson + dumpsPy agree with Python's json module", () => {
  testWithPython("random texts (int vs float, big ints, -0.0, NaN, integer-like and duplicate keys, unicode) and invalid ones", () => {
    const texts = [...fc.sample(jsonText, { numRuns: 600, seed: 4242 }), ...ATOMS, ...INVALID];
    const reference = JSON.parse(runPythonScript("py_json_reference.py", JSON.stringify(texts))) as Reference[];
    expect(reference).toHaveLength(texts.length);
    let invalid = 0;
    texts.forEach((text, i) => {
      const expected = reference[i];
      if ("error" in expected) {
        invalid += 1;
        let message = "(parsed)";
        try {
          parsePyJson(text);
        } catch (error) {
          expect(error).toBeInstanceOf(PyJsonError);
          message = (error as Error).message;
        }
        expect([text, message]).toEqual([text, expected.error]);
        return;
      }
      const value = parsePyJson(text);
      const ours = {
        default: dumpsPy(value, PY_DEFAULT_JSON),
        tojson: dumpsPy(value, PY_TOJSON),
        meta: dumpsPy(value, PY_SAMPLES_META_JSON),
        types: dumpsPy(typeTree(value), PY_TOJSON),
      };
      expect([text, ours]).toEqual([text, { default: expected.default, tojson: expected.tojson, meta: expected.meta, types: expected.types }]);
      expect([
        text,
        stringifyExactJson(value, "v", (at, problem) => {
          throw new Error(`${at}: ${problem}`);
        }),
      ]).toEqual([text, expected.meta]);
      if (expected.response !== undefined) expect([text, dumpsPy(value, PY_RESPONSE_JSON)]).toEqual([text, expected.response]);
      else expect(() => dumpsPy(value, PY_RESPONSE_JSON)).toThrow(expected.response_error!);
    });
    expect(invalid).toBe(INVALID.length);
  });
});

describe("long number arrays (token ids, log-prob pairs) on the one-call path", () => {
  const ids = Array.from({ length: 40 }, (_, i) => (i * 7919) % 151936).join(", ");
  const pairs = Array.from({ length: 20 }, (_, i) => `[${-(i + 1) / 128}, ${i}]`).join(", ");
  const texts = [
    `{"input_ids": [${ids}], "lp": [${pairs}]}`,
    `[${ids}, 1.0]`, // one integral float: a PyFloat at the end
    `[${ids}, -0]`, // an int -0 is 0
    `[[${ids}], [-0.0, 0.5, ${ids}]]`,
    `[${ids}, 12345678901234567890]`,
    `[${ids}, 1e5]`,
    `[${ids},, 1]`, // invalid: Python's message
    `[${ids} 1]`,
  ];
  testWithPython("read and written as Python's json module does", () => {
    const reference = JSON.parse(runPythonScript("py_json_reference.py", JSON.stringify(texts))) as Reference[];
    texts.forEach((text, i) => {
      const expected = reference[i];
      if ("error" in expected) {
        expect([
          text,
          (() => {
            try {
              parsePyJson(text);
              return "(parsed)";
            } catch (error) {
              return (error as Error).message;
            }
          })(),
        ]).toEqual([text, expected.error]);
        return;
      }
      const value = parsePyJson(text);
      expect([text, dumpsPy(value, PY_SAMPLES_META_JSON), dumpsPy(typeTree(value), PY_TOJSON)]).toEqual([text, expected.meta, expected.types]);
    });
  });
});

describe("the JS form of Python values", () => {
  test("1.0 stays a float, 1 an int, -0.0 negative, big ints exact, integer-like keys in place, duplicates last-wins", () => {
    const value = parsePyJson('{"b": 1.0, "a": 1, "z": -0.0, "big": 123456789012345678901234567890, "10": [1e16], "b": 2.5}') as Record<string, unknown>;
    expect(value.b).toBe(2.5);
    expect(value.a).toBe(1);
    expect(Object.is(value.z, -0)).toBe(true);
    expect(String(value.big)).toBe("123456789012345678901234567890");
    expect((value["10"] as unknown[])[0]).toEqual(new PyFloat(1e16));
    expect(pyObjectKeys(value)).toEqual(["b", "a", "z", "big", "10"]);
    expect(dumpsPy(value, PY_RESPONSE_JSON)).toBe('{"b":2.5,"a":1,"z":-0.0,"big":123456789012345678901234567890,"10":[1e+16]}');
    // a copy made by object spread keeps the order; keys added later come last, as in a Python dict
    expect(dumpsPy({ ...value, added: true }, PY_RESPONSE_JSON)).toBe(
      '{"b":2.5,"a":1,"z":-0.0,"big":123456789012345678901234567890,"10":[1e+16],"added":true}',
    );
    expect(JSON.stringify(parsePyJson("[1.0, 99999999999999999999]"))).toBe("[1,100000000000000000000]");
  });

  test("values built from parts (a literal reader, a tool-call parser) take the form parsePyJson gives them", () => {
    expect([pyIntValue(3n), pyIntValue(-(2n ** 53n) + 1n), pyIntValue(2n ** 53n), pyIntValue(-(10n ** 20n))]).toEqual(
      parsePyJson("[3, -9007199254740991, 9007199254740992, -100000000000000000000]"),
    );
    expect(pyIntValue(2n ** 53n)).toBeInstanceOf(PyBigInt);
    const floats = [pyFloatValue(1), pyFloatValue(0.5), pyFloatValue(-0), pyFloatValue(1e300), pyFloatValue(Number.NaN), pyFloatValue(-Infinity)];
    expect(floats).toEqual(parsePyJson("[1.0, 0.5, -0.0, 1e300, NaN, -Infinity]"));
    expect(Object.is(floats[2], -0)).toBe(true);
    expect(dumpsPy(floats, PY_TOJSON)).toBe("[1.0, 0.5, -0.0, 1e+300, NaN, -Infinity]");
    // insertion order survives integer-like keys; a repeated key keeps its place and takes the last value
    const object = pyObjectFromEntries([
      ["b", 1],
      ["10", 2],
      ["__proto__", [3]],
      ["b", 4],
      ["1", null],
    ]);
    expect(dumpsPy(object, PY_TOJSON)).toBe('{"b": 4, "10": 2, "__proto__": [3], "1": null}');
    expect(object).toEqual(parsePyJson('{"b": 1, "10": 2, "__proto__": [3], "b": 4, "1": null}'));
    expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
    expect(pyObjectKeys(pyObjectFromEntries([["a", 1]]))).toEqual(["a"]);
  });

  test("native JSON.parse is used only where it loses nothing", () => {
    expect(parsePyJson('{"x": [0.5, -3, "1.0 in a string"]}')).toEqual({ x: [0.5, -3, "1.0 in a string"] });
    expect(parsePyJson("[-0]")).toEqual([0]);
    expect(Object.is((parsePyJson("[-0]") as number[])[0], 0)).toBe(true);
    expect(parsePyJson("[0.0]")).toEqual([new PyFloat(0)]);
  });

  test("a number token reads the same on the native path as in the exact reader, however it is spelled", () => {
    // the exact reader runs on the whole text when one element is lossy: `1.0` forces it
    const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max });
    const token = fc
      .tuple(
        fc.constantFrom("", "-"),
        fc.oneof(
          fc.constant("0"),
          fc.tuple(fc.constantFrom(..."123456789"), digits(0, 18)).map(([a, b]) => a + b),
        ),
        fc.option(fc.oneof(digits(1, 20), fc.constantFrom("0", "00000000000000", "9999999999999999", "5", "0000001")), { nil: undefined }),
        fc.option(fc.tuple(fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), digits(1, 3)), { nil: undefined }),
      )
      .map(
        ([sign, whole, fraction, exponent]) =>
          `${sign}${whole}${fraction === undefined ? "" : `.${fraction}`}${exponent === undefined ? "" : exponent.join("")}`,
      );
    fc.assert(
      fc.property(fc.array(token, { minLength: 1, maxLength: 6 }), fc.constantFrom(",", ", "), (tokens, sep) => {
        const native = parsePyJson(`[${tokens.join(sep)}]`) as unknown[];
        const exact = (parsePyJson(`[${tokens.join(sep)}${sep}1.0]`) as unknown[]).slice(0, -1);
        expect(native).toEqual(exact);
        native.forEach((value, i) => expect(Object.is(value, -0)).toBe(Object.is(exact[i], -0)));
      }),
      { numRuns: 3000, seed: 29 },
    );
  });

  test("the native-parse check skips strings and knows which fractions a double can round away", () => {
    // ids, digits and exponents inside strings never force the exact reader
    expect(isLossyForNativeParse('{"id": "chatcmpl-617090e7", "t": "1.0 and 1e5", "q": "a\\"1.0"}')).toBe(false);
    // -0.0 stays a negative zero in JS: the mock's first log-prob takes the native parser
    expect(isLossyForNativeParse("[[-0.0, 10061], [-0.0078125, 752]]")).toBe(false);
    // a seconds timestamp whose fraction starts with two zeros cannot round to an integer
    expect(isLossyForNativeParse('{"timestamp": 1796075262.0039878}')).toBe(false);
    // floats whose double is not an integer lose nothing, however they are spelled: both parsers round alike
    for (const kept of [
      "[1.5E-3, 1e-05, 2.5e0, -0e0, -0.000, 1e400]",
      '{"timestamp": 1796075262.0001234}',
      "[1234567890123.5]",
      "[151644, 8948, 198, -3, 0, 999999999999999]",
      "[151644,8948,198]",
    ]) {
      expect([kept, isLossyForNativeParse(kept)]).toEqual([kept, false]);
      expect(JSON.stringify(parsePyJson(kept))).toBe(JSON.stringify(JSON.parse(kept)));
    }
    for (const lossy of [
      "[1.0]",
      "[0.0]",
      "[-0]",
      "[1e5]",
      "[0e0]",
      "[1, 2, 3.0]",
      "[1, 2, -0]",
      "[12345678901234567.5]",
      "[1796075262.0000000000001]",
      "[1234567890123456]",
      "[9007199254740993]",
      "[0.99999999999999999]",
      "[1796075262.0000000001]",
      '{"10": 1}',
      '{"a": 1, "7" : 2}',
    ]) {
      expect([lossy, isLossyForNativeParse(lossy)]).toEqual([lossy, true]);
    }
  });
});

describe("the compact writer's native shortcut (JSON.stringify where it spells as Python does)", () => {
  const nested = (depth: number): string => `${"[".repeat(depth)}1${"]".repeat(depth)}`;
  // Values at the shortcut's edges: each either passes it or must fall to the recursive writer.
  const EDGES = [
    "[-0.0]",
    '{"x": [1, -0.0], "y": "ok"}',
    "[1e-05, 0.0001, -0.0001, 0.00009999999999999999]",
    "[1e16, 9999999999999998, 4503599627370495.5]",
    "[9007199254740991, -9007199254740991, 9007199254740992, 12345678901234567890]",
    "[1.0, 0.0, 2.5]",
    '{"b": 1, "1": 2, "a": {"20": 3, "3": 4}}',
    '{"\u00e9": "\u00e9\\ud83d\\ude00 \\u2028 \u007f", "k\\u0000": "\\u001f"}',
    '[[], {}, [[]], {"a": {}}, [{}]]',
    '{"__proto__": {"a": 1}, "constructor": 2}',
    "[NaN]",
    "[Infinity, -Infinity]",
    nested(400), // python3's json.loads itself stops near its recursion limit; deeper values are checked below
  ];

  testWithPython("values at its edges are written as Python's json module writes them", () => {
    const reference = JSON.parse(runPythonScript("py_json_reference.py", JSON.stringify(EDGES))) as Reference[];
    EDGES.forEach((text, i) => {
      const expected = reference[i];
      if ("error" in expected) throw new Error(`${text}: ${expected.error}`);
      const value = parsePyJson(text);
      expect([text, dumpsPy(value, PY_SAMPLES_META_JSON)]).toEqual([text, expected.meta]);
      if (expected.response !== undefined) expect([text, dumpsPy(value, PY_RESPONSE_JSON)]).toEqual([text, expected.response]);
      else expect(() => dumpsPy(value, PY_RESPONSE_JSON)).toThrow(expected.response_error!);
    });
  });

  const COMPACT_ASCII = { ensureAscii: true, compact: true, allowNan: true } as const;
  const ALL_OPTIONS = [PY_RESPONSE_JSON, PY_SAMPLES_META_JSON, PY_DEFAULT_JSON, PY_TOJSON, COMPACT_ASCII];

  /** dumpsPy's text or error message, beside the recursive writer's, for every option set. */
  const bothWriters = (value: unknown): Array<[string, string]> =>
    ALL_OPTIONS.map((options) => {
      const spell = (write: typeof dumpsPy): string => {
        try {
          return write(value, options);
        } catch (error) {
          return `${(error as Error).name}: ${(error as Error).message}`;
        }
      };
      return [spell(dumpsPy), spell(dumpsPyWriter)];
    });
  const expectSameAsWriter = (value: unknown): void => {
    for (const [ours, writer] of bothWriters(value)) expect(ours).toBe(writer);
  };

  test("JS values outside Python's model take the recursive writer's spelling or error", () => {
    class Point {
      x = 1;
    }
    const cyclic: unknown[] = [1];
    cyclic.push(cyclic);
    const withToJson = { a: 1, toJSON: () => "replaced" };
    const hiddenToJson = Object.defineProperty({ a: 1 }, "toJSON", { value: () => "replaced", enumerable: false });
    const arrayToJson = Object.assign([1, 2], { toJSON: () => "replaced" });
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: [true, null] });
    const cases: unknown[] = [
      [1, undefined, 2],
      // eslint-disable-next-line no-sparse-arrays -- a hole is the case under test
      [1, , 3],
      { a: undefined, b: 1 },
      { a: undefined },
      undefined,
      [new Point()],
      new Point(),
      bare,
      withToJson,
      hiddenToJson,
      arrayToJson,
      new Map([["a", 1]]),
      new Date(0),
      [new PyFloat(2), new PyBigInt(2n ** 70n)],
      { n: 3n },
      { f: () => 1 },
      [() => 1],
      [Symbol("s")],
      { s: Symbol("s") },
      cyclic,
      JSON.parse(nested(1000)),
      JSON.parse(nested(1001)),
      [new String("boxed"), new Number(1), new Boolean(false)],
      new Uint8Array([1, 2]),
      // a lone surrogate: both writers escape it as JSON.stringify does (Python writes it raw, which no UTF-8 text holds)
      { "\u00e9": ["\u00e9\ud83d\ude00", "\ud800 lone \udfff"] },
    ];
    for (const value of cases) expectSameAsWriter(value);
    // a function value is refused as Python refuses it, not skipped (JSON.stringify's way) nor replaced by toJSON
    expect(() => dumpsPy(withToJson, PY_RESPONSE_JSON)).toThrow("Object of type function is not JSON serializable");
    expect(dumpsPy(hiddenToJson, PY_RESPONSE_JSON)).toBe('{"a":1}');
    expect(dumpsPy(JSON.parse(nested(1000)), PY_RESPONSE_JSON)).toBe(nested(1000));
    expect(() => dumpsPy(cyclic, PY_RESPONSE_JSON)).toThrow(PyJsonWriteError);
    expect(dumpsPy({ "\u00e9": "\ud83d\ude00" }, COMPACT_ASCII)).toBe('{"\\u00e9":"\\ud83d\\ude00"}');
  });

  test("each -0 is written -0.0 through the native writer and is left in place; the mark never leaks", () => {
    const pairs = [
      [-0, 9707],
      [-0.5, 1],
    ];
    const entries = [{ token: "a", logprob: -0, bytes: [97] }, { token: "b", logprob: -0.25 }, { logprob: -0 }];
    const value = { content: entries, output_token_logprobs: pairs, top: -0, nested: [[[-0]]] };
    const expected =
      '{"content":[{"token":"a","logprob":-0.0,"bytes":[97]},{"token":"b","logprob":-0.25},{"logprob":-0.0}],' +
      '"output_token_logprobs":[[-0.0,9707],[-0.5,1]],"top":-0.0,"nested":[[[-0.0]]]}';
    expect(dumpsPy(value, PY_RESPONSE_JSON)).toBe(expected);
    expect(dumpsPyWriter(value, PY_RESPONSE_JSON)).toBe(expected);
    expect([pairs[0][0], entries[0].logprob, entries[2].logprob, value.top, value.nested[0][0][0]].every((x) => Object.is(x, -0))).toBe(true);
    // the writer's way wherever the stand-in cannot be used or could be confused with the data
    const mark = -1.2345678901234567e-301;
    const hard: unknown[] = [
      [-0, mark],
      [-0, String(mark)],
      { [String(mark)]: -0 },
      Object.freeze([-0, 1]),
      Object.defineProperty({ a: 1 }, "z", { value: -0, writable: false, enumerable: true }),
      Object.defineProperty({ a: 1 }, "z", { get: () => -0, enumerable: true }),
      Object.assign(Object.create(null) as Record<string, unknown>, { z: -0, __proto__: -0 }),
      -0,
    ];
    for (const item of hard) expectSameAsWriter(item);
    expect(dumpsPy([-0, mark], PY_RESPONSE_JSON)).toBe("[-0.0,-1.2345678901234567e-301]");
    expect(dumpsPy([-0, String(mark)], PY_RESPONSE_JSON)).toBe('[-0.0,"-1.2345678901234567e-301"]');
  });

  test("random values: the shortcut and the recursive writer give the same bytes", () => {
    const leaf = fc.oneof(
      binaryString({ maxLength: 6 }),
      fc.boolean(),
      fc.constant(null),
      fc.integer(),
      fc.double(),
      fc.constantFrom(-0, 1e-5, 1e-4, 1e16, 2 ** 53, -(2 ** 53) + 1, 0.1, 1e21, undefined),
      fc.double({ noNaN: true }).map((d) => new PyFloat(Math.trunc(d))),
      fc.bigInt().map((b) => new PyBigInt(b)),
    );
    const value = fc.letrec<{ node: unknown }>((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        leaf,
        fc.array(tie("node"), { maxLength: 4 }),
        fc.dictionary(fc.oneof(fc.string({ maxLength: 3 }), fc.nat({ max: 20 }).map(String)), tie("node"), { maxKeys: 4 }),
        fc
          .array(fc.tuple(fc.constantFrom("b", "1", "a", "0"), tie("node")), { maxLength: 4 })
          .map((entries) => pyObjectFromEntries(entries.map(([k, v]) => [k, v as never]))),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        for (const [ours, writer] of bothWriters(v)) if (ours !== writer) return false;
        return true;
      }),
      { numRuns: 3000, seed: 2929 },
    );
  });
});

describe("SpelledPyJson: a value written once and copied after", () => {
  test("the text is copied under the settings it was written with; any other settings spell the value", () => {
    const value = parsePyJson('{"2": -0.0, "1": [1.0, "\u00e9"]}');
    const text = dumpsPy(value, PY_RESPONSE_JSON);
    expect(text).toBe('{"2":-0.0,"1":[1.0,"\u00e9"]}');
    const spelled = new SpelledPyJson(value, "<copied>", PY_RESPONSE_JSON);
    expect(dumpsPy({ a: spelled, b: [spelled] }, PY_RESPONSE_JSON)).toBe('{"a":<copied>,"b":[<copied>]}');
    expect(dumpsPy({ a: spelled }, { ...PY_RESPONSE_JSON })).toBe('{"a":<copied>}');
    expect(dumpsPy({ a: spelled }, PY_SAMPLES_META_JSON)).toBe(`{"a":${text}}`);
    expect(dumpsPy({ a: spelled }, PY_DEFAULT_JSON)).toBe('{"a": {"2": -0.0, "1": [1.0, "\\u00e9"]}}');
  });
});
