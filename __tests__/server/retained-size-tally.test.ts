// A backend reply is charged to the session budget from the parse scan's tally of its text instead of a walk of the
// parsed tree: the figure must be the walk's, exactly, for every text the tally is given for (and none is given
// where it could be wrong: non-ASCII text, lossy spellings, anything but the compact spelling).
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { retainedTreeBytes, tallyBytes } from "../../src/server/retained-size";
import { MAX_JSON_DEPTH } from "../../src/wire/json-depth";
import { parsePyJsonBytes } from "../../src/wire/py-json";
import { doubleSpelling, gap, intSpelling, jsonText } from "../wire/json-text-arbitraries";
import { expectEqual } from "../support/fast-expect";

/** The tally's figure for `text`, or undefined when the scan gives none. */
function tallied(text: string): number | undefined {
  const read = parsePyJsonBytes(Buffer.from(text, "utf8"), MAX_JSON_DEPTH, { keepSpelling: true });
  return read.tally === undefined ? undefined : tallyBytes(read.tally);
}

/** The walk's figure for the tree the native parser makes of `text`. */
function walked(text: string): number {
  return retainedTreeBytes([JSON.parse(text)]);
}

describe("the tally of a reply's text is the walk of its tree", () => {
  test("random texts: wherever a tally is given it is the walk's figure, and most compact texts get one", () => {
    let given = 0;
    let keptAscii = 0;
    fc.assert(
      fc.property(fc.tuple(gap, jsonText, gap), ([before, text, after]) => {
        const whole = before + text + after;
        const read = parsePyJsonBytes(Buffer.from(whole, "utf8"), MAX_JSON_DEPTH, { keepSpelling: true });
        if (read.spelled !== undefined && Buffer.byteLength(whole) === whole.length) keptAscii += 1;
        if (read.tally === undefined) return;
        given += 1;
        expectEqual([whole, tallyBytes(read.tally)], [whole, walked(whole)]);
      }),
      { numRuns: 10000, seed: 29_311 },
    );
    // not a tally that is never given: most kept ASCII texts get one (the others hold a lossy spelling)
    expect(given).toBeGreaterThan(keptAscii / 2);
  });

  test("numbers as a reply holds them: log-prob pairs, token records, fields, mixed with strings", () => {
    const numbers = fc.array(fc.oneof(intSpelling, doubleSpelling), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(numbers, fc.nat({ max: 4 }), (items, shape) => {
        const text = [
          `[${items.join(",")}]`,
          `[${items.map((n, i) => `[${n},${i}]`).join(",")}]`,
          `{${items.map((n, i) => `"k${i}":${n}`).join(",")}}`,
          `[${items.map((n) => `{"token":"a","logprob":${n},"bytes":[97,98]}`).join(",")}]`,
          `[${items.join(",")},"x",${items.join(",")}]`,
        ][shape];
        const figure = tallied(text);
        if (figure !== undefined) expectEqual([text, figure], [text, walked(text)]);
      }),
      { numRuns: 5000, seed: 29_312 },
    );
  });

  // Each rule of the model at its edge, with the figure the walk gives (a test that fails when a rule is dropped).
  const edges = [
    "[1.5,2.5]", // numbers only: no box
    '[1.5,"a"]', // boxed once a string joins
    '["a",1.5]', // boxed when the string came first
    "[1.5,[1]]", // an array joins
    '[1.5,{"a":1}]', // an object joins
    "[1.5,true,2.5]",
    "[null,-0.0]",
    "[[1.5],2.5]", // the inner array's numbers are its own
    '[[1.5,"a"],2.5]', // a mixed inner array does not box the outer one's numbers
    '{"a":1.5,"b":2}',
    '{"a":2147483647,"b":2147483648,"c":-2147483648,"d":-2147483649,"e":9999999999,"f":123456789012345}',
    "[2147483647,2147483648,-2147483648,-2147483649,null]",
    '{"a":-0.0}',
    '["","1234567","12345678","123456789"]',
    '["\\n\\t\\"\\\\","\\u0000\\u001f","a\\nb"]',
    '{"a":{},"b":[],"c":[{}],"d":[[]]}',
    '{"a":true,"b":false,"c":null}',
    '"just a string"',
    '"a\\"b"',
    "17",
    "-0.0",
    '{"__proto__":1,"a":"b"}',
    '{"id":"chatcmpl-1","created":1796151225,"choices":[{"logprobs":{"content":[{"token":"Let","token_id":10061,"logprob":-0.0,"bytes":[76,101,116],"top_logprobs":[]}]},"meta_info":{"output_token_logprobs":[[-0.0,10061],[-0.0078125,752]]}}]}',
  ];
  test.each(edges)("at a rule's edge: %s", (text) => {
    expect(tallied(text)).toBe(walked(text));
  });

  test("the figure is the model's arithmetic: headers, slots, boxes, one-byte characters in words", () => {
    // an object (3 slots of header), one field; an array (6 slots of header), two items, numbers only
    expect(tallied('{"a":[1,2]}')).toBe(24 + 8 + 48 + 16);
    // a mixed array: one boxed double (16) and a string of 9 characters (header 16, two words)
    expect(tallied('[1.5,"abcdefghi"]')).toBe(48 + 16 + 16 + 16 + 16);
  });

  test("no tally where the text could disagree with it: non-ASCII, lossy spellings, other spellings, past the cap", () => {
    // a character past U+00FF makes a two-byte string; one within it costs two UTF-8 bytes but one character
    expect(tallied('["\u4e2d"]')).toBeUndefined();
    expect(tallied('["\u00e9"]')).toBeUndefined();
    // an integral float, a long int, -0, an integer-like key: the exact reader builds other objects
    for (const text of ["[1.0]", "[12345678901234567]", "[-0]", '{"1":2}']) expect(tallied(text)).toBeUndefined();
    // whitespace, a repeated key, an escape JSON.stringify writes otherwise, NaN
    for (const text of ["[1, 2]", '{"a":1,"a":2}', '["\\u0041"]', "[NaN]"]) expect(tallied(text)).toBeUndefined();
    // nothing without the spelling asked for
    expect(parsePyJsonBytes(Buffer.from("[1,2]")).tally).toBeUndefined();
    expect(parsePyJsonBytes(Buffer.from("[[1]]"), 1, { keepSpelling: true }).tally).toBeUndefined();
  });
});
