// defaultPostprocess builds each merged metadata from an empty object instead of `{ ...metadata, ...agent, ...owned }`
// (keys added to a spread's copy are slow in V8): the result must be the spread's, key for key, on odd keys too.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { defaultPostprocess } from "../../../src/server/v2/default-postprocess";
import type { V2SessionMetadata } from "../../../src/server/v2/tree-metadata";
import { PY_KEY_ORDER } from "../../../src/wire/py-json-values";
import type { JsonObject, JsonValue, Sample } from "../../../src/wire/sample";
import { referencePostprocess } from "../support/samples-op-reference";
import { Grower, rawLeafSample, recordingLogger, sessionMetadataOf } from "./support/forest-builders";

/** Everything observable about an object's own properties: keys in order, descriptors (values by identity), prototype. */
function shape(object: object): unknown[] {
  return [Object.getPrototypeOf(object), ...Reflect.ownKeys(object).map((key) => [key, Object.getOwnPropertyDescriptor(object, key)])];
}

// Keys that are odd for an object built by assignment: the prototype's own, array-index-like ones, server-owned ones.
const oddKey = fc.constantFrom(
  "__proto__",
  "toString",
  "constructor",
  "hasOwnProperty",
  "7",
  "0",
  "10",
  "reward",
  "leaf",
  "accumulated_token_ids",
  "tito_session_mismatch",
  "task",
);
const key = fc.oneof(oddKey, fc.string({ maxLength: 5 }));
const value = fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }));

/** An object holding `entries` as data properties (defined, so `__proto__` is a key), maybe with a Python key order. */
function objectOf(entries: Array<[string, JsonValue]>, keyOrder: boolean, hiddenServerKey: boolean): JsonObject {
  const object: JsonObject = {};
  for (const [k, v] of entries) Object.defineProperty(object, k, { value: v, writable: true, enumerable: true, configurable: true });
  if (keyOrder) Object.defineProperty(object, PY_KEY_ORDER, { value: Object.keys(object).reverse(), writable: true, enumerable: true, configurable: true });
  if (hiddenServerKey) Object.defineProperty(object, "tito_session_mismatch", { value: ["hidden"], writable: true, enumerable: false, configurable: true });
  return object;
}

describe("defaultPostprocess matches the spread-built reference", () => {
  test("random trees, extra sample metadata and agent metadata with odd keys: same samples, same metadata objects", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(20), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 })), { minLength: 1, maxLength: 8 }),
        fc.array(fc.array(fc.tuple(key, value), { maxLength: 6 }), { maxLength: 8 }),
        fc.option(fc.array(fc.tuple(key, value), { maxLength: 8 })),
        fc.boolean(),
        fc.boolean(),
        (plan, extras, agentEntries, keyOrder, hidden) => {
          const build = (): { samples: Sample[]; session: V2SessionMetadata } => {
            const g = new Grower();
            const root = g.grow(null, { env: 2, completion: 2 });
            const nodes = [root];
            for (const [pick, env, completion] of plan) nodes.push(g.grow(nodes[pick % nodes.length], { env, completion }));
            const samples = g.forest.leaves().map((leaf, i) => {
              const sample = rawLeafSample(leaf);
              const base = Object.entries(sample.metadata);
              sample.metadata = objectOf([...(extras[i] ?? []), ...base], keyOrder && i % 2 === 0, hidden && i === 0);
              return sample;
            });
            const agent = agentEntries === null ? undefined : objectOf(agentEntries, keyOrder, false);
            return { samples, session: sessionMetadataOf(g.forest, agent) };
          };
          const mine = build();
          const theirs = build();
          // the values are fresh per build: compare by structure, then the descriptors' identities within one build
          const out = defaultPostprocess(mine.samples, mine.session, { logger: recordingLogger() });
          const expected = referencePostprocess(theirs.samples, theirs.session);
          expect(out.map((s) => [s.loss_mask, s.reward])).toEqual(expected.map((s) => [s.loss_mask, s.reward]));
          out.forEach((sample, i) => {
            expect(Reflect.ownKeys(sample.metadata)).toEqual(Reflect.ownKeys(expected[i].metadata));
            expect(shape(sample.metadata)).toEqual(shape(expected[i].metadata));
          });
        },
      ),
      { numRuns: 300, seed: 2901 },
    );
  });

  test("the same value objects end up in the merged metadata (no copies), and the input metadata is left as it was", () => {
    const g = new Grower();
    g.grow(null, { completion: 2 });
    const [sample] = g.forest.leaves().map(rawLeafSample);
    const before = sample.metadata;
    const list = [1, 2];
    const agent: JsonObject = { list, task: "t" };
    const ids = sample.metadata.accumulated_token_ids;
    defaultPostprocess([sample], sessionMetadataOf(g.forest, agent), { logger: recordingLogger() });
    expect(sample.metadata).not.toBe(before);
    expect(sample.metadata.list).toBe(list);
    expect(sample.metadata.accumulated_token_ids).toBe(ids);
    expect(Object.keys(before)).toEqual(["accumulated_token_ids", "leaf"]);
  });

  test("keys the prototype holds (toString, __proto__) become own data keys; the prototype stays Object.prototype", () => {
    const g = new Grower();
    g.grow(null);
    const [sample] = g.forest.leaves().map(rawLeafSample);
    const agent = objectOf(
      [
        ["toString", "mine"],
        ["__proto__", "also mine"],
      ],
      false,
      false,
    );
    const [out] = defaultPostprocess([sample], sessionMetadataOf(g.forest, agent), { logger: recordingLogger() });
    expect(Object.getOwnPropertyDescriptor(out.metadata, "toString")?.value).toBe("mine");
    expect(Object.getOwnPropertyDescriptor(out.metadata, "__proto__")?.value).toBe("also mine");
    expect(Object.getPrototypeOf(out.metadata)).toBe(Object.prototype);
  });
});
