// Reply building in isolation: completion ids are encoded once per distinct text yet every reply owns its ids.
// A counting wrapper around the real Qwen3 tokenizer shows the memo; repeated replies must stay identical.
import { buildChatCompletion, buildGenerateReply, type ReplyContext } from "../../src/backend/replies";
import { loadTokenizer } from "../../src/tokenizer";
import type { Tokenizer } from "../../src/tokenizer/types";

async function countingContext(): Promise<{ context: ReplyContext; encoded: string[]; real: Tokenizer }> {
  const real = await loadTokenizer();
  const encoded: string[] = [];
  const tokenizer: Tokenizer = Object.create(real, {
    encode: {
      value: (text: string) => {
        encoded.push(text);
        return real.encode(text);
      },
    },
  });
  const context: ReplyContext = {
    tokenizer,
    stopTokenId: real.tokenToId("<|im_end|>"),
    emitStopToken: true,
    model: "m",
    now: () => 1,
    newId: () => "0000000a",
  };
  return { context, encoded, real };
}

function outputIds(reply: Record<string, unknown>): number[] {
  const choice = (reply.choices as Record<string, unknown>[])[0];
  return ((choice.meta_info as Record<string, unknown>).output_token_logprobs as [number, number][]).map((pair) => pair[1]);
}

test("a repeated completion text is encoded once; each reply gets its own ids with one stop token", async () => {
  const { context, encoded, real } = await countingContext();
  const prompt = { text: "p", ids: [1, 2] };
  const text = "Beijing is 22 degrees Celsius and sunny. (memo test)";
  const imEnd = real.tokenToId("<|im_end|>") as number;
  const expected = [...real.encode(text), imEnd];

  const first = buildChatCompletion({}, prompt, { text }, context);
  const second = buildChatCompletion({}, prompt, { text }, context);
  const generated = buildGenerateReply(prompt, { text, finish_reason: "length" }, context);
  expect(encoded.filter((t) => t === text)).toHaveLength(1);
  expect(outputIds(first)).toEqual(expected);
  expect(outputIds(second)).toEqual(expected); // the first reply's stop token did not leak into the memo
  expect((generated.meta_info as Record<string, unknown>).output_token_logprobs).toEqual(real.encode(text).map((id, i) => [-i / 128, id]));

  outputIds(first).push(7); // the extraction copies; mutate the reply's own array instead
  ((first.choices as Record<string, unknown>[])[0].meta_info as { output_token_logprobs: unknown[] }).output_token_logprobs.length = 0;
  expect(outputIds(buildChatCompletion({}, prompt, { text }, context))).toEqual(expected);
  const other = "Shanghai is 15 degrees Celsius and cloudy. (memo test)";
  expect(outputIds(buildChatCompletion({}, prompt, { text: other }, context))).toEqual([...real.encode(other), imEnd]);
  expect(encoded.filter((t) => t === other)).toHaveLength(1);
});
