// Checks the shared Python JSON module as the mock backend uses it (json.loads, then json.dumps(ensure_ascii=False))
// against outputs of CPython: tool-call arguments go through it, so spacing, key order and float repr match SGLang.
import fc from "fast-check";
import { dumpsPy, parsePyJson, PyJsonError, PY_TOJSON, pythonFloatRepr } from "../../src/wire/py-json";

const roundTrip = (text: string): string => dumpsPy(parsePyJson(text), PY_TOJSON);

describe("Python-compatible JSON", () => {
  test("re-serializes with Python separators, repr floats and exact integers", () => {
    expect(roundTrip('{"b":1,"a":[1.0,2.5e-7,1e16,1e15,0.0001,0.00001,-0.0,1E400,123456789012345678901234567890,-0,3.14159]}')).toBe(
      '{"b": 1, "a": [1.0, 2.5e-07, 1e+16, 1000000000000000.0, 0.0001, 1e-05, -0.0, Infinity, 123456789012345678901234567890, 0, 3.14159]}',
    );
  });

  test("keeps key insertion order, including integer-like keys JavaScript objects would reorder", () => {
    expect(roundTrip('{"2": 1, "1": 2, "b": {}}')).toBe('{"2": 1, "1": 2, "b": {}}');
  });

  test("a duplicate key keeps its first position and its last value", () => {
    expect(roundTrip('{"k":{"x":"a","x":2,"y":null,"z":true}}')).toBe('{"k": {"x": 2, "y": null, "z": true}}');
  });

  test("strings keep non-ASCII text and escape control characters like Python", () => {
    expect(roundTrip('{"x":"caf\\u00e9 \u00e9\\n\\t\\u0001\\/"}')).toBe('{"x": "café é\\n\\t\\u0001/"}');
  });

  test("accepts NaN and infinities as Python does", () => {
    expect(roundTrip("[NaN, -Infinity, Infinity]")).toBe("[NaN, -Infinity, Infinity]");
  });

  test("float repr matches CPython on reference values", () => {
    expect([1 / 3, 2 ** 53, 1.5e300, -1e-300, 100, 0.5, 1e-4, 1.2345e-5].map(pythonFloatRepr)).toEqual([
      "0.3333333333333333",
      "9007199254740992.0",
      "1.5e+300",
      "-1e-300",
      "100.0",
      "0.5",
      "0.0001",
      "1.2345e-05",
    ]);
  });

  test.each(["", "{", '{"a" 1}', '{"a": 1,}', "[1 2]", '"unterminated', '{"a": 1} x', "01", '"tab\there"', "{'a': 1}"])(
    "rejects %j like json.loads",
    (text) => {
      expect(() => parsePyJson(text)).toThrow(PyJsonError);
    },
  );

  test("any JSON value survives parse and dump with the same meaning", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const dumped = roundTrip(JSON.stringify(value));
        expect(JSON.parse(dumped)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
  });
});
