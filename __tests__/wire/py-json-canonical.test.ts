// parsePyJsonBytes's keepSpelling: a backend's text is kept as its value's compact spelling only when dumpsPy would
// write exactly that text. Random texts spelled every way JSON allows (whitespace, number forms, escapes, repeated
// and integer-like keys) are held to the reference writer; each rule has a text that only it refuses.
// mirrors miles/rollout/session/core.py::_render_json (json.dumps(..., ensure_ascii=False, separators=(",", ":")));
// the reference writer is what the Python cross-checks in py-json.test.ts hold to Python's json module.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { MAX_JSON_DEPTH } from "../../src/wire/json-depth";
import { dumpsPy, dumpsPyWriter, parsePyJson, parsePyJsonBytes, PY_RESPONSE_JSON, SpelledPyJson } from "../../src/wire/py-json";
import { double, gap, jsonText } from "./json-text-arbitraries";
import { binaryString } from "../support/binary-unit";
import { expectSame } from "../support/fast-expect";

/** The text parsePyJsonBytes keeps for `text`, or undefined. */
function kept(text: string): string | undefined {
  return parsePyJsonBytes(Buffer.from(text, "utf8"), MAX_JSON_DEPTH, { keepSpelling: true }).spelled?.text;
}

/** The reference writer's compact spelling of what `text` parses to, or the error it raises. */
function reference(text: string): string {
  try {
    return dumpsPyWriter(parsePyJson(text), PY_RESPONSE_JSON);
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

function parses(text: string): boolean {
  try {
    parsePyJson(text);
    return true;
  } catch {
    return false;
  }
}

describe("keepSpelling keeps a text only when dumpsPy writes exactly it", () => {
  test("random texts spelled every way: whenever the text is kept, it is the reference's spelling of its value", () => {
    let keptCount = 0;
    let total = 0;
    fc.assert(
      fc.property(fc.tuple(gap, jsonText, gap), ([before, text, after]) => {
        // as the server meets it: bytes, decoded (a lone surrogate becomes U+FFFD on the way)
        const bytes = Buffer.from(before + text + after, "utf8");
        const whole = bytes.toString("utf8");
        if (!parses(whole)) return true;
        total += 1;
        const read = parsePyJsonBytes(bytes, MAX_JSON_DEPTH, { keepSpelling: true });
        if (read.spelled === undefined) return true;
        keptCount += 1;
        expectSame(read.spelled.text, whole);
        expectSame(read.spelled.value, read.value);
        expectSame(reference(whole), whole);
        expectSame(dumpsPy(read.value, PY_RESPONSE_JSON), whole);
        return true;
      }),
      { numRuns: 20000, seed: 29_256, endOnFailure: true },
    );
    // not a rule that never says yes: a good share of the random texts are canonical and kept
    expect(keptCount).toBeGreaterThan(total / 10);
  });

  test("values written compactly are kept: every number of at most 15 digits, every string, nested containers", () => {
    const safeDouble = double.filter((d) => d === 0 || (Math.abs(d) >= 1e-300 && Math.abs(d) < 1e300)).map((d) => Number(d.toPrecision(15)));
    const value = fc.letrec<{ node: unknown }>((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        safeDouble,
        fc.integer(),
        binaryString().filter((s) => Buffer.from(s, "utf8").toString("utf8") === s), // no lone surrogate
        fc.constantFrom(true, false, null),
        fc.array(tie("node"), { maxLength: 4 }),
        fc.dictionary(
          fc.string({ unit: "grapheme" }).filter((k) => !/^(?:0|[1-9][0-9]*)$/.test(k)),
          tie("node"),
          { maxKeys: 4 },
        ),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        const text = dumpsPy(v, PY_RESPONSE_JSON);
        expectSame(kept(text), text);
      }),
      { numRuns: 3000, seed: 29_257 },
    );
  });

  test("an SGLang-shaped reply as the mock writes it is kept; the same reply re-spelled is not, and reads the same", () => {
    const reply =
      '{"id":"chatcmpl-1","object":"chat.completion","created":1796134910,"model":"mock-model","choices":[{"index":0,' +
      '"message":{"role":"assistant","content":"Let me check.\\n","tool_calls":[{"id":"call_0","type":"function","function":{"name":"get_weather","arguments":"{\\"location\\": \\"Paris\\"}"}}]},' +
      '"logprobs":{"content":[{"token":"Let","token_id":10061,"logprob":-0.0,"bytes":[76,101,116],"top_logprobs":[]}]},"finish_reason":"tool_calls",' +
      '"meta_info":{"output_token_logprobs":[[-0.0,10061],[-0.0078125,752],[-1.5e-05,13]],"completion_tokens":3,"prompt_tokens":246,"cached_tokens":0,"weight_version":"w0","e2e_latency":0.05,"temperature":1.0}}],' +
      '"usage":{"prompt_tokens":246,"completion_tokens":3,"total_tokens":249}}';
    expect(kept(reply)).toBe(reply);
    const respelled = dumpsPy(parsePyJson(reply), { ensureAscii: true, compact: false, allowNan: true });
    expect(kept(respelled)).toBeUndefined();
    expect(dumpsPy(parsePyJsonBytes(Buffer.from(respelled)).value, PY_RESPONSE_JSON)).toBe(reply);
    // a real backend's float32 log-probs often take 16-17 digits: correct as repr, but past what the rule vouches for
    expect(kept('{"logprob":-0.31326169967651367}')).toBeUndefined();
  });

  // Each text breaks one rule (and only that one): the reference writes it otherwise, and it is not kept.
  const broken: Array<[rule: string, text: string]> = [
    ["a space between tokens", '{"a": 1}'],
    ["a newline at the end", '{"a":1}\n'],
    ["a repeated key", '{"a":1,"a":2}'],
    ["a repeated key, nested", '[{"t":{"x":1,"x":1}}]'],
    ["a repeated key after a nested object", '{"ab":{"c":1},"ab":2}'],
    ["a repeated empty key", '{"":1,"":2}'],
    ["a repeated key of one character, after others", '{"a":1,"b":2,"c":3,"b":4}'],
    ["-0 as an int", "[-0]"],
    ["an exponent without its sign", "[1e16]"],
    ["an exponent of one digit", "[1e-5]"],
    ["an exponent padded to three digits", "[1e-005]"],
    ["an uppercase exponent", "[1E-05]"],
    ["an exponent in repr's fixed range", "[1e-04]"],
    ["a fixed form below 1e-4", "[0.00001]"],
    ["a fixed form past 1e16", "[12345678901234567.0]"],
    ["a trailing zero", "[0.50]"],
    ["a fraction and an exponent", "[1.5e+16]".replace("1.5", "1.50")],
    ["an integral float written as an int", "[1.00]"],
    ["a float whose double is another decimal", "[0.1000000000000000055511151231257827]"],
    ["an exponent past the double range", "[1e+400]"],
    ["an exponent into the subnormals", "[1.2345e-320]"],
    ["a mantissa of two integer digits", "[12e+20]"],
    ["a mantissa of two integer digits and a fraction", "[12.5e+20]"],
    ["NaN (the compact settings refuse it)", "[NaN]"],
    ["Infinity", "[Infinity]"],
    ["-Infinity", "[-Infinity]"],
    ["an escaped slash", '["a\\/b"]'],
    ["an escaped printable character", '["\\u0041"]'],
    ["an escaped non-ASCII character", '["\\u00e9"]'],
    ["an escaped surrogate pair", '["\\ud83d\\ude00"]'],
    ["a control character escaped with uppercase hex", '["\\u001F"]'],
    ["a newline escaped as \\u000a", '["\\u000a"]'],
    ["a tab escaped as \\u0009", '["\\u0009"]'],
    ["an escaped DEL", '["\\u007f"]'],
  ];
  test.each(broken)("not kept: %s", (_rule, text) => {
    expect(parses(text)).toBe(true);
    expect(reference(text)).not.toBe(text);
    expect(kept(text)).toBeUndefined();
  });

  // Canonical spellings the rules do not vouch for (they cost a conversion or a reordering to prove): not kept.
  const unproven = [
    '{"b":1,"1":2}', // an integer-like key: JS objects move it first, the remembered order puts it back
    "[0.30000000000000004]", // 17 digits
    "[1000000000000000.0]", // an integral float of 16 digits
    "[5e-324]", // a subnormal
  ];
  test.each(unproven)("canonical but not vouched for, so not kept: %s", (text) => {
    expect(reference(text)).toBe(text);
    expect(kept(text)).toBeUndefined();
  });

  // Spellings at the edge of each rule that are repr's own: kept.
  const canonical = [
    "[1.0]",
    "[-0.0]",
    "[0.0]",
    "[0.0001]",
    "[1e-05]",
    "[9.99e-05]",
    "[1e+16]",
    "[1.5e+300]",
    "[1e-307]",
    "[123456789012345.0]",
    "[12345678901234.5]",
    "[0.000123456789012345]",
    "[12345678901234567890]",
    "[-9007199254740993]",
    '["\\n\\"\\\\\\b\\f\\r\\t\\u0000\\u001f"]',
    '["é😀\u2028\u007f"]',
    '{"__proto__":1,"a":{},"b":[]}',
    '{"a":true,"b":false,"c":null}',
    '[{"a":1},{"a":2}]',
    '{"a":{"a":1,"b":[{"a":2,"b":3}]},"b":{"a":4}}',
    '{"abc":1,"axc":2,"ab":3,"abcd":4,"":5}',
    '"just a string"',
    "17",
  ];
  test.each(canonical)("kept: %s", (text) => {
    expect(reference(text)).toBe(text);
    expect(kept(text)).toBe(text);
  });

  test("the kept spelling is a SpelledPyJson of the parsed value; without the option nothing is kept", () => {
    const read = parsePyJsonBytes(Buffer.from('{"a":[1.0,2]}'), MAX_JSON_DEPTH, { keepSpelling: true });
    expect(read.spelled).toBeInstanceOf(SpelledPyJson);
    expect(read.spelled?.options).toBe(PY_RESPONSE_JSON);
    expect(parsePyJsonBytes(Buffer.from('{"a":[1.0,2]}')).spelled).toBeUndefined();
    // bytes that are not UTF-8 decode to U+FFFD, which the kept text holds as the value does
    const bad = Buffer.concat([Buffer.from('["a'), Buffer.from([0xff]), Buffer.from('"]')]);
    const readBad = parsePyJsonBytes(bad, MAX_JSON_DEPTH, { keepSpelling: true });
    expect(readBad.spelled?.text).toBe(dumpsPyWriter(readBad.value, PY_RESPONSE_JSON));
    // past the cap nothing is parsed, and nothing kept
    expect(parsePyJsonBytes(Buffer.from("[[[1]]]"), 2, { keepSpelling: true })).toEqual({ value: undefined, excess: { offset: 2, maxDepth: 2 } });
  });
});
