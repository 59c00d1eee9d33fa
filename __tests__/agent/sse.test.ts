// SSE framing and the fold of chat.completion.chunk deltas back into one assistant message.
// Pure: fragments split across pushes and chunks, as a real multi-chunk stream delivers them.
import fc from "fast-check";
import { foldChatChunks, SseDataParser, sseDataPayloads } from "../../src/agent";
import { streamChunks } from "./fake-session-endpoint";
import { binaryString } from "../support/binary-unit";
import { expectEqual } from "../support/fast-expect";

describe("SseDataParser", () => {
  test("events split across pushes, CRLF and CR line ends, comments and multi-line data", () => {
    const parser = new SseDataParser();
    const text = 'data: {"a":1}\r\n\r\n: comment\n\nevent: x\ndata: line1\ndata: line2\n\ndata:no-space\r\rdata: [DONE]\n\n';
    const events: string[] = [];
    for (let i = 0; i < text.length; i += 3) events.push(...parser.push(text.slice(i, i + 3)));
    events.push(...parser.end());
    expect(events).toEqual(['{"a":1}', "line1\nline2", "no-space", "[DONE]"]);
  });

  test("a final event without its blank line is still delivered at end()", () => {
    const parser = new SseDataParser();
    expect(parser.push("data: last")).toEqual([]);
    expect(parser.end()).toEqual(["last"]);
  });
});

/** What the incremental parser delivers for a whole text: the reference of {@link sseDataPayloads}. */
function parsedWhole(text: string): string[] {
  const parser = new SseDataParser();
  return [...parser.push(text), ...parser.end()];
}

/** SSE-ish texts: field names, near misses of "data", colons, spaces, every line end, payloads and blank lines. */
const sseText = (lineEnds: string[]): fc.Arbitrary<string> =>
  fc
    .array(
      fc.oneof(
        fc.constantFrom("data", "data:", "data: ", "dat", "datas", "Data", "event", "id", ":", " ", "[DONE]", '{"a":1}', "é😀", "x"),
        fc.constantFrom(...lineEnds),
        binaryString({ maxLength: 4 }).filter((part) => !/[\r\n]/.test(part)),
      ),
      { maxLength: 24 },
    )
    .map((parts) => parts.join(""));

describe("sseDataPayloads", () => {
  test("equals the incremental parser over a whole text with LF line ends (its own one-pass path)", () => {
    fc.assert(
      fc.property(sseText(["\n", "\n\n"]), (text) => expectEqual(sseDataPayloads(text), parsedWhole(text))),
      { numRuns: 2000 },
    );
  });

  test("equals the incremental parser with CR and CRLF line ends too", () => {
    fc.assert(
      fc.property(sseText(["\n", "\r", "\r\n", "\n\n"]), (text) => expectEqual(sseDataPayloads(text), parsedWhole(text))),
      { numRuns: 1000 },
    );
  });

  test("the cases the one-pass path decides on its own", () => {
    const text =
      'data: {"a":1}\n\n: comment\n\nevent: x\ndata: line1\ndata:line2\ndata\n\ndatax: no\ndata  two spaces\ndata:  kept\n\ndata: [DONE]\n\ndata: tail';
    expect(sseDataPayloads(text)).toEqual(['{"a":1}', "line1\nline2\n", " kept", "[DONE]", "tail"]);
    expect(sseDataPayloads(text)).toEqual(parsedWhole(text));
    expect(sseDataPayloads("")).toEqual([]);
    expect(sseDataPayloads("data")).toEqual([""]);
  });
});

describe("foldChatChunks", () => {
  test("content concatenates and tool-call fragments merge by index, index dropped", () => {
    const chunks = streamChunks(
      {
        content: "Let me check both cities.",
        reasoning_content: "need two calls",
        tool_calls: [
          { id: "call_a", name: "get_weather", arguments: '{"location": "Beijing"}' },
          { id: "call_b", name: "get_weather", arguments: '{"location": "Shanghai"}' },
        ],
      },
      "tool_calls",
    );
    const folded = foldChatChunks(chunks);
    expect(folded.choices[0].finish_reason).toBe("tool_calls");
    expect(folded.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
    expect(folded.id).toBe("chatcmpl-fake");
    expect(folded.object).toBe("chat.completion");
    const message = folded.choices[0].message;
    expect(message).toEqual({
      role: "assistant",
      content: "Let me check both cities.",
      reasoning_content: "need two calls",
      tool_calls: [
        { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"location": "Beijing"}' } },
        { id: "call_b", type: "function", function: { name: "get_weather", arguments: '{"location": "Shanghai"}' } },
      ],
    });
    expect(Object.keys(message.tool_calls![0])).toEqual(["id", "type", "function"]);
  });

  test("interleaved fragments of two calls, out-of-order indexes", () => {
    const c = (toolCalls: unknown[]) => ({ object: "chat.completion.chunk", choices: [{ delta: { tool_calls: toolCalls } }] });
    const folded = foldChatChunks([
      c([{ index: 1, id: "second", function: { name: "get_weather", arguments: '{"loc' } }]),
      c([{ index: 0, id: "first", function: { name: "get_weather", arguments: "{}" } }]),
      c([{ index: 1, function: { arguments: 'ation": "X"}' }, id: null }]),
    ]);
    expect(folded.choices[0].message.tool_calls).toEqual([
      { id: "first", function: { name: "get_weather", arguments: "{}" } },
      { id: "second", function: { name: "get_weather", arguments: '{"location": "X"}' } },
    ]);
    expect(folded.choices[0].message.content).toBeNull();
    expect(folded.choices[0].finish_reason).toBeNull();
  });

  test("malformed streams are refused with the label", () => {
    expect(() => foldChatChunks([], "step 2 tool_result")).toThrow("step 2 tool_result: the SSE stream held no chunk before [DONE]");
    expect(() => foldChatChunks([{ object: "chat.completion", choices: [] }], "s")).toThrow(/SSE event 0 is not a chat.completion.chunk/);
    expect(() => foldChatChunks([{ object: "chat.completion.chunk", choices: [{}, {}] }], "s")).toThrow(/exactly one choice/);
    expect(() => foldChatChunks([{ object: "chat.completion.chunk", choices: [{ delta: { tool_calls: [{ id: "x" }] } }] }], "s")).toThrow(
      /tool-call fragment without an integer index/,
    );
  });
});
