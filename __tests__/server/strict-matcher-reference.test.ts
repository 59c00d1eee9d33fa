// The strict matcher compares tool calls without copying them; this pins it to the copying formulation it replaced
// (each call's `index` dropped by a rest copy, then Python equality), on generated and hand-picked message pairs.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { normalizeEmpty, strictMessageMatches, TEMPLATE_RELEVANT_KEYS } from "../../src/server/message-matchers";
import { jsonEqual } from "../../src/server/json-equal";
import type { ChatMessage } from "../../src/tokenizer/types";
import { PyBigInt, PyFloat } from "../../src/wire/py-json";
import { expectEqual, expectSame } from "../support/fast-expect";

/** The strict matcher as it was written before the copy-free comparison: the reference path. */
function referenceStrict(stored: ChatMessage, incoming: ChatMessage): boolean {
  const project = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map((call: unknown) => {
          if (call === null || typeof call !== "object" || Array.isArray(call)) return call;
          const { index: _index, ...rest } = call as Record<string, unknown>;
          return rest;
        })
      : value;
  for (const key of TEMPLATE_RELEVANT_KEYS) {
    let left = normalizeEmpty(stored[key]);
    let right = normalizeEmpty(incoming[key]);
    if (key === "tool_calls") {
      left = project(left);
      right = project(right);
    }
    if (!jsonEqual(left, right)) return false;
  }
  return true;
}

// Small alphabets, so that generated pairs are often equal and differ in one detail when they are not.
const scalar = fc.oneof(
  fc.constantFrom<unknown>("", "a", "b", 0, 1, 1.5, true, false, null, undefined),
  fc.constantFrom(1, 2).map((n) => new PyFloat(n)),
  fc.constant(new PyBigInt(2n ** 60n)),
);
const value = fc.letrec((tie) => ({
  leaf: scalar,
  node: fc.oneof(
    { depthSize: "small" },
    scalar,
    fc.array(tie("node"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom("x", "y", "index"), tie("node"), { maxKeys: 2 }),
  ),
})).node;
const toolCall = fc.oneof(
  fc.record(
    {
      index: fc.oneof(fc.nat(2), fc.constant(undefined)),
      id: fc.constantFrom("call_0", "call_1"),
      type: fc.constantFrom("function", undefined),
      function: fc.record({ name: fc.constantFrom("get_weather", "f"), arguments: fc.constantFrom('{"a": 1}', '{"a":1}', "", null) }),
      extra: value,
    },
    { requiredKeys: ["id", "function"] },
  ),
  value,
);
const toolCalls = fc.oneof(fc.constantFrom<unknown>(undefined, null, "", []), fc.array(toolCall, { maxLength: 3 }), value);
const message = fc.record(
  {
    role: fc.constantFrom("assistant", "user", "tool", ""),
    content: fc.oneof(fc.constantFrom<unknown>("hi", "", null, undefined, []), value),
    reasoning_content: fc.constantFrom<unknown>(undefined, null, "", "think"),
    tool_calls: toolCalls,
    name: fc.constantFrom(undefined, "n"),
  },
  { requiredKeys: ["role"] },
) as fc.Arbitrary<ChatMessage>;

/** A copy of `m` whose tool calls are rewritten the ways clients do: renumbered, reordered keys, `index` dropped. */
function respelled(m: ChatMessage, seed: number): ChatMessage {
  if (!Array.isArray(m.tool_calls)) return { ...m };
  const calls = (m.tool_calls as unknown[]).map((call, i) => {
    if (call === null || typeof call !== "object" || Array.isArray(call)) return call;
    const entries = Object.entries(call as Record<string, unknown>).filter(([k]) => seed % 3 !== 0 || k !== "index");
    if (seed % 2 === 0) entries.reverse();
    const copy = Object.fromEntries(entries);
    if (seed % 3 === 1) copy.index = i + seed;
    return copy;
  });
  return { ...m, tool_calls: calls as ChatMessage["tool_calls"] };
}

describe("strictMessageMatches equals the copying reference", () => {
  test("on generated pairs (independent, and one a re-spelling of the other)", () => {
    fc.assert(
      fc.property(message, message, fc.nat(5), (a, b, seed) => {
        expectSame(strictMessageMatches(a, b), referenceStrict(a, b));
        const c = respelled(a, seed);
        expectSame(strictMessageMatches(a, c), referenceStrict(a, c));
        expectSame(strictMessageMatches(c, a), referenceStrict(c, a));
      }),
      { numRuns: 3000 },
    );
  });

  test("on the corners of the rule: index, undefined fields, holes, non-enumerable keys, number markers", () => {
    const call = { id: "c", function: { name: "f", arguments: "{}" } };
    const hidden = { ...call };
    Object.defineProperty(hidden, "secret", { value: 1, enumerable: false });
    const hiddenOther = { ...call, secret: 1 };
    // As many enumerable keys as hiddenOther, one of them another name: only an enumerability check tells them apart.
    const hiddenSwap: Record<string, unknown> = { ...call, other: 1 };
    Object.defineProperty(hiddenSwap, "secret", { value: 1, enumerable: false });
    // Arrays of two with a hole (a slot never assigned) on either side, and their filled look-alikes.
    const holed = (at: number): unknown[] => {
      const items = new Array<unknown>(2);
      items[1 - at] = call;
      return items;
    };
    const holes: unknown[][] = [holed(0), [undefined, call], holed(1), [call, undefined], [null, call]];
    const pairs: Array<[unknown, unknown]> = [
      [[{ ...call, index: 0 }], [{ ...call, index: 3 }]],
      [[{ ...call, index: 0 }], [call]],
      [[{ ...call, extra: undefined }], [call]],
      [[{ ...call, extra: 1 }], [call]],
      [[hiddenOther], [hidden]],
      [[hidden], [hiddenOther]],
      [[hidden], [call]],
      [[hiddenOther], [hiddenSwap]],
      [[new PyFloat(1)], [1]],
      [[new PyFloat(1)], [new PyFloat(1)]],
      [[new PyFloat(1)], [{ value: 1 }]],
      [[1], [true]],
      [[call], [[call]]],
      [call, [call]],
      [[call], { 0: call }],
      ...holes.flatMap((left) => holes.map((right): [unknown, unknown] => [left, right])),
    ];
    let matches = 0;
    for (const [left, right] of pairs) {
      const a = { role: "assistant", tool_calls: left } as ChatMessage;
      const b = { role: "assistant", tool_calls: right } as ChatMessage;
      expectEqual([left, right, strictMessageMatches(a, b)], [left, right, referenceStrict(a, b)]);
      if (strictMessageMatches(a, b)) matches += 1;
    }
    // Both outcomes occur, so the comparison above cannot pass by always answering one way.
    expect(matches).toBeGreaterThan(3);
    expect(matches).toBeLessThan(pairs.length - 3);
  });
});
