// The mock's DeepSeek wire formats read completions as SGLang's detectors do: the `deepseekv32` / `deepseekv4` DSML
// tool-call detectors (XML parameters or a JSON body, unknown tools dropped) and the `deepseek-v3` / `deepseek-v4`
// reasoning detectors (forced by the request's `thinking`); the writers spell what the encoders render.
import { describe, expect, test } from "@jest/globals";
import { DEEPSEEK_V3_REASONING, DEEPSEEK_V4_REASONING, DEEPSEEKV32_TOOL_CALLS, DEEPSEEKV4_TOOL_CALLS } from "../../src/backend/formats/deepseek";
import { toolCallFormat, reasoningFormat } from "../../src/backend/formats/registry";
import type { ToolSpec } from "../../src/tokenizer/types";

const TOOLS: ToolSpec[] = [
  {
    type: "function",
    function: {
      name: "search",
      parameters: { type: "object", properties: { query: { type: "string" }, topn: { type: "integer" }, source: { type: "string" } }, required: ["query"] },
    },
  },
  { type: "function", function: { name: "get_favorite_tourist_spot", parameters: { type: "object", properties: { city: { type: "string" } } } } },
  { type: "function", function: { name: "get_date", parameters: { type: "object", properties: {} } } },
];

describe("deepseekv32 tool calls (sglang function_call/deepseekv32_detector.py, DeepSeekV32Detector.detect_and_parse)", () => {
  // mirrors sglang test/srt/function_call/test_function_call_parser.py::TestDeepSeekV32Detector::test_detect_and_parse_xml_format
  test("XML parameters: strings kept (stripped), other values read as JSON, content before the block stripped", () => {
    const text =
      "I'll help you with information about San Francisco and get its favorite tourist spot for you.\n\n\n        <｜DSML｜function_calls>\n\n" +
      '            <｜DSML｜invoke name="get_favorite_tourist_spot">\n\n' +
      '                <｜DSML｜parameter name="city" string="true">San Francisco</｜DSML｜parameter>\n\n' +
      "            </｜DSML｜invoke>\n\n" +
      '            <｜DSML｜invoke name="search">\n' +
      '                <｜DSML｜parameter name="query" string="true">WebNav benchmark</｜DSML｜parameter>\n' +
      '                <｜DSML｜parameter name="topn" string="false">10</｜DSML｜parameter>\n' +
      '                <｜DSML｜parameter name="source" string="true">web</｜DSML｜parameter>\n' +
      "            </｜DSML｜invoke>\n        </｜DSML｜function_calls>\n        ";
    const parsed = DEEPSEEKV32_TOOL_CALLS.parse(text, TOOLS);
    expect(parsed.content).toBe("I'll help you with information about San Francisco and get its favorite tourist spot for you.");
    expect(parsed.calls).toEqual([
      { toolIndex: 1, name: "get_favorite_tourist_spot", arguments: '{"city": "San Francisco"}' },
      { toolIndex: 0, name: "search", arguments: '{"query": "WebNav benchmark", "topn": 10, "source": "web"}' },
    ]);
  });

  // mirrors TestDeepSeekV32Detector::test_detect_and_parse_json_format
  test("a JSON object as the invoke body is the arguments", () => {
    const text =
      "Sure.\n\n<｜DSML｜function_calls>\n" +
      '<｜DSML｜invoke name="search">\n{\n  "query": "WebNav benchmark",\n  "topn": 10,\n  "source": "web"\n}\n</｜DSML｜invoke>\n' +
      "</｜DSML｜function_calls>";
    expect(DEEPSEEKV32_TOOL_CALLS.parse(text, TOOLS).calls).toEqual([
      { toolIndex: 0, name: "search", arguments: '{"query": "WebNav benchmark", "topn": 10, "source": "web"}' },
    ]);
  });

  // mirrors TestDeepSeekV32Detector::test_detect_and_parse_no_parameters
  test("a call without parameters has {} arguments; an unknown tool is dropped; a string value that is not JSON stays text", () => {
    const text =
      "Let me get the current date for you.\n\n<｜DSML｜function_calls>\n" +
      '<｜DSML｜invoke name="get_date">\n</｜DSML｜invoke>\n' +
      '<｜DSML｜invoke name="unknown_tool">\n<｜DSML｜parameter name="x" string="true">1</｜DSML｜parameter>\n</｜DSML｜invoke>\n' +
      '<｜DSML｜invoke name="search">\n<｜DSML｜parameter name="topn" string="false">ten</｜DSML｜parameter>\n</｜DSML｜invoke>\n' +
      "</｜DSML｜function_calls>";
    const parsed = DEEPSEEKV32_TOOL_CALLS.parse(text, TOOLS);
    expect(parsed.content).toBe("Let me get the current date for you.");
    expect(parsed.calls).toEqual([
      { toolIndex: 2, name: "get_date", arguments: "{}" },
      { toolIndex: 0, name: "search", arguments: '{"topn": "ten"}' },
    ]);
  });

  test("no opening tag: the whole text is content; an unclosed block: the content before it, no calls", () => {
    expect(DEEPSEEKV32_TOOL_CALLS.parse("  plain answer ", TOOLS)).toEqual({ content: "  plain answer ", calls: [] });
    expect(DEEPSEEKV32_TOOL_CALLS.parse('lead <｜DSML｜function_calls>\n<｜DSML｜invoke name="get_date">', TOOLS)).toEqual({ content: "lead", calls: [] });
  });

  test("the writer spells calls as the encoder renders them, and the parser reads them back (parallel calls)", () => {
    const written = DEEPSEEKV32_TOOL_CALLS.write("Checking both.", [
      { name: "search", arguments: { query: "天气 in Paris", topn: 3 } },
      { name: "get_favorite_tourist_spot", arguments: { city: "Rome" } },
    ]);
    expect(written).toBe(
      "Checking both.\n\n<｜DSML｜function_calls>\n" +
        '<｜DSML｜invoke name="search">\n<｜DSML｜parameter name="query" string="true">天气 in Paris</｜DSML｜parameter>\n' +
        '<｜DSML｜parameter name="topn" string="false">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n' +
        '<｜DSML｜invoke name="get_favorite_tourist_spot">\n<｜DSML｜parameter name="city" string="true">Rome</｜DSML｜parameter>\n</｜DSML｜invoke>\n' +
        "</｜DSML｜function_calls>",
    );
    expect(DEEPSEEKV32_TOOL_CALLS.parse(written, TOOLS)).toEqual({
      content: "Checking both.",
      calls: [
        { toolIndex: 0, name: "search", arguments: '{"query": "天气 in Paris", "topn": 3}' },
        { toolIndex: 1, name: "get_favorite_tourist_spot", arguments: '{"city": "Rome"}' },
      ],
    });
  });
});

describe("deepseekv4 tool calls (DeepSeekV4Detector: the V3.2 detector on a <｜DSML｜tool_calls> block)", () => {
  test("V4 reads its own block and not V3.2's, and the registry names both", () => {
    const v4 = DEEPSEEKV4_TOOL_CALLS.write("", [{ name: "get_date", arguments: {} }]);
    expect(v4).toBe('\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_date">\n\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>');
    expect(DEEPSEEKV4_TOOL_CALLS.parse(v4, TOOLS).calls).toEqual([{ toolIndex: 2, name: "get_date", arguments: "{}" }]);
    expect(DEEPSEEKV32_TOOL_CALLS.parse(v4, TOOLS).calls).toEqual([]);
    expect(toolCallFormat("deepseekv4")).toBe(DEEPSEEKV4_TOOL_CALLS);
    expect(toolCallFormat("deepseekv32")).toBe(DEEPSEEKV32_TOOL_CALLS);
  });
});

describe("deepseek reasoning (sglang parser/reasoning_parser.py: _DeepSeekV3Detector, DeepSeekV4Detector)", () => {
  // mirrors sglang test/srt/test_reasoning_parser.py::TestBaseReasoningFormatDetector::test_detect_and_parse_* (force_reasoning)
  test.each([DEEPSEEK_V3_REASONING, DEEPSEEK_V4_REASONING])("$name: forced reasoning splits at </think>, nothing stripped", (format) => {
    expect(format.parse("thought it through</think>The answer", true)).toEqual({ reasoning: "thought it through", content: "The answer" });
    expect(format.parse("still thinking", true)).toEqual({ reasoning: "still thinking", content: "" });
    expect(format.parse("The answer", false)).toEqual({ reasoning: null, content: "The answer" });
    expect(format.parse("<think>r</think> a ", false)).toEqual({ reasoning: "r", content: " a " });
    expect(format.write("r", "a", true)).toBe("r</think>a");
    expect(reasoningFormat(format.name)).toBe(format);
  });

  // mirrors TestQwen3Detector (deepseek-v3 reuses it): a <tool_call> inside an unclosed block ends the reasoning
  test("deepseek-v3 ends unclosed reasoning at <tool_call>; deepseek-v4 does not", () => {
    expect(DEEPSEEK_V3_REASONING.parse("r<tool_call>x", true)).toEqual({ reasoning: "r", content: "<tool_call>x" });
    expect(DEEPSEEK_V4_REASONING.parse("r<tool_call>x", true)).toEqual({ reasoning: "r<tool_call>x", content: "" });
  });
});
