// Unit tests of the qwen25 tool-call parser: what becomes a call, what stays content, and the argument bytes.
// Mirrors the rules of SGLang's parser (unknown tools dropped, malformed JSON skipped, text kept when nothing parses).
import { parseQwen25ToolCalls } from "../../src/backend/tool-call-parser";
import { WEATHER_TOOLS } from "../../src/agent/texts";

const TOOLS = [...WEATHER_TOOLS, { type: "function", function: { name: "get_time", description: "Time in a zone.", parameters: { type: "object" } } }];
const block = (json: string): string => `<tool_call>\n${json}\n</tool_call>`;

describe("parseQwen25ToolCalls", () => {
  test("one call: content is the trimmed text before it, arguments use Python separators", () => {
    const parsed = parseQwen25ToolCalls(`  Checking.  \n${block('{"name":"get_weather","arguments":{"location":"Beijing","days":2}}')}`, TOOLS);
    expect(parsed).toEqual({
      content: "Checking.",
      calls: [{ toolIndex: 0, name: "get_weather", arguments: '{"location": "Beijing", "days": 2}' }],
    });
  });

  test("several blocks and a list inside one block keep text order; the index is the tool position", () => {
    const text = [
      block('{"name": "get_time", "arguments": {"zone": "UTC"}}'),
      block('[{"name": "get_weather", "arguments": {"location": "A"}}, {"name": "get_time", "parameters": {"zone": "X"}}]'),
    ].join("\n");
    expect(parseQwen25ToolCalls(text, TOOLS).calls).toEqual([
      { toolIndex: 1, name: "get_time", arguments: '{"zone": "UTC"}' },
      { toolIndex: 0, name: "get_weather", arguments: '{"location": "A"}' },
      { toolIndex: 1, name: "get_time", arguments: '{"zone": "X"}' },
    ]);
  });

  test("empty `parameters` falls back to `arguments`; missing both gives {}", () => {
    const text = block('{"name": "get_time", "parameters": {}, "arguments": {"zone": "Y"}}') + "\n" + block('{"name": "get_time"}');
    expect(parseQwen25ToolCalls(text, TOOLS).calls.map((c) => c.arguments)).toEqual(['{"zone": "Y"}', "{}"]);
  });

  test("malformed JSON and unknown tools are skipped; with nothing left the whole text stays content", () => {
    const text = `Hmm.\n${block('{"name": "get_weather", "arguments": {"location": }')}\n${block('{"name": "launch", "arguments": {}}')}`;
    expect(parseQwen25ToolCalls(text, TOOLS)).toEqual({ content: text, calls: [] });
  });

  test("a malformed block next to a good one: the good call survives", () => {
    const text = `${block("{not json")}\n${block('{"name": "get_weather", "arguments": {"location": "B"}}')}`;
    expect(parseQwen25ToolCalls(text, TOOLS)).toEqual({
      content: "",
      calls: [{ toolIndex: 0, name: "get_weather", arguments: '{"location": "B"}' }],
    });
  });

  test("text without the opening tag is plain content", () => {
    expect(parseQwen25ToolCalls("<tool_call>{}</tool_call>", TOOLS)).toEqual({ content: "<tool_call>{}</tool_call>", calls: [] });
  });
});
