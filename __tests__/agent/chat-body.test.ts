// The chat body writer against the spelling the agent used before it: JSON.stringify over the whole request object,
// for any conversation edited at its end (and elsewhere), any sampling, both modes, and the rule that picks the split.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { ChatBodyWriter } from "../../src/agent/chat-body";
import { WEATHER_TOOLS } from "../../src/agent";
import type { ChatMessage } from "../../src/tokenizer/types";
import { binaryString } from "../support/binary-unit";
import { expectEqual, expectSame } from "../support/fast-expect";

/** The agent's request spelling before the writer: what the writer's bytes must equal. */
function referenceBytes(messages: readonly unknown[], tools: unknown, sampling: Record<string, unknown>, stream: boolean): Buffer {
  const body = { messages, tools, ...sampling };
  return Buffer.from(JSON.stringify(stream ? { ...body, stream: true } : body));
}

/** Strings with what JSON spells specially: quotes, backslashes, controls, non-ASCII, astral and lone surrogates. */
const wireString = fc.oneof(
  binaryString({ maxLength: 12 }),
  fc.constantFrom("", '"', "\\", "\n", "\u0000", "\u2028", "é€", "😀", "\ud800", "\udc00x", "</final_answer>"),
);
const wireValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    wireString,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.oneof(wireString, fc.constantFrom("0", "12", "__proto__", "toJSON")), tie("value"), { maxKeys: 3 }),
  ),
})).value;
const message: fc.Arbitrary<ChatMessage> = fc
  .record({ role: fc.constantFrom("system", "user", "assistant", "tool"), content: fc.oneof(wireString, fc.constant(null)) })
  .chain((base) => fc.dictionary(wireString, wireValue, { maxKeys: 3 }).map((extra) => ({ ...extra, ...base })));
/** Sampling keys include array indexes (which sort ahead of "messages") and the agent's own key names. */
const samplingKey = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("temperature", "seed", "max_tokens", "stop", "top_p", "é") },
  { weight: 1, arbitrary: fc.constantFrom("0", "7", "4294967294", "4294967295", "01", "-1", "messages", "tools", "stream") },
);
const sampling = fc.dictionary(samplingKey, wireValue, { maxKeys: 4 });

type Edit = { kind: "push"; message: ChatMessage } | { kind: "pop" } | { kind: "replace"; at: number; message: ChatMessage } | { kind: "same" };
const edit: fc.Arbitrary<Edit> = fc.oneof(
  { weight: 4, arbitrary: message.map((m) => ({ kind: "push" as const, message: m })) },
  { weight: 2, arbitrary: fc.constant({ kind: "pop" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("replace" as const), at: fc.nat(), message }) },
  { weight: 1, arbitrary: fc.constant({ kind: "same" as const }) },
);

describe("ChatBodyWriter", () => {
  test("every call's bytes equal the whole object stringified, over conversations edited between calls", () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 3 }), fc.array(edit, { maxLength: 8 }), sampling, fc.boolean(), (start, edits, params, stream) => {
        const writer = new ChatBodyWriter(WEATHER_TOOLS, params, stream);
        // the agent's own way: one array, changed in place between calls
        const messages = [...start];
        expectEqual(writer.write(messages), referenceBytes(messages, WEATHER_TOOLS, params, stream));
        for (const step of edits) {
          if (step.kind === "push") messages.push(step.message);
          if (step.kind === "pop") messages.pop();
          if (step.kind === "replace" && messages.length > 0) messages[step.at % messages.length] = step.message;
          expectEqual(writer.write(messages), referenceBytes(messages, WEATHER_TOOLS, params, stream));
        }
      }),
      { numRuns: 150 },
    );
  });

  test("a new array holding the same objects, and a fresh copy of each object, both spell the same bytes", () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 5 }), fc.boolean(), (messages, stream) => {
        const writer = new ChatBodyWriter(WEATHER_TOOLS, {}, stream);
        const expected = referenceBytes(messages, WEATHER_TOOLS, {}, stream);
        expectEqual(writer.write(messages), expected);
        expectEqual(writer.write([...messages]), expected);
        expectEqual(writer.write(messages.map((m) => JSON.parse(JSON.stringify(m)) as ChatMessage)), expected);
      }),
    );
  });

  test("conversations far past the writer's first buffer (multi-byte text) grow it and keep every byte", () => {
    const big = fc.tuple(fc.constantFrom("a", "é", "€", "😀", '"', "\n"), fc.integer({ min: 300, max: 2000 })).map(([unit, count]) => unit.repeat(count));
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), big), { minLength: 1, maxLength: 12 }), fc.boolean(), (steps, stream) => {
        const writer = new ChatBodyWriter(WEATHER_TOOLS, { max_tokens: 8 }, stream);
        const messages: ChatMessage[] = [];
        for (const [pop, content] of steps) {
          if (pop) messages.pop();
          messages.push({ role: "user", content });
          // (Buffer#equals: a deep toEqual over tens of kilobytes is slow)
          expectSame(writer.write(messages).equals(referenceBytes(messages, WEATHER_TOOLS, { max_tokens: 8 }, stream)), true);
        }
      }),
      { numRuns: 40 },
    );
  });

  /** A message whose content getter counts how often it is serialized. */
  function countedMessage(): { message: ChatMessage; reads: () => number } {
    let reads = 0;
    const message = { role: "user" } as ChatMessage;
    Object.defineProperty(message, "content", {
      enumerable: true,
      get: () => {
        reads += 1;
        return "counted";
      },
    });
    return { message, reads: () => reads };
  }

  test("a message already sent is not serialized again while it stays in the kept prefix", () => {
    const writer = new ChatBodyWriter(WEATHER_TOOLS, { temperature: 0 }, true);
    const counted = countedMessage();
    const messages: ChatMessage[] = [counted.message];
    for (let call = 0; call < 4; call++) {
      expect(writer.write(messages)).toEqual(referenceBytes(messages, WEATHER_TOOLS, { temperature: 0 }, true));
      messages.push({ role: "assistant", content: `turn ${call}` });
    }
    // 4 writes, one serialization (each reference spelling above read it once more)
    expect(counted.reads()).toBe(1 + 4);
  });

  test("the split is refused when the whole object does not start with the messages: every call serializes it all", () => {
    // "7" is an array index: JSON.stringify puts it ahead of "messages", so a cached prefix would spell other bytes
    for (const params of [{ "7": 1, temperature: 0 }, { messages: [] }]) {
      const writer = new ChatBodyWriter(WEATHER_TOOLS, params, true);
      const counted = countedMessage();
      const messages = [counted.message];
      const expected = referenceBytes(messages, WEATHER_TOOLS, params, true);
      for (let call = 0; call < 3; call++) expect(writer.write(messages)).toEqual(expected);
      // 3 writes serialize it 3 times, the reference spelling once more; a sampling "messages" replaces the conversation
      expect(counted.reads()).toBe("messages" in params ? 0 : 3 + 1);
    }
    // what the rule guards against: the index key really comes first
    expect(JSON.stringify({ messages: [], tools: [], ...{ "7": 1 } }).startsWith('{"7":1,')).toBe(true);
  });

  test("sampling is read once, when the writer is made", () => {
    const params: Record<string, unknown> = { temperature: 0 };
    const writer = new ChatBodyWriter(WEATHER_TOOLS, params, false);
    params.temperature = 1;
    expect(writer.write([]).toString()).toBe(JSON.stringify({ messages: [], tools: WEATHER_TOOLS, temperature: 0 }));
  });
});
