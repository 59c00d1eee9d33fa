// A checkpoint's own template renders as in transformers' environment: Python's tojson (every argument form),
// str.strip(chars), the special-token variables, raise_exception's text and miles' tool-format fallback.
// mirrors transformers' chat-template environment (tojson = json.dumps(ensure_ascii=False, ...), raise_exception,
// strftime_now) and miles/utils/chat_template_utils/template.py::apply_chat_template (tool format fallback).
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { ChatTemplateError, NativeChatTemplate, specialTokenVariables, type ChatMessage } from "../../src/tokenizer";
import { pythonMissing, runPythonScript } from "../python/python3";

const missing = pythonMissing(["jinja2"]);
if (missing !== null) console.warn(`native-template cross-check skipped: ${missing} (apt-get install -y python3-jinja2)`);
const testWithPython = missing === null ? test : test.skip;

const TEMPLATE = [
  "{{ bos_token }}{% for m in messages %}",
  "<{{ m.role }}>{{ m.content.strip('x. ') }}|{{ m.content.lstrip('ab') }}|{{ m.content.rstrip() }}|{{ m.content | tojson }}",
  "{% for c in (m.tool_calls or []) %}",
  "[{{ c.function.arguments | tojson }}][{{ c.function.arguments | tojson(indent=2) }}][{{ c.function.arguments | tojson(sort_keys=true) }}]",
  "[{{ c.function.arguments | tojson(ensure_ascii=true) }}][{{ c.function.arguments | tojson(separators=(',', ':')) }}]",
  "{% endfor %}{% endfor %}{% if tools %}{{ tools | tojson }}{% endif %}{{ eos_token }}",
].join("");

/** Values Python and our renderer spell the same (no integral floats, no integer-like keys: see PROTOCOL's deviations). */
const value: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.integer({ min: -100_000, max: 100_000 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
    fc.constantFrom(0.1, 1e-7, 2.5e-5, 1.5e300, -3.25),
    fc.boolean(),
    fc.constant(null),
    fc.string({ unit: "grapheme", maxLength: 8 }),
    fc.array(tie("v"), { maxLength: 3 }),
    fc.dictionary(fc.stringMatching(/^[a-z_][a-z0-9_]{0,6}$/), tie("v"), { maxKeys: 3 }),
  ),
})).v;

const content = fc.oneof(fc.string({ unit: "grapheme", maxLength: 12 }), fc.constantFrom("x. padded .x", "abba cab", "  spaced \n", "ünïcödé ✓"));

const conversation = fc.record({
  messages: fc.array(
    fc.record({
      role: fc.constantFrom("user", "assistant", "tool"),
      content,
      args: fc.option(fc.dictionary(fc.stringMatching(/^[a-z_][a-z0-9_]{0,6}$/), value, { maxKeys: 4 }), { nil: undefined }),
    }),
    { minLength: 1, maxLength: 4 },
  ),
});

describe("a checkpoint template in transformers' environment", () => {
  testWithPython("150 random conversations render to the bytes Python's Jinja2 renders (tojson forms, strip(chars))", () => {
    const cases = fc.sample(conversation, { numRuns: 150, seed: 26 }).map(({ messages }) =>
      messages.map(({ role, content: text, args }): ChatMessage => {
        const message: ChatMessage = { role, content: text };
        if (role === "assistant" && args !== undefined)
          message.tool_calls = [{ id: "c", type: "function", function: { name: "f", arguments: JSON.stringify(args) } }];
        return message;
      }),
    );
    const variables = specialTokenVariables({ bos_token: { content: "<s>", special: true }, eos_token: "</s>", unk_token: null });
    const tools = [{ type: "function", function: { name: "f", description: "ß", parameters: { type: "object", properties: {} } } }];
    const python = JSON.parse(
      runPythonScript(
        "render_native_qwen3.py",
        JSON.stringify({
          template: TEMPLATE,
          variables,
          cases: cases.map((messages) => JSON.stringify({ messages, tools, add_generation_prompt: false, kwargs: {} })),
        }),
      ),
    ) as Array<string | { error: string }>;
    const template = new NativeChatTemplate(TEMPLATE, "/somewhere/chat_template.jinja", variables);
    cases.forEach((messages, index) => {
      const theirs = python[index];
      if (typeof theirs !== "string") throw new Error(`case ${index}: Python failed: ${theirs.error}`);
      expect(template.render(messages, { tools })).toBe(theirs);
    });
  });

  // mirrors transformers' tojson (json.dumps(ensure_ascii=False)) on json.loads'ed arguments: Python ints are exact
  testWithPython("tool-call arguments with integers beyond 2^53 render as Python's json.dumps spells them (digits as written)", () => {
    const template = "{% for m in messages %}{% for c in (m.tool_calls or []) %}[{{ c.function.arguments | tojson }}]{% endfor %}{% endfor %}";
    const args = '{"id": 123456789012345678901234567890, "n": 9007199254740993, "neg": -9007199254740993, "safe": 42, "f": 2.0, "big_f": 1e20}';
    const messages: ChatMessage[] = [
      { role: "user", content: "x" },
      { role: "assistant", content: "", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: args } }] },
    ];
    const python = JSON.parse(
      runPythonScript(
        "render_native_qwen3.py",
        JSON.stringify({ template, variables: {}, cases: [JSON.stringify({ messages, tools: null, add_generation_prompt: false, kwargs: {} })] }),
      ),
    ) as string[];
    const ours = new NativeChatTemplate(template, "/somewhere/chat_template.jinja", {}).render(messages, {});
    expect(ours).toBe(python[0]);
    expect(ours).toContain('"id": 123456789012345678901234567890, "n": 9007199254740993, "neg": -9007199254740993');
  });

  test("special-token variables are transformers' special_tokens_map: AddedToken objects give their content, unset ones are left out", () => {
    expect(
      specialTokenVariables({
        bos_token: { __type: "AddedToken", content: "<｜begin▁of▁sentence｜>" },
        eos_token: "<|eot_id|>",
        pad_token: null,
        additional_special_tokens: ["<a>", { content: "<b>" }],
      }),
    ).toEqual({ bos_token: "<｜begin▁of▁sentence｜>", eos_token: "<|eot_id|>", additional_special_tokens: ["<a>", "<b>"] });
  });

  test("raise_exception's text reaches the error; the message names the template file only", () => {
    const template = new NativeChatTemplate("{{ raise_exception('Conversation roles must alternate') }}", "/secret/install/path/chat_template.jinja");
    expect(() => template.render([{ role: "user", content: "x" }])).toThrow(ChatTemplateError);
    expect(() => template.render([{ role: "user", content: "x" }])).toThrow(
      "rendering chat template chat_template.jinja failed: Conversation roles must alternate",
    );
  });

  test("a template failing on Tool dumps is rendered once more with the bare functions (miles' tool format fallback)", () => {
    const template = new NativeChatTemplate(
      "{% for t in tools %}{% if t.function is defined %}{{ raise_exception('bare functions only') }}{% endif %}{{ t.name }};{% endfor %}",
      "t.jinja",
    );
    expect(template.render([], { tools: [{ type: "function", function: { name: "get_weather" } }] })).toBe("get_weather;");
    const always = new NativeChatTemplate("{{ raise_exception('never') }}", "t.jinja");
    expect(() => always.render([], { tools: [{ type: "function", function: { name: "f" } }] })).toThrow(
      "rendering chat template t.jinja failed (tool format fallback): never",
    );
  });

  test("only assistant content None becomes '' (normalize_tool_arguments); arguments that are not JSON are refused naming the call", () => {
    const template = new NativeChatTemplate("{% for m in messages %}{{ m.role }}={{ m.content is none }};{% endfor %}", "t.jinja");
    expect(
      template.render([
        { role: "user", content: null },
        { role: "assistant", content: null },
      ]),
    ).toBe("user=true;assistant=false;");
    expect(() => template.render([{ role: "assistant", content: "", tool_calls: [{ function: { name: "f", arguments: "{oops" } }] }])).toThrow(
      /messages\[0\]\.tool_calls\[0\]\.function\.arguments is not valid JSON/,
    );
  });
});
