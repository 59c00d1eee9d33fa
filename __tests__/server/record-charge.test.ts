// The chat turn's budget charge computed from the body sized at reservation equals the full walk of the record
// (retainedBytes), and any change to the body besides the added prompt ids falls back to that walk.
import fc from "fast-check";
import { extractCompletion } from "../../src/server/chat-reply";
import { recordBytes, sizeUpstreamBody } from "../../src/server/record-charge";
import { retainedBytes } from "../../src/server/retained-size";
import type { CompletedTurn, SessionRecord } from "../../src/server/types";
import type { ChatMessage } from "../../src/tokenizer/types";

const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, fc.string(), fc.integer(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null), tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 5 }),
  object: fc.dictionary(fc.string({ maxLength: 6 }), tie("value"), { maxKeys: 5 }),
})).value;

const bodyArb = fc.record({
  messages: fc.array(fc.record({ role: fc.constantFrom("system", "user", "assistant", "tool"), content: fc.string({ unit: "grapheme", maxLength: 40 }) }), {
    maxLength: 8,
  }),
  tools: fc.option(json, { nil: undefined }),
  temperature: fc.double({ min: 0, max: 2, noNaN: true }),
  extra: json,
});

/** `own`: the assistant message is the reply's own choices[0].message (as extractCompletion gives it), else a copy. */
function turnFor(body: Record<string, unknown>, ids: number[], response: Record<string, unknown>, own = false): CompletedTurn {
  const message = (response.choices as Array<{ message: ChatMessage }>)[0].message;
  const record: SessionRecord = {
    timestamp: 1_796_000_000.123,
    request_timestamp: 1_796_000_000.1,
    method: "POST",
    path: "/v1/chat/completions",
    request: body,
    response,
    status_code: 200,
  };
  return { promptIds: ids, completionIds: [9707, 151645], assistantMessage: own ? message : { ...message }, finishReason: "stop", responseId: "r", record };
}

const reply = (content: string): Record<string, unknown> => ({
  id: "chatcmpl-1",
  choices: [{ index: 0, message: { role: "assistant", content }, logprobs: { content: [{ token: "Hi", logprob: -0.5, bytes: [72, 105] }] } }],
});

describe("recordBytes", () => {
  test("equals the full walk of the record when positioning only added input_ids (own reply message or a copy)", () => {
    fc.assert(
      fc.property(
        bodyArb,
        fc.array(fc.integer({ min: 0, max: 151_935 }), { maxLength: 600 }),
        fc.string(),
        json,
        fc.boolean(),
        (body, ids, content, meta, own) => {
          const upstream: Record<string, unknown> = { ...body };
          const sized = sizeUpstreamBody(upstream);
          upstream.input_ids = ids.slice();
          // A reply as extractCompletion holds it: parsed from text, so a tree.
          const parsed = JSON.parse(JSON.stringify({ ...reply(content), meta_info: meta })) as Record<string, unknown>;
          const turn = turnFor(upstream, ids, parsed, own);
          expect(recordBytes(turn, sized)).toBe(retainedBytes([turn.record, turn.assistantMessage]));
        },
      ),
      { numRuns: 300 },
    );
  });

  test("walks the body again when anything else changed: an added offset, ids already there, another body", () => {
    const base = { messages: [{ role: "user", content: "weather in Paris?" }], return_routed_experts: true };
    const withOffset: Record<string, unknown> = { ...base };
    const sizedOffset = sizeUpstreamBody(withOffset);
    withOffset.input_ids = [1, 2, 3];
    withOffset.routed_experts_start_len = 2;
    const offsetTurn = turnFor(withOffset, [1, 2, 3], reply("ok"));
    expect(recordBytes(offsetTurn, sizedOffset)).toBe(retainedBytes([offsetTurn.record, offsetTurn.assistantMessage]));

    // A body that grew after it was sized (a longer message) is charged by its size now, not the reserved one.
    const grown: Record<string, unknown> = { messages: [{ role: "user", content: "x" }] };
    const sizedGrown = sizeUpstreamBody(grown);
    grown.input_ids = [1];
    grown.extra = "y".repeat(1000);
    const grownTurn = turnFor(grown, [1], reply("ok"));
    expect(recordBytes(grownTurn, sizedGrown)).toBe(retainedBytes([grownTurn.record, grownTurn.assistantMessage]));
    expect(recordBytes(grownTurn, sizedGrown)).toBeGreaterThan(1000);

    const hadIds: Record<string, unknown> = { messages: [], input_ids: [7] };
    const sizedHadIds = sizeUpstreamBody(hadIds);
    hadIds.input_ids = new Array(500).fill(7);
    const hadIdsTurn = turnFor(hadIds, [7], reply("ok"));
    expect(recordBytes(hadIdsTurn, sizedHadIds)).toBe(retainedBytes([hadIdsTurn.record, hadIdsTurn.assistantMessage]));

    const other = sizeUpstreamBody({ messages: [] });
    const otherTurn = turnFor({ messages: [{ role: "user", content: "z".repeat(300) }], input_ids: [1] }, [1], reply("ok"));
    expect(recordBytes(otherTurn, other)).toBe(retainedBytes([otherTurn.record, otherTurn.assistantMessage]));
    expect(recordBytes(otherTurn, undefined)).toBe(retainedBytes([otherTurn.record, otherTurn.assistantMessage]));
  });

  test("a reply extractCompletion tallied while parsing is charged as the walk would charge it", () => {
    const reply = (logprob: string, content: string): string =>
      `{"id":"chatcmpl-1","object":"chat.completion","created":1796151225,"model":"mock-model","choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(content)}},` +
      `"logprobs":{"content":[{"token":"Hi","token_id":9707,"logprob":${logprob},"bytes":[72,105],"top_logprobs":[]},{"token":"<|im_end|>","token_id":151645,"logprob":-0.5,"bytes":[60],"top_logprobs":[]}]},` +
      `"finish_reason":"stop","meta_info":{"output_token_logprobs":[[${logprob},9707],[-0.5,151645]],"completion_tokens":2,"prompt_tokens":5}}]}`;
    // tallied (compact ASCII), and not (non-ASCII content, an integral float): each charged as the full walk
    for (const text of [reply("-0.0", "Hi there"), reply("-0.0078125", "Grüße, 世界"), reply("-1.0", "Hi")]) {
      const completion = extractCompletion(Buffer.from(text, "utf8"));
      const body: Record<string, unknown> = { messages: [{ role: "user", content: "hello" }], logprobs: true };
      const sized = sizeUpstreamBody(body);
      body.input_ids = [1, 2, 3, 4, 5];
      const record: SessionRecord = {
        timestamp: 1.5,
        request_timestamp: 1.25,
        method: "POST",
        path: "/v1/chat/completions",
        request: body,
        response: completion.response,
        status_code: 200,
      };
      const turn: CompletedTurn = {
        promptIds: [1, 2, 3, 4, 5],
        completionIds: completion.completionIds,
        assistantMessage: completion.assistantMessage,
        finishReason: "stop",
        responseId: "chatcmpl-1",
        record,
      };
      expect(recordBytes(turn, sized, completion.responseBytes)).toBe(retainedBytes([turn.record, turn.assistantMessage]));
    }
  });
});
