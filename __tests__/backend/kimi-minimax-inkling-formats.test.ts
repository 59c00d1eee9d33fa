// The mock's Kimi, MiniMax and Inkling wire formats. Parser cases mirror SGLang's detector tests (non-streaming):
// test_kimik2_detector.py (TestKimiK2Detector), test_minimax_m2_detector.py (TestMinimaxM2Detector) and the
// InklingDetector rules of inkling_detector.py / reasoning_parser.py; the writers are checked against the family's
// own template (what the model writes is what the template renders for the turn) and the mock end to end.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import { startMockBackend, weatherScript, WEATHER_REASONING_TEXT, type MockBackend } from "../../src/backend";
import { reasoningFormat, toolCallFormat } from "../../src/backend/formats/registry";
import { WEATHER_TOOLS } from "../../src/agent";
import { loadTitoModel, type ChatMessage, type LoadedModel, type ToolSpec } from "../../src/tokenizer";
import { inklingSpec, kimi25Spec, minimaxSpec, writeSyntheticCheckpoint } from "../tokenizer/synthetic-checkpoint";
import { call } from "../server/helpers";

const SB = "<|tool_calls_section_begin|>";
const SE = "<|tool_calls_section_end|>";
const kimiCall = (name: string, index: number, args: string): string =>
  `<|tool_call_begin|>functions.${name}:${index}<|tool_call_argument_begin|>${args}<|tool_call_end|>`;

const KIMI_TOOLS: ToolSpec[] = [
  {
    type: "function",
    function: { name: "write_to_file", parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } } } },
  },
  { type: "function", function: { name: "execute_command", parameters: { type: "object", properties: { command: { type: "string" } } } } },
];

describe("kimi_k2 tool calls (SGLang TestKimiK2Detector)", () => {
  const kimi = toolCallFormat("kimi_k2");

  test("test_detect_and_parse_single", () => {
    const parsed = kimi.parse(`Let me help. ${SB}${kimiCall("execute_command", 0, '{"command": "ls"}')}${SE}`, KIMI_TOOLS);
    expect(parsed).toEqual({
      content: "Let me help. ",
      calls: [{ toolIndex: 0, name: "execute_command", arguments: '{"command": "ls"}', id: "functions.execute_command:0" }],
    });
  });

  test("test_detect_and_parse_multiple", () => {
    const parsed = kimi.parse(
      `${SB}${kimiCall("write_to_file", 0, '{"path": "a.txt", "content": "hi"}')}${kimiCall("execute_command", 1, '{"command": "ls"}')}${SE}`,
      KIMI_TOOLS,
    );
    expect(parsed.calls.map((c) => [c.name, c.toolIndex])).toEqual([
      ["write_to_file", 0],
      ["execute_command", 1],
    ]);
  });

  test("test_detect_and_parse_nested_braces_not_truncated", () => {
    const args = JSON.stringify({ path: "x.md", content: "# T\n```py\nd={'k': 1}\n```\ndone } { more" });
    const parsed = kimi.parse(SB + kimiCall("write_to_file", 0, args) + SE, KIMI_TOOLS);
    expect(parsed.calls).toHaveLength(1);
    expect(JSON.parse(parsed.calls[0].arguments)).toEqual(JSON.parse(args));
  });

  test("test_detect_and_parse_no_tool_call", () => {
    expect(kimi.parse("no tools here", KIMI_TOOLS)).toEqual({ content: "no tools here", calls: [] });
  });

  test("kimi_k2_raw_id: the reply keeps the id the model wrote, also without the functions. prefix", () => {
    const raw = toolCallFormat("kimi_k2_raw_id").parse(`${SB}<|tool_call_begin|>search:7<|tool_call_argument_begin|>{}<|tool_call_end|>${SE}`, KIMI_TOOLS);
    expect(raw.calls).toEqual([{ toolIndex: 7, name: "search", arguments: "{}", id: "search:7" }]);
  });
});

describe("kimi_k2 reasoning (KimiK2Detector through BaseReasoningFormatDetector.detect_and_parse)", () => {
  const reasoning = reasoningFormat("kimi_k2");
  test("the prompt opened <think>: reasoning up to </think>, the rest content, neither stripped", () => {
    expect(reasoning.parse(" plan </think> answer", true)).toEqual({ reasoning: " plan ", content: " answer" });
    expect(reasoning.parse(`plan${SB}x${SE}`, true)).toEqual({ reasoning: "plan", content: `${SB}x${SE}` });
    expect(reasoning.parse("cut off", true)).toEqual({ reasoning: "cut off", content: "" });
    expect(reasoning.parse("plain", false)).toEqual({ reasoning: null, content: "plain" });
    expect(reasoning.parse("<think><think>a</think>b", false)).toEqual({ reasoning: "a", content: "b" });
  });
});

const MINIMAX_TOOLS: ToolSpec[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      parameters: {
        type: "object",
        properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] }, days: { type: "integer" } },
      },
    },
  },
  { type: "function", function: { name: "search", parameters: { type: "object", properties: { query: { type: "string" }, strict: { type: "boolean" } } } } },
];
const invoke = (name: string, parameters: ReadonlyArray<readonly [string, string]>): string =>
  `<invoke name="${name}">\n${parameters.map(([key, value]) => `<parameter name="${key}">${value}</parameter>\n`).join("")}</invoke>\n`;
const block = (...invokes: string[]): string => `<minimax:tool_call>\n${invokes.join("")}</minimax:tool_call>`;

describe("minimax-m2 tool calls (SGLang TestMinimaxM2Detector)", () => {
  const minimax = toolCallFormat("minimax-m2");

  test("test_single_tool_call", () => {
    expect(minimax.parse(block(invoke("get_weather", [["city", "Beijing"]])), MINIMAX_TOOLS)).toEqual({
      content: "",
      calls: [{ toolIndex: 0, name: "get_weather", arguments: '{"city": "Beijing"}' }],
    });
  });

  test("test_normal_text_before_tool_call", () => {
    expect(minimax.parse(`Let me check the weather.\n${block(invoke("get_weather", [["city", "Beijing"]]))}`, MINIMAX_TOOLS).content).toBe(
      "Let me check the weather.\n",
    );
  });

  test("test_no_tool_call", () => {
    expect(minimax.parse("The weather is nice today.", MINIMAX_TOOLS)).toEqual({ content: "The weather is nice today.", calls: [] });
  });

  test("test_multiple_tool_calls", () => {
    const parsed = minimax.parse(block(invoke("get_weather", [["city", "Beijing"]]), invoke("search", [["query", "restaurants"]])), MINIMAX_TOOLS);
    expect(parsed.calls.map((c) => c.name)).toEqual(["get_weather", "search"]);
  });

  test("test_trailing_text_after_tool_call", () => {
    expect(minimax.parse(`${block(invoke("get_weather", [["city", "Beijing"]]))}\nThat is all.`, MINIMAX_TOOLS).content).toBe("\nThat is all.");
  });

  test("test_tool_call_with_multiple_arguments, values typed by the schema", () => {
    const parsed = minimax.parse(
      block(
        invoke("get_weather", [
          ["city", "London"],
          ["unit", "celsius"],
          ["days", "3"],
        ]),
        invoke("search", [
          ["query", "null"],
          ["strict", "yes"],
        ]),
      ),
      MINIMAX_TOOLS,
    );
    expect(parsed.calls.map((c) => c.arguments)).toEqual(['{"city": "London", "unit": "celsius", "days": 3}', '{"query": null, "strict": true}']);
  });

  test("test_multi_newline_stripping", () => {
    const parsed = minimax.parse(block(invoke("get_weather", [["city", "\n\nBeijing\n\n"]])), MINIMAX_TOOLS);
    expect(parsed.calls[0].arguments).toBe('{"city": "Beijing"}');
  });

  test("test_unknown_tool_filtered", () => {
    expect(minimax.parse(block(invoke("unknown_tool", [["city", "Beijing"]])), MINIMAX_TOOLS).calls).toEqual([]);
  });

  test("an unclosed block stays content (_extract)", () => {
    const text = `hi <minimax:tool_call>\n${invoke("get_weather", [["city", "Beijing"]])}`;
    expect(minimax.parse(text, MINIMAX_TOOLS)).toEqual({ content: text, calls: [] });
  });
});

describe("minimax-append-think reasoning (MiniMaxAppendThinkDetector)", () => {
  test("nothing is separated: the prompt's <think> is put back in front of the text", () => {
    expect(reasoningFormat("minimax-append-think").parse("plan\n</think>\n\nanswer", true)).toEqual({
      reasoning: null,
      content: "<think>plan\n</think>\n\nanswer",
    });
  });
});

describe("inkling tool calls and reasoning (InklingDetector)", () => {
  const tools = toolCallFormat("inkling");
  const reasoning = reasoningFormat("inkling");
  const invokeJson = (name: string, args: string): string =>
    `<|message_model|>${name}<|content_invoke_tool_json|>{"name":"${name}","args":${args}}<|end_message|>`;

  test("detect_and_parse: one call per invoke block, index by position, undeclared tools surfaced, content before the header", () => {
    const text = `intro${invokeJson("get_weather", '{"location":"Beijing","b":1}')}${invokeJson("not_declared", "{}")}`;
    expect(tools.parse(text, WEATHER_TOOLS)).toEqual({
      content: "intro",
      calls: [
        { toolIndex: 0, name: "get_weather", arguments: '{"location": "Beijing", "b": 1}' },
        { toolIndex: 1, name: "not_declared", arguments: "{}" },
      ],
    });
  });

  test("a header naming another tool than the payload, or args that are no object, drop that call", () => {
    const text = `<|message_model|>get_date<|content_invoke_tool_json|>{"name":"get_weather","args":{}}<|end_message|>${invokeJson("x", "[1]")}`;
    expect(tools.parse(text, WEATHER_TOOLS)).toEqual({ content: "", calls: [] });
  });

  test("_parse_blocks: thinking blocks are reasoning, text blocks content, tool blocks handed on whole", () => {
    const completion = `<|content_thinking|>plan<|end_message|><|message_model|><|content_text|>lead<|end_message|>${invokeJson("get_weather", "{}")}`;
    expect(reasoning.parse(completion, true)).toEqual({ reasoning: "plan", content: `lead${invokeJson("get_weather", "{}")}` });
    expect(reasoning.parse("no blocks at all", false)).toEqual({ reasoning: null, content: "no blocks at all" });
  });
});

/** The model's text for a turn is what the family's template renders for it after the generation prompt. */
describe("the writers write what the family's template renders for the turn", () => {
  const directories: string[] = [];
  const models: Record<string, LoadedModel> = {};
  beforeAll(async () => {
    for (const [family, spec] of [
      ["kimi25", kimi25Spec()],
      ["minimax_m25", minimaxSpec()],
      ["inkling", inklingSpec()],
    ] as const) {
      const directory = writeSyntheticCheckpoint(spec, family);
      directories.push(directory);
      models[family] = await loadTitoModel({ titoModel: family, hfCheckpoint: directory });
    }
  });
  afterAll(() => {
    for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
  });

  test.each([
    ["kimi25", "kimi_k2_raw_id", "kimi_k2", "<|im_end|>"],
    ["minimax_m25", "minimax-m2", "minimax-append-think", "[e~[\n"],
    ["inkling", "inkling", "inkling", "<|content_model_end_sampling|>"],
  ])("%s: %s + %s, with and without a lead, one or two calls, and a plain answer", (family, toolName, reasoningName, end) => {
    const model = models[family];
    const toolCalls = toolCallFormat(toolName);
    const thinking = reasoningFormat(reasoningName);
    const history: ChatMessage[] = [{ role: "user", content: "Weather in Beijing and Paris?" }];
    const kwargs = model.tito.defaultKwargs;
    const prompt = model.tokenizer.renderChatTemplate(history, { tools: WEATHER_TOOLS, addGenerationPrompt: true, kwargs });
    const calls = [
      { name: "get_weather", arguments: { location: "Beijing" } },
      { name: "get_weather", arguments: { location: "Paris", unit: 1.5 } },
    ];
    for (const lead of ["", "Let me look."]) {
      for (const count of [1, 2]) {
        const written = thinking.write("Think first.", toolCalls.write(lead, calls.slice(0, count)), true);
        // the reply as the agent sends it back: content, reasoning and tool calls parsed from what the model wrote
        const split = thinking.parse(written, true);
        const parsed = toolCalls.parse(split.content, WEATHER_TOOLS);
        expect(parsed.calls.map((c) => c.name)).toEqual(calls.slice(0, count).map((c) => c.name));
        const turn: ChatMessage = {
          role: "assistant",
          content: parsed.content,
          ...(split.reasoning === null ? {} : { reasoning_content: split.reasoning }),
          tool_calls: parsed.calls.map((c, i) => ({ id: c.id ?? `call_${i}`, type: "function" as const, function: { name: c.name, arguments: c.arguments } })),
        };
        const rendered = model.tokenizer.renderChatTemplate([...history, turn], { tools: WEATHER_TOOLS, kwargs });
        expect(rendered).toBe(prompt + written + end);
      }
    }
    const text = toolCalls.writeText?.("It is sunny.") ?? "It is sunny.";
    const plain = thinking.write("Think first.", text, true);
    const split = thinking.parse(plain, true);
    const answer: ChatMessage = { role: "assistant", content: split.content, ...(split.reasoning === null ? {} : { reasoning_content: split.reasoning }) };
    expect(model.tokenizer.renderChatTemplate([...history, answer], { tools: WEATHER_TOOLS, kwargs })).toBe(prompt + plain + end);
  });
});

describe("the mock under each family (weather script, synthetic checkpoints)", () => {
  let backend: MockBackend | undefined;
  const directories: string[] = [];
  afterEach(async () => {
    await backend?.close();
    backend = undefined;
  });
  afterAll(() => {
    for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
  });

  test.each([
    ["kimi25", kimi25Spec(), WEATHER_REASONING_TEXT, "functions.get_weather:0", "Let me look up Beijing.", "<|im_end|>"],
    ["minimax_m27", minimaxSpec(), undefined, "call00000", `<think>${WEATHER_REASONING_TEXT}\n</think>\n\nLet me look up Beijing.\n`, "[e~["],
    ["inkling", inklingSpec(), WEATHER_REASONING_TEXT, "call_298_0", "Let me look up Beijing.", "<|content_model_end_sampling|>"],
  ])(
    "%s: the reply's reasoning, tool-call id and content as SGLang's parsers give them; the turn ends with the stop token",
    async (family, spec, reasoningContent, callId, content, stop) => {
      const directory = writeSyntheticCheckpoint(spec, family);
      directories.push(directory);
      backend = await startMockBackend({ process: weatherScript, titoModel: family, hfCheckpoint: directory });
      const reply = await call("POST", `${backend.url}/v1/chat/completions`, {
        messages: [{ role: "user", content: "What's the weather in Beijing?" }],
        tools: WEATHER_TOOLS,
        return_meta_info: true,
      });
      expect(reply.status).toBe(200);
      const choice = reply.json<{
        choices: Array<{ message: Record<string, unknown>; finish_reason: string; meta_info: { output_token_logprobs: [number, number][] } }>;
      }>().choices[0];
      expect(choice.finish_reason).toBe("tool_calls");
      expect(choice.message.reasoning_content ?? undefined).toBe(reasoningContent);
      expect(choice.message.content).toBe(content);
      expect(choice.message.tool_calls).toEqual([
        { id: callId, index: 0, type: "function", function: { name: "get_weather", arguments: '{"location": "Beijing"}' } },
      ]);
      const model = await loadTitoModel({ titoModel: family, hfCheckpoint: directory });
      const ids = choice.meta_info.output_token_logprobs.map(([, tokenId]) => tokenId);
      expect(ids[ids.length - 1]).toBe(model.tokenizer.tokenToId(stop));
    },
  );
});
