// Random JSON texts spelled every way JSON allows (whitespace, number forms, escapes, repeated and integer-like keys),
// for the suites that hold the parse scan's answers to their references: one set, so a spelling added is tried by all.
import fc from "fast-check";
import { pythonFloatRepr } from "../../src/wire/py-json";

/** Doubles at the edges of repr's forms and of the 15-digit rule, and ordinary log-probs. */
const EDGE_DOUBLES = [
  0,
  -0,
  1,
  -1,
  0.5,
  0.1,
  1 / 3,
  -0.0078125,
  1e-4,
  9.99e-5,
  1.5e-5,
  1e-5,
  1e15,
  1e16,
  9999999999999998,
  123456789012345.6,
  0.30000000000000004,
  5e-324,
  2.2250738585072014e-308,
  1e-307,
  1.7976931348623157e308,
  1e307,
  2 ** 53,
  2 ** 53 + 2,
  1796075262.0039878,
  -2.384185791015625e-7,
];
export const double = fc.oneof(
  fc.constantFrom(...EDGE_DOUBLES),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer().map((n) => n / 128),
);

/** The ways a JSON text may spell a double: repr (canonical), JS's own, exponent and fixed forms, padded ones. */
export const doubleSpelling = fc.tuple(double, fc.nat({ max: 11 }), fc.integer({ min: 0, max: 20 })).map(([d, form, digits]) => {
  const abs = Math.abs(d);
  const sign = d < 0 || Object.is(d, -0) ? "-" : "";
  switch (form) {
    case 0:
    case 1:
    case 2:
      return pythonFloatRepr(d);
    case 3:
      return String(d).includes(".") || /e/.test(String(d)) ? String(d) : `${String(d)}.0`;
    case 4:
      return sign + abs.toExponential();
    case 5:
      return sign + abs.toExponential(Math.min(digits, 20)).toUpperCase();
    case 6:
      return sign + abs.toPrecision(Math.max(1, Math.min(digits + 1, 21)));
    case 7:
      return pythonFloatRepr(d).replace(/e([-+])(\d+)$/, (_m, s: string, e: string) => `e${s}0${e}`); // `1e-005`
    case 8:
      return pythonFloatRepr(d).replace(/e\+/, "e"); // `1e16`
    case 9:
      return `${pythonFloatRepr(d)}${pythonFloatRepr(d).includes("e") ? "" : "0"}`; // a trailing zero: `0.50`
    case 10:
      return sign + abs.toPrecision(17);
    default:
      return sign + abs.toFixed(Math.min(digits, 20));
  }
});

export const intSpelling = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom("0", "-0", "1234567890123456", "9007199254740993", "-12345678901234567890", "151643"),
  fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(String),
);

/** String bodies (between the quotes) with every escape JSON allows, canonical or not. */
const stringPiece = fc.oneof(
  fc.constantFrom("a", " ", ",", ":", "é", "\u2028", "\u007f", "😀", "{", "[", "1", "-0.0", "\ud800"),
  fc.constantFrom('\\"', "\\\\", "\\n", "\\t", "\\r", "\\b", "\\f", "\\u0000", "\\u001f", "\\u0007", "\\u001F"),
  fc.constantFrom("\\/", "\\u0041", "\\u00e9", "\\u000a", "\\u0009", "\\ud83d\\ude00", "\\u2028", "\\u007f", "\\ud800"),
);
export const stringBody = fc.array(stringPiece, { maxLength: 5 }).map((parts) => parts.join(""));
export const keyBody = fc.oneof(fc.constantFrom("a", "b", "token", "logprob", "1", "0", "01", "4294967295", "__proto__", "a\\u0062", "ab"), stringBody);

/** Whitespace where JSON allows it: mostly none, as a compact writer puts it. */
export const gap = fc.oneof({ weight: 12, arbitrary: fc.constant("") }, { weight: 1, arbitrary: fc.constantFrom(" ", "\n", "\t", "\r\n  ") });

export const jsonText = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    doubleSpelling,
    intSpelling,
    stringBody.map((body) => `"${body}"`),
    fc.constantFrom("true", "false", "null", "NaN", "Infinity", "-Infinity"),
    fc.tuple(fc.array(fc.tuple(gap, tie("value"), gap), { maxLength: 4 }), gap).map(([items, g]) => `[${g}${items.map(([a, v, b]) => a + v + b).join(",")}]`),
    fc
      .tuple(fc.array(fc.tuple(keyBody, gap, tie("value")), { maxLength: 4 }), gap)
      .map(([entries, g]) => `{${g}${entries.map(([k, s, v]) => `"${k}"${s}:${s}${v}`).join(",")}}`),
  ),
})).value;
