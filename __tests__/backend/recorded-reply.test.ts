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

/** Families whose reasoning parser splits reasoning out of the content (minimax-append-think keeps it in, by design). */
const SPLITTING = titoFamilyNames().filter((name) => {
  const { formats } = resolveMockFormats({ titoModel: name });
  return formats.reasoning !== null && formats.reasoning.name !== "minimax-append-think";
});

describe.each(SPLITTING)("family %s", (family) => {
  const { formats } = resolveMockFormats({ titoModel: family });
  test.each(cases)("%s round-trips", (_name, parts) => {
    const text = writeRecordedReply(parts, formats);
    const split = formats.reasoning!.parse(text, formats.reasoningOpenedByPrompt);
    const parsed = formats.toolCalls.parse(split.content, tools);
    expect({
      // a block the prompt opened comes back empty or as none, by family: both mean no reasoning
      reasoning: split.reasoning === "" ? null : split.reasoning,
      content: parts.calls.length > 0 ? parsed.content : split.content,
      calls: parsed.calls.map((call) => ({ name: call.name, arguments: JSON.parse(call.arguments) as unknown })),
    }).toEqual({
      reasoning: parts.reasoning,
      // qwen3_coder's detector keeps the blank line the model writes between its lead and the calls (normal_text)
      content: formats.toolCalls.name === "qwen3_coder" && parts.calls.length > 0 && parts.content !== "" ? `${parts.content}\n\n` : parts.content,
      calls: parts.calls,
    });
  });
});

test("minimax-append-think keeps the reasoning in the content, its <think> put back, as SGLang does", () => {
  const { formats } = resolveMockFormats({ titoModel: "minimax_m25" });
  const text = writeRecordedReply({ content: "Yes.", reasoning: "Checked.", calls: [] }, formats);
  expect(formats.reasoning!.parse(text, true)).toEqual({ reasoning: null, content: "<think>Checked.\n</think>\n\nYes." });
});

test("a family without a reasoning parser gets Qwen3's <think> block, left in the content as SGLang leaves it", () => {
  const { formats } = resolveMockFormats({ titoModel: "default" });
  expect(formats.reasoning).toBeNull();
  expect(writeRecordedReply({ content: "Lima.", reasoning: "Capital of Peru.", calls: [] }, formats)).toBe("<think>\nCapital of Peru.\n</think>\n\nLima.");
  expect(writeRecordedReply({ content: "Lima.", reasoning: null, calls: [] }, formats)).toBe("Lima.");
});
