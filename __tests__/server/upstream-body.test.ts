// The upstream body's bytes built from a base body's spelled prompt ids must be the bytes of the whole body spelled
// anew (`Buffer.from(dumpsPy(body, PY_DEFAULT_JSON))`, what the shell sent before): for any body, any ids, any base.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { SentBody, spellUpstreamBody } from "../../src/server/upstream-body";
import { dumpsPy, parsePyJson, PY_DEFAULT_JSON, PyFloat } from "../../src/wire/py-json";
import { binaryString } from "../support/binary-unit";
import { expectEqual, expectSame } from "../support/fast-expect";

/** The oracle: the text the shell spelled and undici encoded before this module. */
function oracle(body: Record<string, unknown>): Buffer {
  return Buffer.from(dumpsPy(body, PY_DEFAULT_JSON), "utf8");
}

/** Strings a chat body carries, adversarial ones included: escapes, controls (the mark's own character), non-ASCII, lone surrogates. */
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  binaryString({ maxLength: 8 }),
  fc.constantFrom("\u0001", '"\\\n', "caf\u00e9 \u{1f600}", "\ud800", "\u007f", "[1, 2]", "\u0000jest-session-parity:spelled\u0000"),
);
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(-0), tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(text, fc.constantFrom("0", "10", "__proto__")), tie("value"), { maxKeys: 4 }),
})).value;

const tokenId = fc.oneof(fc.integer({ min: 0, max: 151_935 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }));
const ids = fc.array(tokenId, { maxLength: 60 });

/** A chat body with `input_ids` at a random place among the other keys (a client may send its own `input_ids` first). */
const bodyWith = (inputIds: fc.Arbitrary<unknown[]>): fc.Arbitrary<Record<string, unknown>> =>
  fc
    .record({
      extra: fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 5 }),
      messages: fc.array(fc.record({ role: fc.constantFrom("user", "assistant", "tool"), content: text }), { maxLength: 3 }),
      ids: inputIds,
      place: fc.nat(),
    })
    .map(({ extra, messages, ids: list, place }) => {
      const entries: [string, unknown][] = [["messages", messages], ...Object.entries(extra).filter(([key]) => key !== "input_ids")];
      entries.splice(place % (entries.length + 1), 0, ["input_ids", list]);
      const body: Record<string, unknown> = {};
      for (const [key, value] of entries) Object.defineProperty(body, key, { value, writable: true, enumerable: true, configurable: true });
      return body;
    });

/** The body a turn before sent: spelled by the module itself, with no base. */
function sent(body: Record<string, unknown>): SentBody {
  return spellUpstreamBody(body, undefined).sent;
}

describe("spellUpstreamBody", () => {
  test("without a base: the bytes of the whole body spelled (any keys, values, id position), and its text", () => {
    fc.assert(
      fc.property(bodyWith(ids), (body) => {
        const out = spellUpstreamBody(body, undefined);
        expectEqual(out.bytes, oracle(body));
        expectSame(out.sent.text, dumpsPy(body, PY_DEFAULT_JSON));
      }),
      { numRuns: 400 },
    );
  });

  test("a base whose ids are a prefix: its bytes copied, the rest spelled, the bytes of the whole body", () => {
    fc.assert(
      fc.property(bodyWith(ids), ids, bodyWith(fc.constant([])), (first, more, next) => {
        const base = sent(first);
        next.input_ids = [...(first.input_ids as number[]), ...more];
        const out = spellUpstreamBody(next, base);
        expectEqual(out.bytes, oracle(next));
        // the record's text is the same, and the list's place in it known, so the turn after can build on this one
        expectSame(out.sent.text, dumpsPy(next, PY_DEFAULT_JSON));
        expectSame(out.sent.text.slice(out.sent.idsStart, out.sent.idsEnd + 1), dumpsPy(next.input_ids, PY_DEFAULT_JSON));
      }),
      { numRuns: 400 },
    );
  });

  test("a base whose ids are no prefix (a rollback, another branch, a trimmed tail, longer ids) is not used", () => {
    const parted = fc.record({ shared: fc.array(tokenId, { minLength: 1, maxLength: 40 }), a: ids, b: ids, cut: fc.nat() });
    fc.assert(
      fc.property(parted, bodyWith(fc.constant([])), bodyWith(fc.constant([])), ({ shared, a, b, cut }, first, next) => {
        first.input_ids = [...shared, ...a];
        next.input_ids = [...shared.slice(0, cut % (shared.length + 1)), ...b];
        expectEqual(spellUpstreamBody(next, sent(first)).bytes, oracle(next));
      }),
      { numRuns: 400 },
    );
  });

  test("the prefix check is what decides: a base with other bytes for equal ids shows through, one id off does not", () => {
    // Proves the copy is taken (and so that the property tests above exercise it): the base claims other digits
    const body = { messages: [], input_ids: [1, 2, 3, 4] };
    const fake = new SentBody('{"input_ids": [7, 7, 7]}', [1, 2, 3], 14, 22);
    expect(spellUpstreamBody(body, fake).bytes.toString()).toBe('{"messages": [], "input_ids": [7, 7, 7, 4]}');
    const offByOne = new SentBody('{"input_ids": [7, 7, 7]}', [1, 2, 5], 14, 22);
    expect(spellUpstreamBody(body, offByOne).bytes).toEqual(oracle(body));
    // a base spelled whole knows no list place, an empty list gives nothing to copy
    expect(spellUpstreamBody(body, new SentBody("x", [1, 2, 3], -1, -1)).bytes).toEqual(oracle(body));
    expect(spellUpstreamBody(body, new SentBody("[]", [], 0, 1)).bytes).toEqual(oracle(body));
  });

  test("ids that are not all int32s (-0, floats, big ints, PyFloat, strings, holes) are spelled with the body, as before", () => {
    const odd = fc.array(
      fc.oneof(
        tokenId,
        fc.constantFrom(-0, 0.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1e21, "7", null, undefined),
        fc.double().map((x) => new PyFloat(x)),
      ),
      { maxLength: 20 },
    );
    fc.assert(
      fc.property(bodyWith(fc.array(tokenId, { maxLength: 10 })), odd, bodyWith(fc.constant([])), (first, tail, next) => {
        next.input_ids = [...(first.input_ids as number[]), ...tail];
        expectEqual(spellUpstreamBody(next, sent(first)).bytes, oracle(next));
      }),
      { numRuns: 300 },
    );
    const zero = { input_ids: [5, -0] };
    expect(spellUpstreamBody(zero, sent({ input_ids: [5, 0] })).bytes.toString()).toBe('{"input_ids": [5, -0.0]}');
    const sparse: unknown[] = [1];
    sparse[2] = 3;
    expect(spellUpstreamBody({ input_ids: sparse }, undefined).bytes).toEqual(oracle({ input_ids: sparse }));
  });

  test("a body with a remembered key order (integer-like keys, as parsed) keeps it", () => {
    const body = parsePyJson('{"10": 1, "model": "m", "0": [2], "input_ids": [1, 2]}') as Record<string, unknown>;
    const next = parsePyJson('{"10": 1, "model": "m", "0": [2], "input_ids": null}') as Record<string, unknown>;
    next.input_ids = [1, 2, 3];
    expect(spellUpstreamBody(next, sent(body)).bytes.toString()).toBe('{"10": 1, "model": "m", "0": [2], "input_ids": [1, 2, 3]}');
  });

  test("leading messages a base holds alike are copied, the rest spelled: the bytes of the whole body", () => {
    // the next turn re-sends the history (parsed anew: other objects), maybe changed anywhere, then more messages
    const message = fc.record({ role: fc.constantFrom("user", "assistant", "tool"), content: text, extra: json }, { requiredKeys: ["role", "content"] });
    const change = fc.oneof(
      fc.constant((m: Record<string, unknown>) => m),
      fc.constant((m: Record<string, unknown>) => ({ ...m, content: `${String(m.content)}!` })),
      fc.constant((m: Record<string, unknown>) => ({ content: m.content, role: m.role })), // keys in another order
      fc.constant((m: Record<string, unknown>) => ({ ...m, extra: m.extra === 0 ? -0 : m.extra === 1 ? new PyFloat(1) : m.extra })),
    );
    fc.assert(
      fc.property(
        fc.array(message, { minLength: 1, maxLength: 6 }),
        fc.array(change, { maxLength: 6 }),
        fc.array(message, { maxLength: 3 }),
        ids,
        (history, changes, more, newIds) => {
          const first = { model: "m", messages: history, input_ids: [1, 2, 3] };
          const reread = parsePyJson(dumpsPy(history, PY_DEFAULT_JSON)) as Record<string, unknown>[];
          const resent = reread.map((m, i) => (i < changes.length ? changes[i](m) : m));
          const next = { model: "m", messages: [...resent, ...more], input_ids: [1, 2, 3, ...newIds] };
          const out = spellUpstreamBody(next, sent(first));
          expectEqual(out.bytes, oracle(next));
          expectSame(out.sent.text, dumpsPy(next, PY_DEFAULT_JSON));
          // each message's place is known, so the turn after can copy them in turn
          const ends = out.sent.messageEnds;
          expect(ends).toHaveLength(next.messages.length);
          next.messages.forEach((m, i) =>
            expectSame(out.sent.text.slice(i === 0 ? out.sent.messagesStart + 1 : ends[i - 1] + 2, ends[i]), dumpsPy(m, PY_DEFAULT_JSON)),
          );
        },
      ),
      { numRuns: 400 },
    );
  });

  test("the likeness check is what decides: alike messages show the base's text through, a changed one is spelled", () => {
    // Proves the copy is taken: the base claims another text for an alike message
    const base = new SentBody('{"messages": [{"role": "X"}], "input_ids": [1]}', [1], 43, 45, [{ role: "user" }], 13, [27]);
    const next = { messages: [{ role: "user" }, { role: "tool" }], input_ids: [1] };
    expect(spellUpstreamBody(next, base).bytes.toString()).toBe('{"messages": [{"role": "X"}, {"role": "tool"}], "input_ids": [1]}');
    const changed = { messages: [{ role: "users" }], input_ids: [1] };
    expect(spellUpstreamBody(changed, base).bytes).toEqual(oracle(changed));
  });

  test("tools a base holds alike are copied, other tools spelled: the bytes of the whole body, wherever the keys are", () => {
    const tool = fc.record({ type: fc.constant("function"), function: fc.record({ name: text, parameters: json }) });
    fc.assert(
      fc.property(fc.array(tool, { minLength: 1, maxLength: 3 }), fc.boolean(), fc.boolean(), ids, (tools, same, toolsFirst, newIds) => {
        const first = { messages: [{ role: "user", content: "hi" }], tools, input_ids: [1, 2] };
        const again = parsePyJson(dumpsPy(tools, PY_DEFAULT_JSON)) as Record<string, unknown>[];
        const nextTools = same ? again : again.map((t) => Object.fromEntries(Object.entries(t).reverse()));
        const rest = { messages: [{ role: "user", content: "hi" }], input_ids: [1, 2, ...newIds] };
        const next = toolsFirst ? { tools: nextTools, ...rest } : { ...rest, tools: nextTools };
        const out = spellUpstreamBody(next, sent(first));
        expectEqual(out.bytes, oracle(next));
        expectSame(out.sent.text.slice(out.sent.toolsStart, out.sent.toolsEnd), dumpsPy(nextTools, PY_DEFAULT_JSON));
      }),
      { numRuns: 300 },
    );
    // the copy is taken: a base claiming another text for alike tools shows through
    const base = new SentBody('{"tools": [{"X": 1}], "input_ids": [1]}', [1], 35, 37, [], -1, [], [{ a: 1 }], 10, 20);
    expect(spellUpstreamBody({ tools: [{ a: 1 }], input_ids: [1] }, base).bytes.toString()).toBe('{"tools": [{"X": 1}], "input_ids": [1]}');
    expect(spellUpstreamBody({ tools: [{ a: 2 }], input_ids: [1] }, base).bytes.toString()).toBe('{"tools": [{"a": 2}], "input_ids": [1]}');
  });

  test("the body keeps its own ids array, also when the writer refuses a value (the same error as before)", () => {
    const list = [1, 2, 3];
    const body: Record<string, unknown> = { input_ids: list, bad: () => 1 };
    expect(() => dumpsPy(body, PY_DEFAULT_JSON)).toThrow("Object of type function is not JSON serializable");
    expect(() => spellUpstreamBody(body, undefined)).toThrow("Object of type function is not JSON serializable");
    expect(body.input_ids).toBe(list);
    const history = [{ role: "user", content: "hi" }];
    const refused: Record<string, unknown> = { messages: history, input_ids: list, bad: () => 1 };
    expect(() => spellUpstreamBody(refused, undefined)).toThrow("Object of type function is not JSON serializable");
    expect([refused.messages, refused.input_ids]).toEqual([history, list]);
    expect(refused.messages).toBe(history);
    const toolsOf: Record<string, unknown> = { tools: [{ type: "function" }], input_ids: list, bad: () => 1 };
    const toolList = toolsOf.tools;
    expect(() => spellUpstreamBody(toolsOf, undefined)).toThrow("Object of type function is not JSON serializable");
    expect(toolsOf.tools).toBe(toolList);
    const ok = { model: "m", input_ids: list };
    const out = spellUpstreamBody(ok, undefined);
    expect(ok.input_ids).toBe(list);
    expect(out.sent.ids).toBe(list);
    expect(out.sent.text).toBe('{"model": "m", "input_ids": [1, 2, 3]}');
  });
});
