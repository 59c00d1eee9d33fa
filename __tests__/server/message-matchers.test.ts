// The three built-in history matchers and the append-only check (pure).
import {
  assertAppendOnly,
  looseToolCallMessageMatches,
  matchedPrefixLength,
  resolveMessageMatcher,
  roleContentOnlyMessageMatches,
  SessionHttpError,
  strictMessageMatches,
} from "../../src/server";
import type { ChatMessage } from "../../src/tokenizer/types";
import { PyBigInt, PyFloat } from "../../src/wire/py-json";

const call = (args: string, extra: Record<string, unknown> = {}) => ({
  id: "call00000",
  type: "function" as const,
  function: { name: "get_weather", arguments: args },
  ...extra,
});
const assistant = (args: string, extra: Record<string, unknown> = {}): ChatMessage => ({ role: "assistant", content: "", tool_calls: [call(args, extra)] });

describe("strict", () => {
  test("null, empty string and empty list are one empty value", () => {
    expect(strictMessageMatches({ role: "assistant", content: null, tool_calls: [] }, { role: "assistant", content: "", tool_calls: null })).toBe(true);
    expect(strictMessageMatches({ role: "assistant", content: "" }, { role: "assistant" })).toBe(true);
    expect(strictMessageMatches({ role: "assistant", content: " " }, { role: "assistant", content: "" })).toBe(false);
  });

  test("tool-call index and client extras are ignored; everything template-relevant counts", () => {
    expect(
      strictMessageMatches(assistant('{"location": "Beijing"}', { index: 0 }), { ...assistant('{"location": "Beijing"}'), provider_specific_fields: { x: 1 } }),
    ).toBe(true);
    expect(strictMessageMatches(assistant('{"location": "Beijing"}'), assistant('{"location":"Beijing"}'))).toBe(false);
    expect(strictMessageMatches({ role: "user", content: "a" }, { role: "system", content: "a" })).toBe(false);
    expect(strictMessageMatches({ role: "assistant", content: "a", reasoning_content: "r" }, { role: "assistant", content: "a" })).toBe(false);
    expect(strictMessageMatches({ role: "assistant", content: "a", name: "x" }, { role: "assistant", content: "a", name: "y" })).toBe(true);
  });

  test("object key order does not matter in structured content", () => {
    const a = { role: "user", content: [{ type: "text", text: "hi" }] };
    const b = { role: "user", content: [{ text: "hi", type: "text" }] };
    expect(strictMessageMatches(a, b)).toBe(true);
  });
});

describe("loose_tool_call", () => {
  test("tool-call arguments compare as parsed JSON objects", () => {
    expect(looseToolCallMessageMatches(assistant('{"location": "Beijing", "unit": "c"}'), assistant('{"unit":"c","location":"Beijing"}'))).toBe(true);
    expect(
      looseToolCallMessageMatches(assistant('{"location": "Beijing"}'), {
        role: "assistant",
        content: "",
        tool_calls: [{ ...call(""), function: { name: "get_weather", arguments: { location: "Beijing" } } }],
      }),
    ).toBe(true);
    expect(looseToolCallMessageMatches(assistant('{"location": "Beijing"}'), assistant('{"location": "Shanghai"}'))).toBe(false);
  });

  test("ids, names, other fields and invalid JSON still count", () => {
    expect(looseToolCallMessageMatches(assistant('{"a": 1}'), { ...assistant('{"a":1}'), tool_calls: [{ ...call('{"a":1}'), id: "other" }] })).toBe(false);
    expect(looseToolCallMessageMatches(assistant("{not json"), assistant("{not  json"))).toBe(false);
    expect(looseToolCallMessageMatches(assistant("{not json"), assistant("{not json"))).toBe(true);
    expect(looseToolCallMessageMatches({ ...assistant('{"a": 1}'), content: "x" }, assistant('{"a":1}'))).toBe(false);
  });
});

describe("role_content_only", () => {
  test("only role and content matter", () => {
    expect(roleContentOnlyMessageMatches(assistant('{"a": 1}'), { role: "assistant", content: null, tool_calls: [call("{}")] })).toBe(true);
    expect(roleContentOnlyMessageMatches({ role: "user", content: "a" }, { role: "user", content: "b" })).toBe(false);
  });
});

test("resolveMessageMatcher selects by name and refuses unknown names", () => {
  expect(resolveMessageMatcher("strict")).toBe(strictMessageMatches);
  expect(resolveMessageMatcher("loose_tool_call")).toBe(looseToolCallMessageMatches);
  expect(resolveMessageMatcher("role_content_only")).toBe(roleContentOnlyMessageMatches);
  expect(() => resolveMessageMatcher("fuzzy" as never)).toThrow(
    /unknown message matcher "fuzzy"; use one of strict, loose_tool_call, split_assistant_turn, role_content_only/,
  );
});

// mirrors miles/utils/chat_template_utils/message_matcher_hub/funcs.py `_validated` (texts) and
// tests/fast/router/test_session_message_matcher.py (a broken matcher is a configuration error, never a match)
test("a custom matcher must return a boolean and not throw; a broken one is a 500 with Python's text", () => {
  const custom = resolveMessageMatcher((a, b) => a.content === b.content);
  expect(custom({ role: "user", content: "a" }, { role: "system", content: "a" })).toBe(true);
  expect(custom({ role: "user", content: "a" }, { role: "user", content: "b" })).toBe(false);
  const truthy = resolveMessageMatcher((() => "yes") as never);
  expect(() => truthy({ role: "user", content: "a" }, { role: "user", content: "b" })).toThrow(
    expect.objectContaining({ status: 500, message: "session message matcher must return bool, got str" }),
  );
  const throwing = resolveMessageMatcher(function brittle() {
    throw new Error("cannot compare");
  });
  expect(() => throwing({ role: "user", content: "a" }, { role: "user", content: "a" })).toThrow(
    expect.objectContaining({ status: 500, message: "session message matcher raised an exception" }),
  );
});

test("matchedPrefixLength and assertAppendOnly", () => {
  const stored: ChatMessage[] = [
    { role: "user", content: "a" },
    { role: "assistant", content: "b" },
  ];
  expect(
    matchedPrefixLength(
      stored,
      [
        { role: "user", content: "a" },
        { role: "assistant", content: "c" },
      ],
      strictMessageMatches,
    ),
  ).toBe(1);
  const roles = new Set(["user", "tool"]);
  expect(() => assertAppendOnly(stored, [...stored, { role: "tool", content: "t" }], roles, strictMessageMatches)).not.toThrow();
  const bad = () => assertAppendOnly(stored, [...stored, { role: "system", content: "s" }], roles, strictMessageMatches);
  expect(bad).toThrow(SessionHttpError);
  expect(bad).toThrow(
    "appended message at index 2 has role='system', allowed=frozenset({'user', 'tool'}); the selected TITO fixed template does not support appending this role",
  );
  expect(() => assertAppendOnly(stored, [stored[0]], roles, strictMessageMatches)).toThrow(
    /^\('new messages \(1\) are fewer than stored messages \(2\)', \[\{'role': 'user', 'content': 'a'\}\], /,
  );
  expect(() => assertAppendOnly(stored, [stored[0], { role: "assistant", content: "x" }], roles, strictMessageMatches)).toThrow(
    "message mismatch at index 1 (role: stored=assistant, new=assistant). Diffs: {'content': {'stored': \"'b'\", 'new': \"'x'\"}}; the selected TITO fixed template does not support appending this role",
  );
});

describe("loose_tool_call with Python's exact JSON semantics", () => {
  const withArguments = (args: unknown): ChatMessage =>
    ({ role: "assistant", content: "", tool_calls: [{ id: "c0", type: "function", function: { name: "f", arguments: args } }] }) as ChatMessage;
  const loose = (a: unknown, b: unknown): boolean => looseToolCallMessageMatches(withArguments(a), withArguments(b));

  // mirrors tests/fast/utils/chat_template_utils/test_message_matcher_hub.py::test_loose_tool_call_preserves_json_types_values_and_array_order
  test.each([
    ['{"value":true}', '{"value":1}'],
    ['{"value":false}', '{"value":0}'],
    ['{"value":null}', '{"value":"null"}'],
    ['{"value":[1,2]}', '{"value":[2,1]}'],
    ['{"value":0.1}', '{"value":0.10000000000000001}'],
    ['{"value":9007199254740993}', '{"value":9007199254740992}'],
  ])("%s does not match %s", (a, b) => {
    expect(loose(a, b)).toBe(false);
    expect(loose(b, a)).toBe(false);
  });

  // mirrors test_message_matcher_hub.py::test_loose_tool_call_normalizes_nested_json_objects_without_mutating_array_order
  // and ::test_loose_tool_call_preserves_large_finite_json_numbers (numbers compared as exact decimals)
  test.each([
    ['{"a":1,"b":{"c":[1.0,"é"]}}', '{ "b" : {"c": [1, "\\u00e9"]}, "a": 1.00 }'],
    ['{"value":1e999}', '{"value":10e998}'],
    ['{"value":123456789012345678901234567890}', '{"value": 1.23456789012345678901234567890e29}'],
    ['{"value":-0}', '{"value":0.0}'],
    ['{"10":1,"2":2}', '{"2":2,"10":1}'],
  ])("%s matches %s", (a, b) => {
    expect(loose(a, b)).toBe(true);
  });

  // mirrors test_message_matcher_hub.py::test_loose_tool_call_invalid_or_non_object_arguments_use_type_sensitive_raw_comparison
  test.each([
    ['{"x":1,"x":2}', '{"x":1, "x":2}'],
    ['{"x":NaN}', '{"x": NaN}'],
    ['{"x":Infinity}', '{"x": Infinity}'],
    ["[]", "[ ]"],
    ["1", "1.0"],
    [" ", "{}"],
  ])("%s is compared raw with %s (no match)", (a, b) => {
    expect(loose(a, b)).toBe(false);
  });

  test("duplicate keys: the identical raw text still matches, as Python's raw comparison does", () => {
    expect(loose('{"x":1,"x":2}', '{"x":1,"x":2}')).toBe(true);
  });

  test("arguments given as parsed objects keep Python's int/float/bool types", () => {
    expect(loose({ v: new PyFloat(1) }, '{"v": 1}')).toBe(true);
    expect(loose({ v: true }, '{"v": 1}')).toBe(false);
    expect(loose({ v: new PyBigInt(2n ** 64n) }, '{"v": 18446744073709551616}')).toBe(true);
  });

  // mirrors miles/utils/chat_template_utils/message_matcher_hub/funcs.py::strict_message_matches (Python ==)
  test("strict matching uses Python equality: 1 == 1.0 == True", () => {
    const a: ChatMessage = { role: "assistant", content: "", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: { v: 1 } } }] };
    const b: ChatMessage = {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: { v: new PyFloat(1) } } }],
    } as unknown as ChatMessage;
    const c: ChatMessage = { role: "assistant", content: "", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: { v: true } } }] };
    expect(strictMessageMatches(a, b)).toBe(true);
    expect(strictMessageMatches(a, c)).toBe(true);
  });
});
