// dumpsPyBytes writes the native write's pieces and the copies it splices in straight into one buffer (ASCII pieces as
// Latin-1): its bytes must be the UTF-8 bytes of dumpsPy's text for every value and setting (copies with non-ASCII,
// astral and lone-surrogate characters next to ASCII ones, -0s, planted marks), and it must throw where dumpsPy throws.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { dumpsPy, dumpsPyBytes, dumpsPyWriter, PY_RESPONSE_JSON, PyBigInt, PyFloat, SpelledPyJson, type PyDumpsOptions } from "../../src/wire/py-json";
import { ALL_OPTIONS, SPLICE_MARK } from "./py-json-settings";
import { binaryString } from "../support/binary-unit";
import { expectSame } from "../support/fast-expect";

/** What dumpsPy gives: its text's UTF-8 bytes, or the error it throws. */
function reference(value: unknown, options: PyDumpsOptions): Buffer | string {
  try {
    return Buffer.from(dumpsPy(value, options), "utf8");
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

function bytes(value: unknown, options: PyDumpsOptions): Buffer | string {
  try {
    return dumpsPyBytes(value, options);
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

function expectSameBytes(value: unknown): void {
  for (const options of ALL_OPTIONS) {
    const expected = reference(value, options);
    const actual = bytes(value, options);
    if (typeof expected === "string") expectSame(actual, expected);
    else expectSame(Buffer.isBuffer(actual) && actual.equals(expected), true);
  }
}

const leaf = fc.oneof(
  fc.constantFrom("", "a", '"', "\\", "\u0000", "\u007f", "é", "€", "😀", "\ud800", "\udc00x", "a\ud83d", SPLICE_MARK, "-1.2345678901234567e-301"),
  binaryString({ maxLength: 4 }),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(0, -0, 1, 0.5, 1e-5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, undefined),
  fc.double(),
  fc.constantFrom(new PyFloat(1), new PyBigInt(2n ** 70n)),
);

/** Trees whose subtrees are now and then copies, their texts true (often non-ASCII) or planted. */
const treeWithCopies = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    leaf,
    fc.array(tie("node"), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom("a", "request", "response", "é", "😀"), tie("node"), { maxKeys: 4 }),
    fc.tuple(tie("node"), fc.constantFrom(...ALL_OPTIONS), fc.constantFrom("true", "planted", "surrogate")).map(([value, options, how]) => {
      let text: string;
      if (how === "true") {
        try {
          text = dumpsPyWriter(value, options);
        } catch {
          text = "null";
        }
      } else text = how === "planted" ? `{"planted":"é${SPLICE_MARK}"}` : '"\ud83d"';
      return new SpelledPyJson(value, text, options);
    }),
  ),
})).node;

describe("dumpsPyBytes", () => {
  test("random trees with copies: the UTF-8 bytes of dumpsPy's text, or its error, under every setting", () => {
    fc.assert(
      fc.property(treeWithCopies, (value) => expectSameBytes(value)),
      { numRuns: 4000, seed: 2932, endOnFailure: true },
    );
  });

  test("a view of copies: ASCII and non-ASCII texts side by side, the joined text's bytes", () => {
    const ascii = { messages: [{ role: "user", content: "hi, there" }], input_ids: Array.from({ length: 300 }, (_, i) => i) };
    const wide = { choices: [{ message: { content: "東京は晴れ 😀, 22°C" } }], logprob: -0 };
    const copy = (value: unknown): SpelledPyJson => new SpelledPyJson(value, dumpsPyWriter(value, PY_RESPONSE_JSON), PY_RESPONSE_JSON);
    const view = {
      session_id: "s-é",
      records: [0, 1, 2].map((n) => ({ n, request: copy(ascii), response: copy(wide), note: n === 1 ? "\ud800" : "ok" })),
      metadata: { accumulated_token_ids: [1, 2, 3], logprob: -0 },
    };
    expectSameBytes(view);
    const out = dumpsPyBytes(view, PY_RESPONSE_JSON);
    expect(out.toString("utf8")).toContain("東京は晴れ 😀, 22°C");
    expect(out.length).toBeGreaterThan(dumpsPy(view, PY_RESPONSE_JSON).length);
  });
});
