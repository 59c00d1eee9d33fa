// The append-safe Qwen3 template: golden weather prompt, message normalization and the append-safety changes.
// Real Qwen3 vocabulary and the package's .jinja file; goldens are checked-in text and ids, never regenerated here.
import { beforeAll, describe, expect, it } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import { Template } from "@huggingface/jinja";
import { canonicalizeTools } from "../../src/tokenizer/sglang-tools";
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import {
  ChatTemplateError,
  defaultTokenizerDirectory,
  loadTokenizer,
  normalizeMessagesForTemplate,
  qwen3TemplatePath,
  stripNewlines,
  type ChatMessage,
  type Qwen3Tokenizer,
  type ToolSpec,
} from "../../src/tokenizer";

const GOLDEN = path.join(__dirname, "golden");
const SERVER_DEFAULTS = { enable_thinking: false };

let tokenizer: Qwen3Tokenizer;
beforeAll(async () => {
  tokenizer = await loadTokenizer();
});

function weatherCall(args: string | Record<string, unknown> = '{"location": "Beijing"}'): ChatMessage {
  return {
    role: "assistant",
    content: "",
    tool_calls: [{ id: "call00000", type: "function", function: { name: "get_weather", arguments: args } }],
  };
}

describe("the weather conversation (golden)", () => {
  it("renders with the generation prompt to the checked-in golden string", () => {
    const text = tokenizer.renderChatTemplate(buildInitialMessages(), {
      tools: WEATHER_TOOLS,
      addGenerationPrompt: true,
      kwargs: SERVER_DEFAULTS,
    });
    expect(text).toBe(fs.readFileSync(path.join(GOLDEN, "weather-initial-prompt.txt"), "utf8"));
    expect(text.endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n")).toBe(true);
  });

  it("encodes to the checked-in golden ids, which decode back to the golden string", () => {
    const golden = JSON.parse(fs.readFileSync(path.join(GOLDEN, "weather-initial-prompt.ids.json"), "utf8")) as number[];
    const text = fs.readFileSync(path.join(GOLDEN, "weather-initial-prompt.txt"), "utf8");
    expect(tokenizer.encode(text)).toEqual(golden);
    expect(tokenizer.decode(golden)).toBe(text);
    expect(golden.slice(0, 3)).toEqual([151644, 8948, 198]);
    expect(golden.slice(-9)).toEqual([151645, 198, 151644, 77091, 198, 151667, 271, 151668, 271]);
    expect(golden.filter((id) => id === 151644)).toHaveLength(3);
  });
});

describe("derivation from the native Qwen3 template", () => {
  it("renders a clean multi-turn conversation exactly like the template the tokenizer package ships", () => {
    const config = JSON.parse(fs.readFileSync(path.join(defaultTokenizerDirectory(), "tokenizer_config.json"), "utf8")) as {
      chat_template: string;
    };
    const messages: ChatMessage[] = [
      ...buildInitialMessages(),
      { ...weatherCall({ location: "Beijing" }) },
      { role: "tool", content: MOCK_TOOL_RESULTS[0] },
      { role: "assistant", content: "<think>\nIt is sunny.\n</think>\n\nBeijing: 22 degrees, sunny." },
      { role: "user", content: "Thanks" },
    ];
    for (const kwargs of [{}, { enable_thinking: false }]) {
      const native = new Template(config.chat_template).render({
        messages,
        tools: canonicalizeTools(WEATHER_TOOLS),
        add_generation_prompt: true,
        ...kwargs,
      });
      expect(tokenizer.renderChatTemplate(messages, { tools: WEATHER_TOOLS, addGenerationPrompt: true, kwargs })).toBe(native);
    }
  });

  it("is read from the .jinja file next to the module", () => {
    expect(path.basename(qwen3TemplatePath())).toBe("qwen3-append-safe.jinja");
    expect(tokenizer.chatTemplate.origin).toBe(qwen3TemplatePath());
    expect(tokenizer.chatTemplate.source).toBe(fs.readFileSync(qwen3TemplatePath(), "utf8"));
  });
});

describe("message normalization", () => {
  const render = (messages: ChatMessage[], kwargs: Record<string, unknown> = {}) => tokenizer.renderChatTemplate(messages, { tools: WEATHER_TOOLS, kwargs });

  it("parses tool-call arguments given as JSON strings before rendering", () => {
    const fromString = render([...buildInitialMessages(), weatherCall('{"location":"Beijing","days":2}')]);
    const fromObject = render([...buildInitialMessages(), weatherCall({ location: "Beijing", days: 2 })]);
    expect(fromString).toBe(fromObject);
    expect(fromString).toContain('{"name": "get_weather", "arguments": {"location": "Beijing", "days": 2}}');
  });

  it("rejects tool-call arguments that are not JSON, naming the message and call", () => {
    expect(() => render([...buildInitialMessages(), weatherCall("{location: Beijing")])).toThrow(ChatTemplateError);
    expect(() => render([...buildInitialMessages(), weatherCall("{location: Beijing")])).toThrow(
      "messages[2].tool_calls[0].function.arguments is not valid JSON",
    );
  });

  it('renders content null, missing content and non-string content as ""', () => {
    const empty = render([
      { role: "user", content: "" },
      { role: "assistant", content: "" },
      { role: "tool", content: "" },
    ]);
    expect(
      render([
        { role: "user", content: null },
        { role: "assistant", content: null },
        { role: "tool", content: null },
      ]),
    ).toBe(empty);
    expect(render([{ role: "user" }, { role: "assistant" }, { role: "tool" }])).toBe(empty);
    expect(
      render([
        { role: "user", content: [{ type: "text", text: "hi" }] },
        { role: "assistant", content: { text: "hi" } },
        { role: "tool", content: 42 },
      ]),
    ).toBe(empty);
    expect(
      render([
        { role: "system", content: [{ type: "text", text: "sys" }] },
        { role: "user", content: "q" },
      ]),
    ).toContain("<|im_start|>system\n\n\n# Tools");
  });

  it("does not mutate the caller's messages", () => {
    const messages = [...buildInitialMessages(), weatherCall(), { role: "user", content: null }];
    const before = JSON.stringify(messages);
    normalizeMessagesForTemplate(messages);
    render(messages);
    expect(JSON.stringify(messages)).toBe(before);
  });

  it("wraps bare function definitions as function tools", () => {
    const bare = WEATHER_TOOLS.map((tool) => (tool as { function: Record<string, unknown> }).function);
    const messages = buildInitialMessages();
    expect(tokenizer.renderChatTemplate(messages, { tools: bare })).toBe(tokenizer.renderChatTemplate(messages, { tools: WEATHER_TOOLS }));
    expect(tokenizer.renderChatTemplate(messages, { tools: [] })).toBe(tokenizer.renderChatTemplate(messages, { tools: null }));
  });

  it("refuses a tool list that is not an array of objects, naming the entry", () => {
    const messages = buildInitialMessages();
    const renderTools = (tools: unknown) => () => tokenizer.renderChatTemplate(messages, { tools: tools as ToolSpec[] });
    expect(renderTools(["get_weather"])).toThrow(new ChatTemplateError('tools[0] must be a tool object, got the string "get_weather"'));
    expect(renderTools([WEATHER_TOOLS[0], null])).toThrow("tools[1] must be a tool object, got null");
    expect(renderTools([[1]])).toThrow("tools[0] must be a tool object, got an array");
    expect(renderTools({ type: "function" })).toThrow("tools must be an array of tool objects, got an object");
    expect(renderTools([7])).toThrow("tools[0] must be a tool object, got a number");
  });
});

describe("append-safety changes", () => {
  const history: ChatMessage[] = [
    { role: "user", content: "first" },
    { role: "assistant", content: "<think>\nplan A\n</think>\n\nanswer A" },
    { role: "user", content: "second" },
    { role: "assistant", content: "answer B", reasoning_content: "plan B" },
  ];

  it("clear_thinking false keeps every assistant turn's think block; the default drops those before the last query", () => {
    const cleared = tokenizer.renderChatTemplate(history, {});
    const kept = tokenizer.renderChatTemplate(history, { kwargs: { clear_thinking: false } });
    expect(cleared).toContain("<|im_start|>assistant\nanswer A<|im_end|>");
    expect(cleared).toContain("<|im_start|>assistant\n<think>\nplan B\n</think>\n\nanswer B<|im_end|>");
    expect(kept).toContain("<|im_start|>assistant\n<think>\nplan A\n</think>\n\nanswer A<|im_end|>");
    expect(kept).toContain("<|im_start|>assistant\n<think>\nplan B\n</think>\n\nanswer B<|im_end|>");
  });

  it("with clear_thinking false, appending a user turn leaves the earlier render unchanged", () => {
    const kwargs = { clear_thinking: false };
    const before = tokenizer.renderChatTemplate(history, { kwargs });
    const after = tokenizer.renderChatTemplate([...history, { role: "user", content: "third" }], { kwargs });
    expect(after.startsWith(before)).toBe(true);
    const nativeBefore = tokenizer.renderChatTemplate(history, {});
    const nativeAfter = tokenizer.renderChatTemplate([...history, { role: "user", content: "third" }], {});
    expect(nativeAfter.startsWith(nativeBefore)).toBe(false);
  });

  it("a string reasoning_content wins over a think block split out of the content", () => {
    const text = tokenizer.renderChatTemplate(
      [
        { role: "user", content: "q" },
        { role: "assistant", content: "<think>\nfrom content\n</think>\n\nreply", reasoning_content: "from field" },
      ],
      { kwargs: { clear_thinking: false } },
    );
    expect(text).toContain("<think>\nfrom field\n</think>\n\n<think>\nfrom content\n</think>\n\nreply");
  });

  it("strips only newlines where Python's str.strip('\\n') would (spaces survive)", () => {
    expect(stripNewlines("\n\n  a \n", "both")).toBe("  a ");
    expect(stripNewlines("\n a\n", "left")).toBe(" a\n");
    expect(stripNewlines("\n a\n\n", "right")).toBe("\n a");
    const text = tokenizer.renderChatTemplate(
      [
        { role: "user", content: "q" },
        { role: "assistant", content: "\n  indented reply", reasoning_content: "\n  spaced \n" },
      ],
      { kwargs: { clear_thinking: false } },
    );
    expect(text).toContain("<think>\n  spaced \n</think>\n\n  indented reply<|im_end|>");
  });
});
