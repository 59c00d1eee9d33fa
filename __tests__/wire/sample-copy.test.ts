// deepCopySample builds its copy on a default Sample: the same Sample as the constructor makes from the copied fields
// (an undefined field keeps its default), and no array, object or tensor memory is shared with the original.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { deepCopySample } from "../../src/wire/sample-copy";
import { PrefixCacheInfo, Sample, SpecInfo, type JsonObject } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";
import { parsePyJson } from "../../src/wire/py-json";
import { valueStructure } from "./wire-test-helpers";
import { expectEqual, expectSame } from "../support/fast-expect";

/** Objects reachable from `value` (not PyFloat/PyBigInt, which are immutable and shared by design). */
function containers(value: unknown, into: Set<object> = new Set()): Set<object> {
  if (value === null || typeof value !== "object" || into.has(value)) return into;
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
  if (name === "PyFloat" || name === "PyBigInt") return into;
  into.add(value);
  if (value instanceof Tensor) into.add(value.data);
  for (const item of Object.values(value)) containers(item, into);
  return into;
}

const json = fc.constantFrom('{"a":1.0,"b":[1,-0.0,{"c":12345678901234567890}]}', '{"7":"x","a":{"__proto__":1}}', '{"ids":[1,2,3]}', "{}");
const sampleArbitrary = fc
  .record({
    prompt: fc.oneof(
      fc.string(),
      fc.string().map((content): JsonObject[] => [{ role: "user", content }]),
    ),
    tokens: fc.array(fc.integer(), { maxLength: 5 }),
    metadata: json.map((text) => parsePyJson(text) as Record<string, never>),
    reward: fc.oneof(
      fc.constant(null),
      fc.double(),
      json.map((text) => parsePyJson(text) as Record<string, never>),
    ),
    rollout_routed_experts: fc.oneof(fc.constant(null), fc.constant(new Tensor("I32", [1, 2], Int32Array.of(3, 4)))),
    loss_mask: fc.oneof(fc.constant(null), fc.array(fc.constantFrom(0, 1), { maxLength: 4 })),
    spec: fc.nat({ max: 9 }),
    cached: fc.nat({ max: 9 }),
    unset: fc.subarray([...Sample.FIELDS]),
  })
  .map(({ spec, cached, unset, ...init }) => {
    const sample = new Sample({
      ...init,
      spec_info: new SpecInfo({ spec_verify_ct: spec }),
      prefix_cache_info: new PrefixCacheInfo({ cached_tokens: cached }),
    });
    for (const field of unset) (sample as unknown as Record<string, unknown>)[field] = undefined;
    return sample;
  });

describe("deepCopySample", () => {
  test("the Sample the constructor builds from the copied fields, sharing no container with the original", () => {
    fc.assert(
      fc.property(sampleArbitrary, (sample) => {
        const copy = deepCopySample(sample);
        expect(copy).toBeInstanceOf(Sample);
        // the constructor's way: one init object of every field's copy (undefined ones keep the default)
        const viaInit = new Sample(Object.fromEntries(Sample.FIELDS.map((field) => [field, sample[field] === undefined ? undefined : copy[field]])));
        expectEqual(valueStructure(copy), valueStructure(viaInit));
        for (const field of Sample.FIELDS) {
          if (sample[field] === undefined) expectEqual(valueStructure(copy[field]), valueStructure(new Sample()[field]));
        }
        const original = containers(Object.values(sample));
        for (const item of containers(Object.values(copy))) {
          if (!Array.isArray(item) || item.length > 0 || Object.values(sample).includes(item)) expectSame(original.has(item), false);
        }
      }),
      { numRuns: 300, seed: 20261205 },
    );
  });

  test("an undefined field takes its default, as the constructor's init leaves it", () => {
    const sample = new Sample({ label: "l", metadata: { a: 1 } });
    (sample as unknown as Record<string, unknown>).label = undefined;
    (sample as unknown as Record<string, unknown>).metadata = undefined;
    const copy = deepCopySample(sample);
    expect(copy.label).toBeNull();
    expect(copy.metadata).toEqual({});
    expect(Object.keys(copy)).toEqual([...Sample.FIELDS]);
  });
});
