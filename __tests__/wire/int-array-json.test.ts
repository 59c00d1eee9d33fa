// The digit writer for long safe-integer lists, alone and inside stringifyExactJson: the text JSON.stringify and
// Python's json.dumps (the samples codec's `_samples_meta`, miles/rollout/session/samples/codec.py) write, and only for
// lists where they agree.
import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { IdListTexts, INT_ARRAY_MIN_LENGTH, isSafeIntegerArray, safeIntegerArrayJson } from "../../src/wire/int-array-json";
import { dumpsPyWriter, PY_SAMPLES_META_JSON } from "../../src/wire/py-json";
import { pyFloat } from "../../src/wire/py-json-values";
import { stringifyExactJson } from "../../src/wire/wire-json";
import { expectSame } from "../support/fast-expect";

const fail = (at: string, problem: string): never => {
  throw new Error(`${at}: ${problem}`);
};

const BOUNDARIES = [
  0,
  1,
  9,
  10,
  99,
  100,
  151_668,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  -(2 ** 31) - 1,
  2 ** 32,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  -1,
  -10,
];

/** Safe integers of every width, boundaries included. */
const safeInteger = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 151_668 }) },
  { weight: 2, arbitrary: fc.integer({ min: -(2 ** 31) - 5, max: 2 ** 31 + 5 }) },
  { weight: 1, arbitrary: fc.maxSafeInteger().filter((x) => !Object.is(x, -0)) },
  { weight: 1, arbitrary: fc.constantFrom(...BOUNDARIES) },
);

describe("safeIntegerArrayJson", () => {
  it("writes what JSON.stringify writes, for safe integers of every width", () => {
    expect(safeIntegerArrayJson(BOUNDARIES)).toBe(JSON.stringify(BOUNDARIES));
    expect(safeIntegerArrayJson([])).toBe("[]");
    // a list longer than the kept scratch memory (1 MiB) is written in memory of its own, then a short one again
    const long = Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 151_669);
    expect(safeIntegerArrayJson(long)).toBe(JSON.stringify(long));
    expect(safeIntegerArrayJson([1, 22, 333])).toBe("[1,22,333]");
    fc.assert(
      fc.property(fc.array(safeInteger, { maxLength: 400 }), (ids) => {
        expectSame(isSafeIntegerArray(ids), true);
        expectSame(safeIntegerArrayJson(ids), JSON.stringify(ids));
        // A list read back from JSON as doubles (the session's token ids) is written the same.
        expectSame(safeIntegerArrayJson(Float64Array.from(ids) as unknown as number[]), JSON.stringify(ids));
      }),
      { numRuns: 400, seed: 29 },
    );
  });

  it("accepts only lists JSON.stringify spells as Python spells ints: no -0, fraction, unsafe int, non-number or hole", () => {
    const ids = Array.from({ length: INT_ARRAY_MIN_LENGTH }, (_, i) => i * 1000);
    for (const bad of [-0, 0.5, 2 ** 53, Number.NaN, Infinity, "1", null, undefined, pyFloat(1), 1n]) {
      const list: unknown[] = [...ids];
      list[7] = bad;
      expect(isSafeIntegerArray(list)).toBe(false);
    }
    const holed: unknown[] = [...ids];
    holed.length += 1; // a hole at the end
    holed.push(5);
    expect(isSafeIntegerArray(holed)).toBe(false);
  });
});

/** Values holding long id lists (and every spelling trap near them) at any depth. */
const valueWithIdLists = fc.letrec((tie) => ({
  idList: fc.oneof(
    { weight: 4, arbitrary: fc.array(safeInteger, { minLength: INT_ARRAY_MIN_LENGTH, maxLength: 80 }) },
    // one element the digit writer must not take: the list is then spelled element by element
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.array(safeInteger, { minLength: INT_ARRAY_MIN_LENGTH, maxLength: 60 }),
          fc.nat(59),
          fc.constantFrom<unknown>(-0, 0.5, 2 ** 60, pyFloat(3), 1e-7),
        )
        .map(([list, at, odd]) => {
          const copy: unknown[] = [...list];
          copy[at % copy.length] = odd;
          return copy;
        }),
    },
    { weight: 1, arbitrary: fc.array(safeInteger, { maxLength: INT_ARRAY_MIN_LENGTH - 1 }) },
  ),
  leaf: fc.oneof(
    { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(-0, 1.5, 1796126647.3927197, 2 ** 60, pyFloat(2), Number.NaN, "x\u2028y", "😀") },
  ),
  node: fc.oneof(
    { depthSize: "small" },
    tie("leaf"),
    tie("idList"),
    fc.array(tie("node"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom("__proto__", "7", "accumulated_token_ids")), tie("node"), { maxKeys: 4 }),
  ),
}));

describe("stringifyExactJson with long id lists", () => {
  it("writes Python's json.dumps text (the recursive writer's) for values holding them at any depth", () => {
    fc.assert(
      fc.property(valueWithIdLists.node, (value) => {
        expectSame(stringifyExactJson(value, "meta", fail), dumpsPyWriter(value, PY_SAMPLES_META_JSON));
      }),
      { numRuns: 2000, seed: 29 },
    );
  });

  it("takes the digit writer inside the containers JSON.stringify would write, in Object.keys order", () => {
    const ids = Array.from({ length: 606 }, (_, i) => (i * 7919) % 151_669);
    const metadata = { lifecycle: [{ t0: null, t1: 1796126647.3927197, turn: 1 }], accumulated_token_ids: ids, 2: "two", leaf: { path_node_ids: [0, 1] } };
    expect(stringifyExactJson(metadata, "m", fail)).toBe(JSON.stringify(metadata));
    expect(stringifyExactJson([ids, [ids, { ids }]], "m", fail)).toBe(JSON.stringify([ids, [ids, { ids }]]));
    // next to a value only the writer spells (-0 as -0.0), the list is still the same text
    expect(stringifyExactJson({ ids, zero: -0 }, "m", fail)).toBe(`{"ids":${JSON.stringify(ids)},"zero":-0.0}`);
  });
});

describe("IdListTexts", () => {
  it("reuses the text of an equal list, never of a list that differs in one id or in length", () => {
    const texts = new IdListTexts();
    const ids = Array.from({ length: 64 }, (_, i) => i * 3);
    expect(texts.text(ids)).toBe(JSON.stringify(ids));
    expect(texts.text([...ids])).toBe(JSON.stringify(ids));
    const other = [...ids];
    other[63] += 1;
    expect(texts.text(other)).toBe(JSON.stringify(other));
    expect(texts.text(ids.slice(0, 63))).toBe(JSON.stringify(ids.slice(0, 63)));
    for (let k = 0; k < 20; k++) {
      const list = ids.map((id) => id + k);
      expect(texts.text(list)).toBe(JSON.stringify(list));
    }
    expect(texts.text(other)).toBe(JSON.stringify(other));
  });

  it("shared by the payload's metadata texts, gives each the text it has alone", () => {
    const ids = Array.from({ length: 606 }, (_, i) => (i * 7919) % 151_669);
    const texts = new IdListTexts();
    const sample = { lifecycle: { t1: 1.5 }, accumulated_token_ids: [...ids] };
    const session = { accumulated_token_ids: ids, tree: { leaves: [{ path_node_ids: [0, 1] }] }, zero: -0 };
    expect(stringifyExactJson(sample, "m", fail, texts)).toBe(JSON.stringify(sample));
    expect(stringifyExactJson(session, "s", fail, texts)).toBe(stringifyExactJson(session, "s", fail));
    expect(stringifyExactJson(session, "s", fail)).toBe(
      `{"accumulated_token_ids":${JSON.stringify(ids)},"tree":{"leaves":[{"path_node_ids":[0,1]}]},"zero":-0.0}`,
    );
  });
});
