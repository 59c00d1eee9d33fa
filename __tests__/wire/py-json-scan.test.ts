// The parse scan that decides how a chat call's JSON bodies are read (native parser or the exact reader, the depth
// cap, a backend reply's spelling kept) was made cheaper: fractions read once, separators skipped, key scopes by depth.
// Every answer is held to the scan it replaced and to the functions it stands for (a kept spelling to the writer), on
// random, damaged and deep texts.
// mirrors miles/rollout/session/core.py (json.loads of the client body and of the backend reply); the exact reader
// and isLossyForNativeParse are what py-json.test.ts holds to Python's json module.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { findJsonDepthExcess, MAX_JSON_DEPTH } from "../../src/wire/json-depth";
import { dumpsPyWriter, isLossyForNativeParse, parsePyJson, parsePyJsonBytes, PY_RESPONSE_JSON } from "../../src/wire/py-json";
import { MAX_SPELLING_DEPTH, NATIVE_EXACT, NATIVE_LOSSY, NESTED_TOO_DEEP, scanForNativeParse, type SpellingScan } from "../../src/wire/py-json-scan";
import { doubleSpelling, gap, intSpelling, jsonText } from "./json-text-arbitraries";
import { referenceScan, type CanonicalScan } from "./support/reference-scan";
import { expectEqual, expectSame } from "../support/fast-expect";

/** The new scan's answers: verdict and (asked for the spelling) whether the text is canonical. */
function scanned(text: string, maxDepth: number): { verdict: number; canonical: boolean; plain: number } {
  const spelling: SpellingScan = { canonical: true, tally: null };
  const verdict = scanForNativeParse(text, maxDepth, spelling);
  return { verdict, canonical: spelling.canonical, plain: scanForNativeParse(text, maxDepth, null) };
}

function referenceScanned(text: string, maxDepth: number): { verdict: number; canonical: boolean; plain: number } {
  const spelling: CanonicalScan = { canonical: true };
  const verdict = referenceScan(text, maxDepth, spelling);
  return { verdict, canonical: spelling.canonical, plain: referenceScan(text, maxDepth, null) };
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The new scan against the old on one text: the same verdict with and without the spelling asked for, the same
 * canonical answer for a text the native parser reads (the answer is only meaningful there), and the verdict the two
 * functions it stands for give: the depth scan's excess, else (for such a text: any other goes to the exact reader
 * whatever the answer) the lossy check's.
 */
function expectSameAnswers(text: string, maxDepth: number): void {
  if (expectKeptSpellingWritten(text, maxDepth)) keptSpellingsChecked += 1;
  expectScanAnswers(text, maxDepth);
}

/** How many texts so far had a kept spelling held to the writer (a guard that the check is reached). */
let keptSpellingsChecked = 0;

function expectScanAnswers(text: string, maxDepth: number): void {
  const ours = scanned(text, maxDepth);
  const reference = referenceScanned(text, maxDepth);
  expectEqual([text, ours.verdict, ours.plain], [text, reference.verdict, reference.plain]);
  if (ours.verdict !== NESTED_TOO_DEEP && parses(text)) expectEqual([text, ours.canonical], [text, reference.canonical]);
  if (findJsonDepthExcess(text, maxDepth) !== null) expectSame(ours.verdict, NESTED_TOO_DEEP);
  else if (parses(text)) expectEqual([text, ours.verdict], [text, isLossyForNativeParse(text) ? NATIVE_LOSSY : NATIVE_EXACT]);
}

/**
 * Not only the scan it replaced: a reply whose spelling is kept is what the writer (which walks the value, not the
 * text) spells for the value Python reads, so a kept spelling never differs from a fresh one. Through the bytes
 * entry the servers use: their texts are decoded UTF-8, so a raw lone surrogate (which the writer escapes, having no
 * UTF-8 form) never reaches the scan there. Returns whether a spelling was kept (and so checked).
 */
function expectKeptSpellingWritten(text: string, maxDepth: number): boolean {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.toString("utf8") !== text) return false;
  const kept = keptSpelling(bytes, maxDepth);
  if (kept === null) return false;
  expectEqual([text, dumpsPyWriter(kept.value, PY_RESPONSE_JSON)], [text, kept.text]);
  return true;
}

/** The value and kept text of a reply read as the servers read one, or null when nothing is kept or Python refuses it. */
function keptSpelling(bytes: Buffer, maxDepth: number): { value: ReturnType<typeof parsePyJson>; text: string } | null {
  try {
    const read = parsePyJsonBytes(bytes, maxDepth, { keepSpelling: true });
    return read.spelled === undefined ? null : { value: read.value, text: read.spelled.text };
  } catch {
    return null;
  }
}

/** A text with a few characters replaced, inserted or deleted: brackets, quotes, backslashes, digits, signs. */
const damaged = fc
  .tuple(
    jsonText,
    fc.array(fc.tuple(fc.nat(), fc.nat({ max: 2 }), fc.constantFrom("[", "]", "{", "}", '"', "\\", ",", ":", "0", "9", "-", ".", "e", "1.0", " ", "é")), {
      minLength: 1,
      maxLength: 3,
    }),
  )
  .map(([text, edits]) => {
    let out = text;
    for (const [at, kind, piece] of edits) {
      const i = out.length === 0 ? 0 : at % out.length;
      out = kind === 0 ? out.slice(0, i) + piece + out.slice(i + 1) : kind === 1 ? out.slice(0, i) + piece + out.slice(i) : out.slice(0, i) + out.slice(i + 1);
    }
    return out;
  });

/** Python's number kinds side by side in the containers a reply holds them in (log-prob pairs, token records). */
const numberTexts = fc
  .array(fc.oneof(intSpelling, doubleSpelling), { minLength: 1, maxLength: 8 })
  .chain((numbers) =>
    fc.constantFrom(
      `[${numbers.join(",")}]`,
      `[${numbers.map((n, i) => `[${n},${i}]`).join(",")}]`,
      `{${numbers.map((n, i) => `"k${i}":${n}`).join(",")}}`,
      `[${numbers.map((n) => `{"token":"a","logprob":${n},"bytes":[97]}`).join(", ")}]`,
    ),
  );

describe("the parse scan answers as the scan it replaced", () => {
  test("random texts spelled every way, under the servers' cap and small ones", () => {
    const keptBefore = keptSpellingsChecked;
    fc.assert(
      fc.property(fc.tuple(gap, jsonText, gap), fc.constantFrom(MAX_JSON_DEPTH, 1, 2, 3), ([before, text, after], maxDepth) => {
        expectSameAnswers(before + text + after, maxDepth);
      }),
      { numRuns: 6000, seed: 29_301 },
    );
    expect(keptSpellingsChecked - keptBefore).toBeGreaterThan(1500); // the writer check was reached
  });

  test("damaged texts: unterminated strings, stray brackets and backslashes, numbers cut or joined", () => {
    const keptBefore = keptSpellingsChecked;
    fc.assert(
      fc.property(damaged, fc.constantFrom(MAX_JSON_DEPTH, 2), (text, maxDepth) => expectSameAnswers(text, maxDepth)),
      { numRuns: 6000, seed: 29_302 },
    );
    expect(keptSpellingsChecked - keptBefore).toBeGreaterThan(200); // the writer check was reached
  });

  test("Python's number kinds in a reply's containers: ints, integral floats, -0, long ints, exponents, fractions", () => {
    const keptBefore = keptSpellingsChecked;
    fc.assert(
      fc.property(numberTexts, (text) => expectSameAnswers(text, MAX_JSON_DEPTH)),
      { numRuns: 6000, seed: 29_303 },
    );
    expect(keptSpellingsChecked - keptBefore).toBeGreaterThan(500); // the writer check was reached
  });

  // Each fraction rule the one-walk read decides by itself, at its edges: the verdict and the spelling as before.
  const fractions = [
    "[0.0]",
    "[-0.0]",
    "[-00.0]",
    "[1.0]",
    "[-1.000]",
    "[0.9]",
    "[0.99]",
    "[0.999999999999]",
    "[0.9999999999999]",
    "[0.99999999999999999]",
    "[0.0000000000001]",
    "[0.00000000000000000001]",
    "[123456789012.9]",
    "[123456789012.99999]",
    "[1234567890123.5]",
    "[1796075262.0039878]",
    "[-0.0078125]",
    "[0.50]",
    "[0.0001]",
    "[0.00001]",
    "[12345678901234.5]",
    "[123456789012345.0]",
    "[1234567890123456.0]",
    "[1.5e+16]",
    "[1.5e-05]",
    "[1.]",
    "[1.,2]",
    "[1.-2]",
    "[1.5.5]",
    "[1.5-5]",
    "[-.5]",
    '{"0":1.0}',
    '{"a":1.0,"a":2}',
    "[2147483647,2147483648,-2147483648,-2147483649,9999999999,-0,-0.0]",
    '["a\\"b",1.0]',
  ];
  test.each(fractions)("at a rule's edge: %s", (text) => {
    expectSameAnswers(text, MAX_JSON_DEPTH);
  });

  test("the verdicts are not all one answer: the texts reach every outcome", () => {
    const seen = new Set<number>();
    fc.assert(
      fc.property(fc.tuple(jsonText, fc.constantFrom(MAX_JSON_DEPTH, 1)), ([text, maxDepth]) => {
        seen.add(scanForNativeParse(text, maxDepth, null));
      }),
      { numRuns: 2000, seed: 29_304 },
    );
    expect([...seen].sort()).toEqual([NATIVE_EXACT, NATIVE_LOSSY, NESTED_TOO_DEEP]);
  });

  test("a spelling scan follows nesting as deep as the writer spells, and the cap still counts past it", () => {
    const deep = (n: number): string => "[".repeat(n) + "1.5" + "]".repeat(n);
    expect(scanned(deep(MAX_SPELLING_DEPTH), MAX_SPELLING_DEPTH)).toEqual({ verdict: NATIVE_EXACT, canonical: true, plain: NATIVE_EXACT });
    expect(scanned(deep(MAX_SPELLING_DEPTH + 1), MAX_SPELLING_DEPTH).verdict).toBe(NESTED_TOO_DEEP);
    expect(parsePyJsonBytes(Buffer.from(deep(MAX_SPELLING_DEPTH)), MAX_SPELLING_DEPTH, { keepSpelling: true }).spelled?.text).toBe(deep(MAX_SPELLING_DEPTH));
    // past the writer's depth nothing is kept (it could not be written again), and the text still parses
    const deeper = deep(MAX_SPELLING_DEPTH + 1);
    const read = parsePyJsonBytes(Buffer.from(deeper), MAX_SPELLING_DEPTH + 1, { keepSpelling: true });
    expect(read.spelled).toBeUndefined();
    expect(read.tally).toBeUndefined();
    expect(read.value).toEqual(parsePyJson(deeper));
  });
});
