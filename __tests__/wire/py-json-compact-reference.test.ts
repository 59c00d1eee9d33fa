// compactFromDefaultSpelling jumps from quote to quote and escape to escape and moves long string runs as blocks: on any
// text at all (valid or not: unterminated strings, a trailing backslash, `\u` escapes cut short, spaces anywhere, NaN
// inside and outside strings) it answers exactly what the byte-by-byte pass it replaced answers, and on dumpsPy's
// default texts that is the compact spelling.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { dumpsPy, dumpsPyWriter, PY_DEFAULT_JSON, PY_RESPONSE_JSON } from "../../src/wire/py-json";
import { compactFromDefaultSpelling } from "../../src/wire/py-json-compact";
import { expectSame } from "../support/fast-expect";

/** The byte-by-byte derivation the fast one replaced, kept as the reference. */
function referenceCompact(defaultText: string): string | undefined {
  const length = defaultText.length;
  const out = Buffer.alloc(length + 4);
  if (out.write(defaultText, 0, "utf8") !== length) return undefined;
  let at = 0;
  let inString = false;
  for (let i = 0; i < length; i++) {
    const c = out[i];
    if (inString) {
      out[at++] = c;
      if (c === 0x22) {
        inString = false;
      } else if (c === 0x5c) {
        const e = out[++i];
        if (e === 0x75 && !(out[i + 1] === 0x30 && out[i + 2] === 0x30 && (out[i + 3] === 0x30 || out[i + 3] === 0x31))) return undefined;
        out[at++] = e;
      }
    } else if (c === 0x22) {
      inString = true;
      out[at++] = c;
    } else if (c !== 0x20) {
      if (c === 0x4e || c === 0x49) return undefined;
      out[at++] = c;
    }
  }
  if (inString) return undefined;
  return out.toString("latin1", 0, at);
}

/** Pieces that steer the derivation: quotes, escapes (whole, cut short, of controls or not), spaces, NaN, long runs. */
const piece = fc.oneof(
  fc.constantFrom('"', "\\", '\\"', "\\\\", "\\u0000", "\\u001f", "\\u0020", "\\u00e9", "\\u00", "\\u0", "\\u", " ", ", ", ": ", "N", "I", "NaN", "-Infinity"),
  fc.constantFrom("[", "]", "{", "}", "1", "-0.0", "true", "null", "é", "x"),
  fc.integer({ min: 20, max: 40 }).map((n) => "a".repeat(n)),
  fc.integer({ min: 20, max: 40 }).map((n) => "1, ".repeat(n)),
  fc.string({ unit: "grapheme-ascii", maxLength: 6 }),
);

describe("compactFromDefaultSpelling against the byte-by-byte reference", () => {
  test("any text made of steering pieces: the same answer", () => {
    let answered = 0;
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const text = pieces.join("");
        const expected = referenceCompact(text);
        expectSame(compactFromDefaultSpelling(text), expected);
        if (expected !== undefined) answered += 1;
      }),
      { numRuns: 6000, seed: 2931 },
    );
    expect(answered).toBeGreaterThan(300);
  });

  test("strings of every length around the block size, escapes at every place: the same answer, the compact text", () => {
    for (let length = 0; length <= 60; length++) {
      for (let at = 0; at <= length; at++) {
        const plain = "b".repeat(length);
        for (const escape of ['\\"', "\\\\", "\\n", "\\u0001", "\\u00e9", "\\u00"]) {
          const text = `{"k": "${plain.slice(0, at)}${escape}${plain.slice(at)}", "n": [1, 2]}`;
          expectSame(compactFromDefaultSpelling(text), referenceCompact(text));
        }
        const value = { k: `${plain.slice(0, at)}"\\\n\u0001${plain.slice(at)}`, ids: [1, 2, 3] };
        expectSame(compactFromDefaultSpelling(dumpsPy(value, PY_DEFAULT_JSON)), dumpsPyWriter(value, PY_RESPONSE_JSON));
      }
    }
  });

  test("an upstream body of a long conversation: the compact spelling", () => {
    const messages = Array.from({ length: 40 }, (_, i) => ({
      role: i % 2 === 0 ? "user" : "assistant",
      content: `Turn ${i}: "quoted", with: separators, a tab\t and a long tail ${"z".repeat(i * 7)}`,
    }));
    const body = { messages, temperature: 0.7, input_ids: Array.from({ length: 5000 }, (_, i) => (i * 7919) % 151_000) };
    const defaultText = dumpsPy(body, PY_DEFAULT_JSON);
    expect(compactFromDefaultSpelling(defaultText)).toBe(dumpsPyWriter(body, PY_RESPONSE_JSON));
    expect(compactFromDefaultSpelling(defaultText)).toBe(referenceCompact(defaultText));
  });
});
