// The two ways the session view reuses text already written: dumpsPy copying a SpelledPyJson's text into its native
// write (spliced in place of a mark), and the compact spelling of a request body derived from the default one sent
// upstream. Both are held to the reference writer on random and adversarial values.
// mirrors miles/rollout/session/core.py::_render_json (compact, ensure_ascii=False) and core.py::chat_completions
// (json.dumps(request_body), default separators); the reference writer is what py-json.test.ts holds to Python.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import {
  dumpsPy,
  dumpsPyWriter,
  PY_DEFAULT_JSON,
  PY_RESPONSE_JSON,
  PY_SAMPLES_META_JSON,
  PyBigInt,
  PyFloat,
  pyObjectFromEntries,
  SpelledPyJson,
  type PyDumpsOptions,
} from "../../src/wire/py-json";
import { ALL_OPTIONS, SPLICE_MARK } from "./py-json-settings";
import { compactFromDefaultSpelling } from "../../src/wire/py-json-compact";
import { binaryString } from "../support/binary-unit";
import { expectSame } from "../support/fast-expect";

function spell(write: typeof dumpsPy, value: unknown, options: PyDumpsOptions): string {
  try {
    return write(value, options);
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

function expectSameAsReference(value: unknown): void {
  for (const options of ALL_OPTIONS) expectSame(spell(dumpsPy, value, options), spell(dumpsPyWriter, value, options));
}

const leaf = fc.oneof(
  fc.constantFrom("", "a", ", ", ": ", '"', "\\", "\n", "\u0000", "\u007f", "é", "😀", "\ud800", SPLICE_MARK, `x${SPLICE_MARK}`, "-1.2345678901234567e-301"),
  binaryString({ maxLength: 4 }),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(0, -0, 1, -1, 0.5, -0.0078125, 1e-5, 1e16, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, undefined),
  fc.double(),
  fc.integer(),
  fc.constantFrom(new PyFloat(1), new PyFloat(-0), new PyBigInt(2n ** 70n)),
);

/** Trees whose subtrees are now and then copies (under matching or other settings, their text true or planted). */
const treeWithCopies = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    leaf,
    fc.array(tie("node"), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom("a", "b", "request", "response", "1", "é"), tie("node"), { maxKeys: 4 }),
    fc
      .array(fc.tuple(fc.constantFrom("b", "1", "a"), tie("node")), { maxLength: 3 })
      .map((entries) => pyObjectFromEntries(entries.map(([k, v]) => [k, v as never]))),
    fc.tuple(tie("node"), fc.constantFrom(...ALL_OPTIONS), fc.constantFrom("true", "planted")).map(([value, options, how]) => {
      const text = how === "true" ? spell(dumpsPyWriter, value, options) : `{"planted":"é${SPLICE_MARK}"}`;
      return new SpelledPyJson(value, text, options);
    }),
  ),
})).node;

describe("dumpsPy copies a SpelledPyJson's text into its native write", () => {
  test("random trees with copies anywhere, -0s and marks in strings: every setting gives the reference's bytes", () => {
    fc.assert(
      fc.property(treeWithCopies, (value) => expectSameAsReference(value)),
      { numRuns: 4000, seed: 2929, endOnFailure: true },
    );
  });

  test("a session view's shape: records whose request and response are copies, -0 log-probs beside them", () => {
    const response = {
      choices: [
        {
          meta_info: {
            output_token_logprobs: [
              [-0, 10061],
              [-0.0078125, 752],
            ],
          },
        },
      ],
    };
    const request = { messages: [{ role: "user", content: "héllo, world: hi" }], input_ids: [1, 2, 3] };
    const record = (n: number): Record<string, unknown> => ({
      timestamp: 1796134910.5 + n,
      method: "POST",
      request: new SpelledPyJson(request, dumpsPyWriter(request, PY_RESPONSE_JSON), PY_RESPONSE_JSON),
      response: new SpelledPyJson(response, dumpsPyWriter(response, PY_RESPONSE_JSON), PY_RESPONSE_JSON),
      status_code: 200,
    });
    const view = { session_id: "s", records: [record(0), record(1)], metadata: { accumulated_token_ids: [1, 2], logprob: -0 } };
    expect(dumpsPy(view, PY_RESPONSE_JSON)).toBe(dumpsPyWriter(view, PY_RESPONSE_JSON));
    expect(dumpsPy(view, PY_RESPONSE_JSON)).toContain('"output_token_logprobs":[[-0.0,10061],[-0.0078125,752]]');
    expect(dumpsPy(view, PY_RESPONSE_JSON)).toContain('"logprob":-0.0}');
    // every slot holds its own value again afterwards
    expect(view.records[0].request).toBeInstanceOf(SpelledPyJson);
    expect(view.metadata.logprob).toBe(-0);
    expect(Object.is(view.metadata.logprob, -0)).toBe(true);
  });

  test("a copy's text is what is written (trusted, as the writer trusts it); other settings spell its value", () => {
    const copy = new SpelledPyJson({ a: 1 }, '{"a":"from the text"}', PY_RESPONSE_JSON);
    expect(dumpsPy({ x: copy }, PY_RESPONSE_JSON)).toBe('{"x":{"a":"from the text"}}');
    expect(dumpsPy({ x: copy }, PY_DEFAULT_JSON)).toBe('{"x": {"a": 1}}');
    expect(dumpsPy({ x: copy }, PY_SAMPLES_META_JSON)).toBe('{"x":{"a":1}}');
  });

  test("marks that cannot stand in: a frozen container, an accessor, a string holding the mark, a copy at the top", () => {
    const copy = (): SpelledPyJson => new SpelledPyJson([1.5], "[1.5]", PY_RESPONSE_JSON);
    const frozen = Object.freeze({ a: copy(), b: "x" });
    const accessor = Object.defineProperty({ b: 1 }, "a", { get: copy, enumerable: true });
    const holdsMark = { a: copy(), b: SPLICE_MARK, c: [copy(), `${JSON.stringify(SPLICE_MARK)}`] };
    for (const value of [frozen, accessor, holdsMark, copy(), [frozen, -0]]) expectSameAsReference(value);
    expect(dumpsPy(holdsMark, PY_RESPONSE_JSON)).toBe(
      `{"a":[1.5],"b":${JSON.stringify(SPLICE_MARK)},"c":[[1.5],${JSON.stringify(JSON.stringify(SPLICE_MARK))}]}`,
    );
  });
});

describe("compactFromDefaultSpelling: the compact text from the default one", () => {
  const tree = fc.letrec<{ node: unknown }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small" },
      leaf,
      fc.array(fc.integer({ min: 0, max: 151_935 }), { minLength: 16, maxLength: 40 }),
      fc.array(tie("node"), { maxLength: 4 }),
      fc.dictionary(fc.constantFrom("a", ", ", ": ", "k\\u", 'q"', "1"), tie("node"), { maxKeys: 4 }),
    ),
  })).node;

  test("random values: when an answer is given it is dumpsPy's compact text, which exists (no NaN)", () => {
    let answered = 0;
    fc.assert(
      fc.property(tree, (value) => {
        let defaultText: string;
        try {
          defaultText = dumpsPy(value, PY_DEFAULT_JSON);
        } catch {
          return;
        }
        const compact = compactFromDefaultSpelling(defaultText);
        if (compact === undefined) return;
        answered += 1;
        expectSame(compact, dumpsPyWriter(value, PY_RESPONSE_JSON));
      }),
      { numRuns: 4000, seed: 2930, endOnFailure: true },
    );
    expect(answered).toBeGreaterThan(1000);
  });

  test("an upstream body: separators and quotes inside strings stay, ids and keys lose their spaces", () => {
    const body = {
      messages: [
        { role: "user", content: 'Hi, there: "quoted" \\ back\nslash, {"json": [1, 2]}' },
        { role: "assistant", content: "", tool_calls: [{ id: "c0", type: "function", function: { name: "f", arguments: '{"a": 1}' } }] },
      ],
      temperature: new PyFloat(1),
      seed: new PyBigInt(12345678901234567890n),
      logprob: -0,
      small: 1e-5,
      input_ids: Array.from({ length: 300 }, (_, i) => i * 7),
    };
    const defaultText = dumpsPy(body, PY_DEFAULT_JSON);
    expect(compactFromDefaultSpelling(defaultText)).toBe(dumpsPyWriter(body, PY_RESPONSE_JSON));
    expect(compactFromDefaultSpelling(defaultText)).toContain('"content":"Hi, there: \\"quoted\\" \\\\ back\\nslash, {\\"json\\": [1, 2]}"');
  });

  // Each: what the default text cannot tell, answered undefined (dumpsPy's compact spelling differs or fails).
  const untold: Array<[what: string, value: unknown]> = [
    ["a non-ASCII character (escaped by ensure_ascii, kept by the compact settings)", { content: "héllo" }],
    ["a character past the BMP", ["😀"]],
    ["DEL, which ensure_ascii escapes", ["a\u007fb"]],
    ["NaN (the compact settings refuse it)", { t: Number.NaN }],
    ["Infinity", [Number.POSITIVE_INFINITY]],
    ["-Infinity", [Number.NEGATIVE_INFINITY]],
  ];
  test.each(untold)("undefined for %s", (_what, value) => {
    const defaultText = dumpsPy(value, PY_DEFAULT_JSON);
    expect(compactFromDefaultSpelling(defaultText)).toBeUndefined();
    const compact = spell(dumpsPyWriter, value, PY_RESPONSE_JSON);
    expect(compact).not.toBe(defaultText.replace(/ /g, ""));
  });

  test("control characters, escaped the same way by both settings; an escaped backslash before a u; a lone surrogate", () => {
    expect(compactFromDefaultSpelling(dumpsPy(["\u0000\u001f\n\t"], PY_DEFAULT_JSON))).toBe('["\\u0000\\u001f\\n\\t"]');
    // `\\u00e9` is an escaped backslash and text, not an escape of é
    expect(compactFromDefaultSpelling(dumpsPy(["\\u00e9"], PY_DEFAULT_JSON))).toBe('["\\\\u00e9"]');
    // both settings escape a lone surrogate alike, but the default text cannot tell it from ensure_ascii's escapes
    expect(compactFromDefaultSpelling(dumpsPy(["\ud800"], PY_DEFAULT_JSON))).toBeUndefined();
    expect(compactFromDefaultSpelling(dumpsPy(["\\u0000"], PY_DEFAULT_JSON))).toBe('["\\\\u0000"]');
    expect(compactFromDefaultSpelling("not json é")).toBeUndefined();
    // a text about as long as the reused buffer with non-ASCII at its end is never taken for ASCII: with one byte of
    // room too few, writing `[111…€é]` would stop before `é` with as many bytes written as there are characters
    for (const size of [16384, 32768, 65536]) {
      for (let length = size - 8; length <= size + 2; length++) {
        expect(compactFromDefaultSpelling(`[${"1".repeat(length - 4)}€é]`)).toBeUndefined();
      }
    }
    expect(compactFromDefaultSpelling('["unterminated')).toBeUndefined();
  });
});
