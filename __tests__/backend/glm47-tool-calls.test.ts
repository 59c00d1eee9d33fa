// Unit tests of the glm47 tool-call parser and writer and of the glm45 / nemotron_3 reasoning formats. Parser cases
// mirror SGLang's test_glm47_moe_detector.py (TestGlm47MoeDetector, non-streaming), reasoning cases its
// BaseReasoningFormatDetector.detect_and_parse rules (reasoning_parser.py).
import { describe, expect, test } from "@jest/globals";
import { parseGlm47ToolCalls, writeGlm47ToolCalls } from "../../src/backend/glm47-tool-calls";
import { reasoningFormat, toolCallFormat } from "../../src/backend/formats/registry";
import { WEATHER_TOOLS } from "../../src/agent/texts";

/** The tools of the SGLang test's setUp. */
const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Get weather information",
      parameters: { type: "object", properties: { city: { type: "string" }, date: { type: "string" } }, required: ["city", "date"] },
    },
  },
];
const call = (name: string, pairs: ReadonlyArray<readonly [string, string]>): string =>
  `<tool_call>${name}${pairs.map(([key, value]) => `<arg_key>${key}</arg_key><arg_value>${value}</arg_value>`).join("")}</tool_call>`;

describe("parseGlm47ToolCalls (SGLang TestGlm47MoeDetector)", () => {
  test("test_single_tool_call", () => {
    const text = call("get_weather", [
      ["city", "Beijing"],
      ["date", "2024-06-27"],
    ]);
    expect(parseGlm47ToolCalls(text, TOOLS)).toEqual({
      content: "",
      calls: [{ toolIndex: 0, name: "get_weather", arguments: '{"city": "Beijing", "date": "2024-06-27"}' }],
    });
  });

  test("test_multiple_tool_calls", () => {
    const text =
      call("get_weather", [
        ["city", "Beijing"],
        ["date", "2024-06-27"],
      ]) +
      call("get_weather", [
        ["city", "Shanghai"],
        ["date", "2024-06-28"],
      ]);
    expect(parseGlm47ToolCalls(text, TOOLS).calls.map((c) => c.arguments)).toEqual([
      '{"city": "Beijing", "date": "2024-06-27"}',
      '{"city": "Shanghai", "date": "2024-06-28"}',
    ]);
  });

  test("test_no_arg_function_non_streaming", () => {
    const tools = [{ type: "function", function: { name: "list_filenames", parameters: { type: "object", properties: {} } } }];
    expect(parseGlm47ToolCalls("<tool_call>list_filenames</tool_call>", tools).calls).toEqual([{ toolIndex: 0, name: "list_filenames", arguments: "{}" }]);
  });

  test("test_invalid_tool_call: an unknown function gives no call, and the text stays content", () => {
    const text = call("invalid_func", [["city", "Beijing"]]);
    expect(parseGlm47ToolCalls(text, TOOLS)).toEqual({ content: text, calls: [] });
  });

  test("test_array_argument_with_escaped_json: backslash-escaped JSON in a value is unescaped once", () => {
    const tools = [{ type: "function", function: { name: "todo_write", parameters: { type: "object", properties: { todos: { type: "array" } } } } }];
    const escaped = String.raw`[{\"id\": \"1\", \"task\": \"Check file at C:\\\\Users\\\\test.txt\", \"status\": \"pending\"}]`;
    const parsed = parseGlm47ToolCalls(`<tool_call>todo_write<arg_key>todos</arg_key><arg_value>${escaped}</arg_value>\n</tool_call>`, tools);
    expect(JSON.parse(parsed.calls[0].arguments)).toEqual({ todos: [{ id: "1", task: String.raw`Check file at C:\Users\test.txt`, status: "pending" }] });
  });

  test("text around the blocks is the content, joined and stripped", () => {
    const text = `  Checking.\n${call("get_weather", [["city", "Oslo"]])} done `;
    expect(parseGlm47ToolCalls(text, TOOLS).content).toBe("Checking.\n done");
  });

  test("values follow the schema: string-typed keeps the text, number/integer/boolean/object parse, quotes come off strings", () => {
    const tools = [
      {
        type: "function",
        function: {
          name: "f",
          parameters: {
            properties: {
              s: { type: "string" },
              n: { type: "number" },
              i: { type: "integer" },
              b: { type: "boolean" },
              o: { type: "object" },
              q: { type: "string" },
            },
          },
        },
      },
    ];
    const text = call("f", [
      ["s", "123"],
      ["n", '"2.5"'],
      ["i", "7"],
      ["b", "true"],
      ["o", '{"a": [1, 2.0]}'],
      ["q", "'quoted'"],
    ]);
    expect(parseGlm47ToolCalls(text, tools).calls[0].arguments).toBe('{"s": "123", "n": 2.5, "i": 7, "b": true, "o": {"a": [1, 2.0]}, "q": "quoted"}');
  });

  test("an untyped value is JSON when it parses, else the text; a Python set makes the whole parse fail", () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { properties: {} } } }];
    expect(
      parseGlm47ToolCalls(
        call("f", [
          ["x", "[1, 2]"],
          ["y", "plain"],
        ]),
        tools,
      ).calls[0].arguments,
    ).toBe('{"x": [1, 2], "y": "plain"}');
    const objectTools = [{ type: "function", function: { name: "f", parameters: { properties: { x: { type: "object" } } } } }];
    const bad = call("f", [["x", "{1, 2}"]]);
    expect(parseGlm47ToolCalls(bad, objectTools)).toEqual({ content: bad, calls: [] });
  });
});

describe("writeGlm47ToolCalls", () => {
  test("the weather call reads back, with the lead as content", () => {
    const text = writeGlm47ToolCalls("Let me look up Beijing.", [{ name: "get_weather", arguments: { location: "Beijing" } }]);
    expect(text).toBe("Let me look up Beijing.<tool_call>get_weather<arg_key>location</arg_key><arg_value>Beijing</arg_value></tool_call>");
    expect(toolCallFormat("glm47").parse(text, WEATHER_TOOLS)).toEqual({
      content: "Let me look up Beijing.",
      calls: [{ toolIndex: 0, name: "get_weather", arguments: '{"location": "Beijing"}' }],
    });
  });

  test("non-string values are written as tojson", () => {
    expect(writeGlm47ToolCalls("", [{ name: "f", arguments: { n: 2, l: [1, "a"] } }])).toBe(
      '<tool_call>f<arg_key>n</arg_key><arg_value>2</arg_value><arg_key>l</arg_key><arg_value>[1, "a"]</arg_value></tool_call>',
    );
  });
});

describe("glm45 and nemotron_3 reasoning (BaseReasoningFormatDetector.detect_and_parse)", () => {
  const glm = reasoningFormat("glm45");
  const nemotron = reasoningFormat("nemotron_3");

  test("no <think> and not forced: everything is content", () => {
    expect(glm.parse("plain answer", false)).toEqual({ reasoning: null, content: "plain answer" });
    expect(nemotron.parse("plain answer", false)).toEqual({ reasoning: null, content: "plain answer" });
  });

  test("forced (the prompt opened <think>): reasoning up to </think>, content after it, both stripped", () => {
    expect(glm.parse(" step one </think> answer ", true)).toEqual({ reasoning: "step one", content: "answer" });
    expect(nemotron.parse("step\n</think>\nanswer", true)).toEqual({ reasoning: "step", content: "answer" });
  });

  test("glm45: a <tool_call> before </think> ends the reasoning; the call stays for the tool parser, unstripped", () => {
    expect(glm.parse("thinking <tool_call>f</tool_call>", true)).toEqual({ reasoning: "thinking", content: "<tool_call>f</tool_call>" });
    // nemotron_3 has no tool start token: without </think> everything is reasoning (a cut turn)
    expect(nemotron.parse("thinking <tool_call>f</tool_call>", true)).toEqual({ reasoning: "thinking <tool_call>f</tool_call>", content: "" });
  });

  test("an unforced text holding <think> anywhere is read as reasoning, every <think> removed", () => {
    expect(glm.parse("<think>a<think>b</think>c", false)).toEqual({ reasoning: "ab", content: "c" });
  });

  test("the writers produce what the parsers read back", () => {
    expect(glm.parse(glm.write("why", "<tool_call>x</tool_call>", true), true)).toEqual({ reasoning: "why", content: "<tool_call>x</tool_call>" });
    expect(nemotron.parse(nemotron.write("why", "answer", false), false)).toEqual({ reasoning: "why", content: "answer" });
  });
});
