// Unit tests of the qwen3_coder XML tool-call parser and writer. The parser cases mirror SGLang's
// test/registered/function_call/test_qwen3_coder_detector.py (non-streaming `detect_and_parse`), one test each.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { parseQwen3CoderToolCalls, writeQwen3CoderToolCalls } from "../../src/backend/qwen3-coder-tool-calls";
import { dumpsPy, PY_TOJSON } from "../../src/wire/py-json";
import { literalEvalToJson, PyLiteralError, PyLiteralNotJsonError } from "../../src/backend/python-literal";
import { WEATHER_TOOLS } from "../../src/agent/texts";
import { pythonMissing, runPythonScript } from "../python/python3";

/** The tools of the SGLang test's setUp. */
const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_current_weather",
      parameters: {
        type: "object",
        properties: { location: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] }, days: { type: "integer" } },
        required: ["location"],
      },
    },
  },
  {
    type: "function",
    function: { name: "sql_interpreter", parameters: { type: "object", properties: { query: { type: "string" }, dry_run: { type: "boolean" } } } },
  },
  {
    type: "function",
    function: {
      name: "TodoWrite",
      parameters: {
        type: "object",
        properties: {
          todos: {
            type: "array",
            items: { type: "object", properties: { content: { type: "string" }, status: { type: "string" } }, required: ["content", "status"] },
          },
        },
      },
    },
  },
];

const args = (text: string, index = 0): unknown => JSON.parse(parseQwen3CoderToolCalls(text, TOOLS).calls[index].arguments);

describe("parseQwen3CoderToolCalls (SGLang test_qwen3_coder_detector.py)", () => {
  test("test_plain_text_only: no marker, the text is content", () => {
    const text = "This is plain text without any tool calls.";
    expect(parseQwen3CoderToolCalls(text, TOOLS)).toEqual({ content: text, calls: [] });
  });

  test("test_single_tool_call: name and typed parameters, written as json.dumps writes them", () => {
    const text =
      "<tool_call>\n<function=get_current_weather>\n<parameter=location>Boston</parameter>\n<parameter=unit>celsius</parameter>\n" +
      "<parameter=days>3</parameter>\n</function>\n</tool_call>";
    expect(parseQwen3CoderToolCalls(text, TOOLS)).toEqual({
      content: "",
      calls: [{ toolIndex: 0, name: "get_current_weather", arguments: '{"location": "Boston", "unit": "celsius", "days": 3}' }],
    });
  });

  test("test_single_tool_call_with_text_prefix: the content is the text before <tool_call>, not stripped", () => {
    const text =
      "Let me check the weather for you.\n\n<tool_call>\n<function=get_current_weather>\n<parameter=location>New York</parameter>\n</function>\n</tool_call>";
    const parsed = parseQwen3CoderToolCalls(text, TOOLS);
    expect(parsed.content).toBe("Let me check the weather for you.\n\n");
    expect(parsed.calls.map((call) => call.name)).toEqual(["get_current_weather"]);
  });

  test("test_multiple_tool_calls: two blocks, the index counts calls (not tool positions)", () => {
    const text =
      "<tool_call>\n<function=get_current_weather>\n<parameter=location>New York</parameter>\n</function>\n</tool_call>\n" +
      "<tool_call>\n<function=sql_interpreter>\n<parameter=query>SELECT * FROM users</parameter>\n<parameter=dry_run>True</parameter>\n</function>\n</tool_call>";
    expect(parseQwen3CoderToolCalls(text, TOOLS).calls).toEqual([
      { toolIndex: 0, name: "get_current_weather", arguments: '{"location": "New York"}' },
      { toolIndex: 1, name: "sql_interpreter", arguments: '{"query": "SELECT * FROM users", "dry_run": true}' },
    ]);
  });

  test("test_integer_parameter_conversion", () => {
    expect(
      args("<tool_call>\n<function=get_current_weather>\n<parameter=location>Tokyo</parameter>\n<parameter=days>5</parameter>\n</function>\n</tool_call>"),
    ).toEqual({
      location: "Tokyo",
      days: 5,
    });
  });

  test("test_boolean_parameter_conversion", () => {
    expect(
      args("<tool_call>\n<function=sql_interpreter>\n<parameter=query>SELECT 1</parameter>\n<parameter=dry_run>True</parameter>\n</function>\n</tool_call>"),
    ).toEqual({
      query: "SELECT 1",
      dry_run: true,
    });
  });

  test("test_complex_array_parameter: an array-typed value is read with json.loads", () => {
    const text =
      '<tool_call>\n<function=TodoWrite>\n<parameter=todos>\n[\n  {"content": "Buy groceries", "status": "pending"},\n' +
      '  {"content": "Finish report", "status": "completed"}\n]\n</parameter>\n</function>\n</tool_call>';
    expect(parseQwen3CoderToolCalls(text, TOOLS).calls[0].arguments).toBe(
      '{"todos": [{"content": "Buy groceries", "status": "pending"}, {"content": "Finish report", "status": "completed"}]}',
    );
  });

  test("test_empty_parameter_value", () => {
    expect(args("<tool_call>\n<function=get_current_weather>\n<parameter=location></parameter>\n</function>\n</tool_call>")).toEqual({ location: "" });
  });

  test("test_parameter_with_special_characters: quotes survive and are escaped in the JSON", () => {
    const text =
      "<tool_call>\n<function=sql_interpreter>\n<parameter=query>SELECT * FROM users WHERE name = 'John \"Doe\"'</parameter>\n</function>\n</tool_call>";
    expect(parseQwen3CoderToolCalls(text, TOOLS).calls[0].arguments).toBe('{"query": "SELECT * FROM users WHERE name = \'John \\"Doe\\"\'"}');
  });

  test("test_incomplete_tool_call: an unclosed block is read as far as it goes, without failing", () => {
    // no </tool_call>: the whole text is the block, the function and the value run to the end
    const text = "<tool_call>\n<function=get_current_weather>\n<parameter=location>London";
    expect(parseQwen3CoderToolCalls(text, TOOLS)).toEqual({
      content: "",
      calls: [{ toolIndex: 0, name: "get_current_weather", arguments: '{"location": "London"}' }],
    });
  });

  test("test_has_tool_call_detection: without <tool_call> even a <function= block is plain text", () => {
    const text = "<function=get_current_weather>\n<parameter=location>X</parameter>\n</function>";
    expect(parseQwen3CoderToolCalls(text, TOOLS)).toEqual({ content: text, calls: [] });
    expect(parseQwen3CoderToolCalls("", TOOLS)).toEqual({ content: "", calls: [] });
  });
});

describe("parseQwen3CoderToolCalls: the detector's other rules", () => {
  const call = (body: string): string => `<tool_call>\n<function=get_current_weather>\n${body}</function>\n</tool_call>`;

  test("values end at the next <parameter= or at </function> when </parameter> is missing", () => {
    expect(args(call("<parameter=location>Paris\n<parameter=days>2\n"))).toEqual({ location: "Paris", days: 2 });
  });

  test("one leading and one trailing newline are trimmed, no more", () => {
    expect(args(call("<parameter=location>\n\nOslo\n\n</parameter>\n"))).toEqual({ location: "\nOslo\n" });
  });

  test("a repeated parameter keeps its first place and its last value", () => {
    expect(
      parseQwen3CoderToolCalls(call("<parameter=location>A</parameter>\n<parameter=days>1</parameter>\n<parameter=location>B</parameter>\n"), TOOLS).calls[0]
        .arguments,
    ).toBe('{"location": "B", "days": 1}');
  });

  test('"null" in any case is None; an integer that does not parse stays text', () => {
    expect(args(call("<parameter=location>NULL</parameter>\n<parameter=days>three</parameter>\n"))).toEqual({ location: null, days: "three" });
  });

  test("an unknown tool or parameter keeps every value as text; names are not checked against the tools", () => {
    const text = "<tool_call>\n<function=launch>\n<parameter=count>3</parameter>\n</function>\n</tool_call>";
    expect(parseQwen3CoderToolCalls(text, TOOLS).calls).toEqual([{ toolIndex: 0, name: "launch", arguments: '{"count": "3"}' }]);
  });

  test("number types: integral text becomes an int, text with a point or exponent a float", () => {
    const tools = [
      { type: "function", function: { name: "f", parameters: { properties: { a: { type: "number" }, b: { type: "float" }, c: { type: "num" } } } } },
    ];
    const text = "<tool_call>\n<function=f>\n<parameter=a>4</parameter>\n<parameter=b>4.0</parameter>\n<parameter=c>1e3</parameter>\n</function>\n</tool_call>";
    expect(parseQwen3CoderToolCalls(text, tools).calls[0].arguments).toBe('{"a": 4, "b": 4.0, "c": 1000.0}');
  });

  test("other types go through ast.literal_eval; a set makes the whole parse fail and the text stays content", () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { properties: { a: { type: "tuple" } } } } }];
    const ok = "<tool_call>\n<function=f>\n<parameter=a>(1, 'x')</parameter>\n</function>\n</tool_call>";
    expect(parseQwen3CoderToolCalls(ok, tools).calls[0].arguments).toBe('{"a": [1, "x"]}');
    const bad = "Lead <tool_call>\n<function=f>\n<parameter=a>{1, 2}</parameter>\n</function>\n</tool_call>";
    expect(parseQwen3CoderToolCalls(bad, tools)).toEqual({ content: bad, calls: [] });
  });

  test("a function without '>' is skipped; with nothing parsed the whole text is content", () => {
    const text = "Hi <tool_call><function=broken</tool_call>";
    expect(parseQwen3CoderToolCalls(text, TOOLS)).toEqual({ content: text, calls: [] });
  });

  test("several functions in one block are several calls", () => {
    const text = "<tool_call>\n<function=a>\n</function>\n<function=b>\n<parameter=x>1</parameter>\n</function>\n</tool_call>";
    expect(parseQwen3CoderToolCalls(text, TOOLS).calls).toEqual([
      { toolIndex: 0, name: "a", arguments: "{}" },
      { toolIndex: 1, name: "b", arguments: '{"x": "1"}' },
    ]);
  });
});

describe("writeQwen3CoderToolCalls", () => {
  test("the weather call reads back as the agent's arguments", () => {
    const text = writeQwen3CoderToolCalls("Let me look up Beijing.", [{ name: "get_weather", arguments: { location: "Beijing" } }]);
    expect(text).toBe("Let me look up Beijing.\n\n<tool_call>\n<function=get_weather>\n<parameter=location>\nBeijing\n</parameter>\n</function>\n</tool_call>");
    expect(parseQwen3CoderToolCalls(text, WEATHER_TOOLS)).toEqual({
      content: "Let me look up Beijing.\n\n",
      calls: [{ toolIndex: 0, name: "get_weather", arguments: '{"location": "Beijing"}' }],
    });
  });

  test("without a lead the first block opens the text; later blocks follow one newline apart", () => {
    const text = writeQwen3CoderToolCalls("", [
      { name: "a", arguments: { n: 2, list: [1, "x"], flag: true, none: null } },
      { name: "b", arguments: {} },
    ]);
    expect(text).toBe(
      '<tool_call>\n<function=a>\n<parameter=n>\n2\n</parameter>\n<parameter=list>\n[1, "x"]\n</parameter>\n<parameter=flag>\nTrue\n</parameter>\n' +
        "<parameter=none>\nNone\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=b>\n</function>\n</tool_call>",
    );
  });

  test("property: string arguments of a schema-typed tool round-trip exactly", () => {
    const value = fc.string({ maxLength: 12 }).filter((s) => !/<|\n/.test(s) && s.toLowerCase() !== "null");
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z]{1,6}$/), value), { selector: (e) => e[0], maxLength: 4 }),
        fc.string({ maxLength: 10 }),
        (entries, lead) => {
          const record = Object.fromEntries(entries);
          const parsed = parseQwen3CoderToolCalls(
            writeQwen3CoderToolCalls(lead.replace(/</g, ""), [{ name: "get_weather", arguments: record }]),
            WEATHER_TOOLS,
          );
          expect(parsed.calls).toHaveLength(1);
          expect(JSON.parse(parsed.calls[0].arguments)).toEqual(record);
        },
      ),
      { seed: 26, numRuns: 200 },
    );
  });
});

const missing = pythonMissing();
if (missing !== null) console.warn(`literal_eval cross-check skipped: ${missing}`);
const testWithPython = missing === null ? test : test.skip;

describe("literalEvalToJson against Python's ast.literal_eval + json.dumps", () => {
  const FIXED = [
    "1",
    "-1",
    "+1",
    "--1",
    "1_000",
    "007",
    "00",
    "0x1F",
    "0o17",
    "0b101",
    "1e5",
    "1.",
    ".5",
    "1j",
    "1+2j",
    "1+2",
    "'a'",
    '"b"',
    "'a' 'b'",
    "b'x'",
    "r'\\n'",
    "'\\n\\t\\x41\\u00e9\\101'",
    "'\\q'",
    "True",
    "None",
    "Beijing",
    "[1, 2,]",
    "(1,)",
    "()",
    "(1)",
    "1, 2",
    "{}",
    "{1: 2}",
    "{'a': 1, 'a': 2}",
    "{1: 'a', True: 'b'}",
    "{1, 2}",
    "set()",
    "...",
    "[1, [2, {'x': None}]]",
    "  1",
    "\n1",
    "\n 1",
    "1\n",
    "1\n  ",
    "1\n2",
    "[1,\n 2]\n",
    "{(1, 2): 3}",
    "{[1]: 2}",
    "1 # c",
    "'''x\ny'''",
    "'x\ny'",
    "f'x'",
    "1.5e-7",
    "1e400",
    "-0.0",
    "-0",
    "{1.5: 2}",
    "{None: 1}",
    "inf",
    "nan",
    " 12 ",
    "1_2.5",
    "0.1",
    "123456789012345678901234567890",
    "\t[1]",
    "",
    "{'a': [1, (2, 3)]}",
  ];
  const ALPHABET = [
    "0",
    "1",
    "9",
    ".",
    "e",
    "-",
    "+",
    "_",
    "x",
    "j",
    "'",
    '"',
    "[",
    "]",
    "(",
    ")",
    "{",
    "}",
    ",",
    ":",
    " ",
    "\n",
    "\\",
    "a",
    "T",
    "rue",
    "None",
    "#",
  ];

  function ours(text: string): string {
    try {
      return dumpsPy(literalEvalToJson(text), PY_TOJSON);
    } catch (error) {
      if (error instanceof PyLiteralNotJsonError) return "not-json";
      if (error instanceof PyLiteralError) return "not-literal";
      throw error;
    }
  }

  testWithPython("fixed edge cases and 400 random token soups evaluate alike", () => {
    const random = fc.sample(
      fc.array(fc.constantFrom(...ALPHABET), { maxLength: 8 }).map((parts) => parts.join("")),
      { numRuns: 400, seed: 26 },
    );
    const cases = [...FIXED, ...random];
    const python = JSON.parse(runPythonScript("literal_eval_reference.py", JSON.stringify(cases))) as Array<{ literal: string }>;
    const differences = cases.map((text, index) => ({ text, ours: ours(text), python: python[index].literal })).filter((row) => row.ours !== row.python);
    expect(differences).toEqual([]);
    // the sample must exercise all three outcomes
    const outcomes = new Set(python.map((row) => (row.literal === "not-json" || row.literal === "not-literal" ? row.literal : "value")));
    expect([...outcomes].sort()).toEqual(["not-json", "not-literal", "value"]);
  });
});
