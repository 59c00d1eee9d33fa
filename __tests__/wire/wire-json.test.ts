// stringifyExactJson: exact JSON out, and on refusal the same path and problem the eager-path writer reported.
// The reference below is that earlier writer (a path string built for every element), with Python's number spelling.
// The number spelling mirrors miles/rollout/session/samples/codec.py (json.dumps(meta, ensure_ascii=False, separators=(",", ":"))).
import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { pythonFloatRepr } from "../../src/wire/py-json";
import { MAX_WIRE_JSON_DEPTH, stringifyExactJson } from "../../src/wire/wire-json";
import { expectEqual } from "../support/fast-expect";

class Refused extends Error {
  constructor(
    readonly at: string,
    readonly problem: string,
  ) {
    super(`${at}: ${problem}`);
  }
}

const fail = (at: string, problem: string): never => {
  throw new Refused(at, problem);
};

const LONE_SURROGATE = /\p{Cs}/u;

/** The writer as it was before paths became lazy: the oracle for output and messages. */
function eagerReference(value: unknown, path: string): string {
  const ancestors = new Set<object>();
  const write = (node: unknown, at: string, depth: number): string => {
    switch (typeof node) {
      case "string":
        if (LONE_SURROGATE.test(node)) return fail(at, "a string holding a lone UTF-16 surrogate has no UTF-8 form");
        return JSON.stringify(node);
      case "boolean":
        return node ? "true" : "false";
      case "number":
        if (Number.isInteger(node) && !Object.is(node, -0)) return BigInt(node).toString();
        return pythonFloatRepr(node);
      case "object":
        break;
      default:
        return fail(at, `a ${typeof node} is not representable in JSON`);
    }
    if (node === null) return "null";
    if (depth >= MAX_WIRE_JSON_DEPTH) return fail(at, `nested deeper than ${MAX_WIRE_JSON_DEPTH} levels`);
    if (ancestors.has(node)) return fail(at, "circular reference");
    ancestors.add(node);
    let text: string;
    if (Array.isArray(node)) {
      const items: string[] = [];
      for (let i = 0; i < node.length; i++) items.push(write(node[i], `${at}[${i}]`, depth + 1));
      text = `[${items.join(",")}]`;
    } else {
      const proto = Object.getPrototypeOf(node) as unknown;
      if (proto !== Object.prototype && proto !== null) return fail(at, `${Object.prototype.toString.call(node)} is not a plain JSON object`);
      const items: string[] = [];
      for (const key of Object.keys(node)) {
        if (LONE_SURROGATE.test(key)) return fail(at, "a key holding a lone UTF-16 surrogate has no UTF-8 form");
        items.push(`${JSON.stringify(key)}:${write((node as Record<string, unknown>)[key], `${at}.${key}`, depth + 1)}`);
      }
      text = `{${items.join(",")}}`;
    }
    ancestors.delete(node);
    return text;
  };
  return write(value, path, 0);
}

function outcome(run: () => string): { text: string } | { at: string; problem: string } {
  try {
    return { text: run() };
  } catch (error) {
    if (error instanceof Refused) return { at: error.at, problem: error.problem };
    throw error;
  }
}

/** JSON-like values with the things the writer must refuse mixed in at any depth. */
const anyValue = fc.letrec((tie) => ({
  leaf: fc.oneof(
    { weight: 8, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
    { weight: 2, arbitrary: fc.constantFrom(-0, 0, 1.5, -1e-300, 2 ** 60) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<unknown>(undefined, Number.NaN, Infinity, () => 1, 1n, Symbol("s"), "\ud800", "ok\udfff", new Map(), new Date(0)),
    },
  ),
  node: fc.oneof(
    { depthSize: "small" },
    tie("leaf"),
    fc.array(tie("node"), { maxLength: 5 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), fc.constant("\ud83d")), tie("node"), { maxKeys: 5 }),
  ),
}));

describe("stringifyExactJson", () => {
  it("gives the eager-path writer's text or its exact path and problem, for random values", () => {
    fc.assert(
      fc.property(anyValue.node, fc.constantFrom("meta", "encodeSamples: session_metadata", ""), (value, path) => {
        expectEqual(
          outcome(() => stringifyExactJson(value, path, fail)),
          outcome(() => eagerReference(value, path)),
        );
      }),
      { numRuns: 3000, seed: 42 },
    );
  });

  it("names the failing element's full path, after any number of accepted siblings", () => {
    const value = { samples: [{ ok: [1, 2, 3] }, { metadata: { tags: ["a", "b", { score: Number.NaN }] } }] };
    expect(outcome(() => stringifyExactJson({ ...value, bad: [undefined] }, "meta", fail))).toEqual({
      at: "meta.bad[0]",
      problem: "a undefined is not representable in JSON",
    });
    expect(stringifyExactJson(value, "meta", fail)).toBe('{"samples":[{"ok":[1,2,3]},{"metadata":{"tags":["a","b",{"score":NaN}]}}]}');
    expect(outcome(() => stringifyExactJson([[1], [2, [undefined]]], "x", fail))).toEqual({
      at: "x[1][1][0]",
      problem: "a undefined is not representable in JSON",
    });
    expect(outcome(() => stringifyExactJson({ a: { "b.c": [new Map()] } }, "p", fail))).toEqual({
      at: "p.a.b.c[0]",
      problem: "[object Map] is not a plain JSON object",
    });
    expect(outcome(() => stringifyExactJson({ a: 1, b: { "\ud800": 1 } }, "p", fail))).toEqual({
      at: "p.b",
      problem: "a key holding a lone UTF-16 surrogate has no UTF-8 form",
    });
  });

  it("names cycles and excessive depth where they occur", () => {
    const cycle: Record<string, unknown> = { list: [1] };
    (cycle.list as unknown[]).push(cycle);
    expect(outcome(() => stringifyExactJson({ root: cycle }, "m", fail))).toEqual({ at: "m.root.list[1]", problem: "circular reference" });
    let deep: unknown = 1;
    for (let i = 0; i < MAX_WIRE_JSON_DEPTH + 1; i += 1) deep = [deep];
    const refused = outcome(() => stringifyExactJson(deep, "d", fail));
    expect(refused).toEqual({ at: `d${"[0]".repeat(MAX_WIRE_JSON_DEPTH)}`, problem: `nested deeper than ${MAX_WIRE_JSON_DEPTH} levels` });
    const shared = [1];
    expect(stringifyExactJson({ a: shared, b: shared }, "s", fail)).toBe('{"a":[1],"b":[1]}');
  });

  it("writes number arrays (token ids, log-probs) like every other array: -0, holes, non-finite and toJSON included", () => {
    const ids = Array.from({ length: 300 }, (_, i) => (i * 7919) % 151_669);
    expect(stringifyExactJson({ ids, lp: [-0.5, 1e-7, 2 ** 60] }, "m", fail)).toBe(`{"ids":[${ids.join(",")}],"lp":[-0.5,1e-07,${BigInt(2 ** 60)}]}`);
    expect(stringifyExactJson([1, -0, 2], "m", fail)).toBe("[1,-0.0,2]");
    // eslint-disable-next-line no-sparse-arrays -- the hole is the value under test
    const sparse = [1, , 3];
    expect(outcome(() => stringifyExactJson({ sparse }, "m", fail))).toEqual({ at: "m.sparse[1]", problem: "a undefined is not representable in JSON" });
    expect(stringifyExactJson([0, 1, Infinity, -Infinity, Number.NaN], "m", fail)).toBe("[0,1,Infinity,-Infinity,NaN]");
    const custom = Object.assign([1, 2], { toJSON: () => "replaced" });
    expect(stringifyExactJson(custom, "m", fail)).toBe("[1,2]");
  });

  it("writes text that JSON.parse gives back exactly, -0 included", () => {
    const value = { a: [-0, 0, 1e21, "x\u2028y", { "": null }], b: true, c: "😀" };
    const text = stringifyExactJson(value, "v", fail);
    expect(text).toBe('{"a":[-0.0,0,1000000000000000000000,"x\u2028y",{"":null}],"b":true,"c":"😀"}');
    expect(Object.is((JSON.parse(text) as { a: number[] }).a[0], -0)).toBe(true);
  });
});
