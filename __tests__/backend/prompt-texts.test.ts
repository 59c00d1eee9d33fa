// The memo of prompt decodes gives exactly the tokenizer's decode: for repeated, changed, colliding and mutated id
// sequences (a request's array may be changed by a process function after the memo copied it).
import fc from "fast-check";
import { decodePromptIds } from "../../src/backend/prompt-texts";
import { loadTokenizer } from "../../src/tokenizer/load";
import type { Tokenizer } from "../../src/tokenizer/types";

let tokenizer: Tokenizer;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
});

/** A call's value, or the message it throws with (an empty or out-of-vocabulary sequence throws, memo or not). */
const outcome = (call: () => string): string => {
  try {
    return `value ${call()}`;
  } catch (error) {
    return `error ${(error as Error).message}`;
  }
};

test("every answer is the tokenizer's decode (special tokens kept), whichever sequences came before", () => {
  const ids = fc.array(fc.oneof(fc.integer({ min: 0, max: 152_000 }), fc.constantFrom(151644, 151645, 198, -0, 0)), { maxLength: 10 });
  fc.assert(
    fc.property(fc.array(ids, { minLength: 1, maxLength: 30 }), (sequences) => {
      // each sequence twice: the second answer comes from the memo
      for (const sequence of [...sequences, ...sequences]) {
        expect(outcome(() => decodePromptIds(tokenizer, sequence))).toBe(outcome(() => tokenizer.decode(sequence, { skipSpecialTokens: false })));
      }
    }),
    { numRuns: 200, seed: 29 },
  );
});

test("a sequence whose hash equals a kept one's (-0 and 0), or a kept request array changed afterwards, is decoded afresh", () => {
  const calls: number[][] = [];
  // a decoder whose answer names the ids, so a memo hit for other ids would show
  const naming = { decode: (ids: readonly number[]) => (calls.push([...ids]), ids.join(",")) };
  const ids = [9707, 11, 1879];
  expect(decodePromptIds(naming, ids)).toBe("9707,11,1879");
  ids[1] = 12; // the request's own array: the memo kept a copy
  expect(decodePromptIds(naming, ids)).toBe("9707,12,1879");
  expect(decodePromptIds(naming, [9707, 12, 1879])).toBe("9707,12,1879");
  expect(calls).toHaveLength(2);
  // ids past 32 bits, and -0, which hashes like 0 and equals it under ===: each still gets its own decode
  expect(decodePromptIds(naming, [0])).toBe("0");
  expect(decodePromptIds(naming, [2 ** 32])).toBe("4294967296");
  expect(decodePromptIds(naming, [-0])).toBe("0");
  expect(calls.map((call) => call.map((id) => Object.is(id, -0)))).toEqual([[false, false, false], [false, false, false], [false], [false], [true]]);
});

test("a sequence past the length bound is decoded every time; 3 M ids of distinct sequences pass with every repeat still kept", () => {
  let calls = 0;
  const counting = { decode: (ids: readonly number[]) => (calls++, `${ids.length}:${ids[0]}`) };
  const long = Array.from({ length: (1 << 15) + 1 }, (_, i) => i % 1000);
  expect(decodePromptIds(counting, long)).toBe(`${long.length}:0`);
  expect(decodePromptIds(counting, long)).toBe(`${long.length}:0`);
  expect(calls).toBe(2);
  for (let i = 0; i < 100; i++) {
    const ids = Array.from({ length: 30_000 }, () => i);
    expect(decodePromptIds(counting, ids)).toBe(`30000:${i}`);
    expect(decodePromptIds(counting, ids)).toBe(`30000:${i}`);
  }
  expect(calls).toBe(2 + 100);
});
