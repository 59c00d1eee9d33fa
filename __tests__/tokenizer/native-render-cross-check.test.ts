// Cross-check of prompts against Python: random tool-bearing conversations rendered by our renderer and by Jinja2
// with the native Qwen3 template in transformers' environment must be the same bytes (skips without python3+jinja2).
// mirrors miles/utils/chat_template_utils/template.py::apply_chat_template (normalize_tool_arguments "dict",
// extract_tool_dicts) and transformers' chat-template environment (trim_blocks, lstrip_blocks, json.dumps tojson).
import { describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { defaultTokenizerDirectory, qwen3ChatTemplate, type ChatMessage, type ToolSpec } from "../../src/tokenizer";
import { dumpsPy, parsePyJson, PY_DEFAULT_JSON, PY_RESPONSE_JSON, PyBigInt, PyFloat, rememberKeyOrder } from "../../src/wire/py-json";
import { pythonMissing, runPythonScript } from "../python/python3";

const CONVERSATIONS = 240;
const missing = pythonMissing(["jinja2"]);
if (missing !== null) console.warn(`native-render cross-check skipped: ${missing} (apt-get install -y python3-jinja2)`);
const testWithPython = missing === null ? test : test.skip;

/** JSON values with what Python keeps and JS would lose: integral floats, big ints, -0.0, integer-like keys. */
const pyValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.integer({ min: -1000, max: 100_000 }),
    fc.integer({ min: -1000, max: 1000 }).map((n) => new PyFloat(n)),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Number.isInteger(d) && !Object.is(d, -0) ? new PyFloat(d) : d)),
    fc.constantFrom(0.1, 1e-7, 1e16, 1e22, -0, 2.5e-5, 123456.789, 0.30000000000000004),
    fc.bigInt({ min: 2n ** 53n, max: 2n ** 80n }).map((b) => new PyBigInt(b)),
    fc.boolean(),
    fc.constant(null),
    fc.string({ unit: "grapheme", maxLength: 8 }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc
      .uniqueArray(fc.tuple(fc.oneof(fc.string({ unit: "grapheme", maxLength: 6 }), fc.nat({ max: 50 }).map(String)), tie("value")), {
        maxLength: 4,
        selector: (entry) => entry[0],
      })
      .map(orderedObject),
  ),
})).value;

function orderedObject(entries: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  rememberKeyOrder(
    object,
    entries.map(([key]) => key),
  );
  return object;
}

const text = fc.string({ unit: "grapheme", maxLength: 20 });
const toolName = fc.stringMatching(/^[a-z_][a-z0-9_]{0,10}$/);

const toolArb = fc
  .record({
    name: toolName,
    description: fc.option(text, { nil: undefined }),
    parameters: fc.uniqueArray(fc.tuple(fc.oneof(toolName, fc.nat({ max: 30 }).map(String)), pyValue), { maxLength: 4, selector: (e) => e[0] }),
    strict: fc.option(fc.boolean(), { nil: undefined }),
    wrapped: fc.boolean(),
  })
  .map(({ name, description, parameters, strict, wrapped }) => {
    const fn: Record<string, unknown> = { name };
    if (description !== undefined) fn.description = description;
    fn.parameters = orderedObject([
      ["type", "object"],
      ["properties", orderedObject(parameters)],
    ]);
    if (strict !== undefined) fn.strict = strict;
    return wrapped ? { type: "function", function: fn } : fn;
  });

const argumentsArb = fc
  .uniqueArray(fc.tuple(fc.oneof(toolName, fc.nat({ max: 99 }).map(String)), pyValue), { maxLength: 5, selector: (e) => e[0] })
  .chain((entries) => fc.boolean().map((compact) => dumpsPy(orderedObject(entries), compact ? PY_RESPONSE_JSON : PY_DEFAULT_JSON)));

const toolRoundArb = fc.record({
  content: fc.oneof(fc.constant(""), text),
  calls: fc.array(fc.record({ name: toolName, arguments: argumentsArb }), { minLength: 1, maxLength: 2 }),
  results: fc.array(text, { minLength: 1, maxLength: 2 }),
});

const conversationArb = fc.record({
  system: fc.option(text, { nil: undefined }),
  user: text,
  rounds: fc.array(toolRoundArb, { minLength: 1, maxLength: 3 }),
  closing: fc.option(text, { nil: undefined }),
  tools: fc.array(toolArb, { minLength: 1, maxLength: 3 }),
  addGenerationPrompt: fc.boolean(),
  enableThinking: fc.option(fc.boolean(), { nil: undefined }),
  ensureAscii: fc.boolean(),
});

/** The request-body text of one conversation, as a client would send it. */
function caseText(conversation: typeof conversationArb extends fc.Arbitrary<infer T> ? T : never): string {
  const messages: Record<string, unknown>[] = [];
  if (conversation.system !== undefined) messages.push({ role: "system", content: conversation.system });
  messages.push({ role: "user", content: conversation.user });
  conversation.rounds.forEach((round, r) => {
    messages.push({
      role: "assistant",
      content: round.content,
      tool_calls: round.calls.map((call, c) => ({ id: `call_${r}_${c}`, type: "function", function: { name: call.name, arguments: call.arguments } })),
    });
    for (const result of round.results) messages.push({ role: "tool", content: result });
  });
  if (conversation.closing !== undefined) messages.push({ role: "user", content: conversation.closing });
  const kwargs = conversation.enableThinking === undefined ? {} : { enable_thinking: conversation.enableThinking };
  const body = { messages, tools: conversation.tools, add_generation_prompt: conversation.addGenerationPrompt, kwargs };
  return dumpsPy(body, conversation.ensureAscii ? PY_DEFAULT_JSON : PY_RESPONSE_JSON);
}

describe("native Qwen3 template under Python's Jinja2 (transformers' environment)", () => {
  testWithPython(`${CONVERSATIONS} random tool-bearing conversations render to the same bytes`, () => {
    const cases = fc.sample(conversationArb, { numRuns: CONVERSATIONS, seed: 1207 }).map(caseText);
    const config = JSON.parse(fs.readFileSync(path.join(defaultTokenizerDirectory(), "tokenizer_config.json"), "utf8")) as { chat_template: string };
    const python = JSON.parse(runPythonScript("render_native_qwen3.py", JSON.stringify({ template: config.chat_template, cases }))) as Array<
      string | { error: string }
    >;
    expect(python).toHaveLength(CONVERSATIONS);
    const template = qwen3ChatTemplate();
    let withFloats = 0;
    cases.forEach((source, index) => {
      const body = parsePyJson(source) as { messages: ChatMessage[]; tools: ToolSpec[]; add_generation_prompt: boolean; kwargs: Record<string, unknown> };
      // clear_thinking true is the native template's behaviour (the servers pin false for append safety)
      const ours = template.render(body.messages, {
        tools: body.tools,
        addGenerationPrompt: body.add_generation_prompt,
        kwargs: { ...body.kwargs, clear_thinking: true },
      });
      const theirs = python[index];
      if (typeof theirs !== "string") throw new Error(`case ${index}: Python failed: ${theirs?.error}\n${source}`);
      if (ours !== theirs) throw new Error(`case ${index} differs:\n--- ours\n${ours}\n--- python\n${theirs}\n--- input\n${source}`);
      if (/\d\.0[,}\]]/.test(theirs)) withFloats += 1;
    });
    // the generator must actually exercise integral floats in the rendered tojson text
    expect(withFloats).toBeGreaterThan(CONVERSATIONS / 4);
  });
});
