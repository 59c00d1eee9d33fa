// Recorded assistant messages written in each family's wire format parse back to the same message with SGLang's
// parsers (the mock's reasoning detector, then its tool-call detector): content, reasoning, parallel calls.
import { describe, expect, test } from "@jest/globals";
import { resolveMockFormats } from "../../src/backend/mock-model";
import { writeRecordedReply, type RecordedAssistantParts } from "../../src/backend/recorded-reply";
import { titoFamilyNames } from "../../src/tokenizer/families/registry";

const tools = ["get_weather", "search_docs"].map((name) => ({
  type: "function",
  function: { name, parameters: { type: "object", properties: { location: { type: "string" }, query: { type: "string" }, limit: { type: "integer" } } } },
}));

const cases: Array<[string, RecordedAssistantParts]> = [
  ["plain content", { content: "Oslo is 4 °C and rainy.", reasoning: null, calls: [] }],
  ["reasoning then content", { content: "Yes, 223 is prime.", reasoning: "No prime up to 14 divides 223.", calls: [] }],
  [
    "parallel calls with a lead and reasoning",
    {
      content: "Checking both.",
      reasoning: "Two cities, two calls.",
      calls: [
        { name: "get_weather", arguments: { location: "Reykjavík" } },
        { name: "search_docs", arguments: { query: "climate 🌧", limit: 3 } },
      ],
    },
  ],
  ["a call with empty content", { content: "", reasoning: null, calls: [{ name: "get_weather", arguments: { location: "Lima" } }] }],
];

describe.each(titoFamilyNames().filter((name) => resolveMockFormats({ titoModel: name }).formats.reasoning !== null))("family %s", (family) => {
  const { formats } = resolveMockFormats({ titoModel: family });
  test.each(cases)("%s round-trips", (_name, parts) => {
    const text = writeRecordedReply(parts, formats);
    const split = formats.reasoning!.parse(text, formats.reasoningOpenedByPrompt);
    const parsed = formats.toolCalls.parse(split.content, tools);
    expect({
      reasoning: split.reasoning,
      content: parts.calls.length > 0 ? parsed.content : split.content,
      calls: parsed.calls.map((call) => ({ name: call.name, arguments: JSON.parse(call.arguments) as unknown })),
    }).toEqual({
      // a prompt-opened block always yields a reasoning, empty when the message had none
      reasoning: parts.reasoning ?? (formats.reasoningOpenedByPrompt ? "" : null),
      // qwen3_coder's detector keeps the blank line the model writes between its lead and the calls (normal_text)
      content: formats.toolCalls.name === "qwen3_coder" && parts.calls.length > 0 && parts.content !== "" ? `${parts.content}\n\n` : parts.content,
      calls: parts.calls,
    });
  });
});

test("a family without a reasoning parser gets Qwen3's <think> block, left in the content as SGLang leaves it", () => {
  const { formats } = resolveMockFormats({ titoModel: "default" });
  expect(formats.reasoning).toBeNull();
  expect(writeRecordedReply({ content: "Lima.", reasoning: "Capital of Peru.", calls: [] }, formats)).toBe("<think>\nCapital of Peru.\n</think>\n\nLima.");
  expect(writeRecordedReply({ content: "Lima.", reasoning: null, calls: [] }, formats)).toBe("Lima.");
});
