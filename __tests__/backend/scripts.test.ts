// weatherScript over real HTTP with prompts rendered from the weather agent's own conversation steps.
// Each step must get its scripted reply and weight version; the most specific key wins when several match.
import { startMockBackend, weatherScript, echoScript, lastUserTurn, WEATHER_SCRIPT_REPLIES, type MockBackend } from "../../src/backend";
import { loadTokenizer } from "../../src/tokenizer/load";
import type { ChatMessage, Tokenizer } from "../../src/tokenizer/types";
import {
  ASSISTANT_INPUT_FOLLOWUP_TEXT,
  ASSISTANT_INPUT_TEXTS,
  FORCE_FINAL_TEXT,
  MOCK_TOOL_RESULTS,
  SYSTEM_REMINDER_TEXT,
  USER_FOLLOWUP_TEXT,
  WEATHER_TOOLS,
  buildInitialMessages,
} from "../../src/agent/texts";
import { TestClient, firstChoice } from "./http-client";

let tokenizer: Tokenizer;
let backend: MockBackend;
let client: TestClient;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  backend = await startMockBackend({ tokenizer, process: weatherScript });
  client = new TestClient(backend.url);
});

afterAll(async () => {
  await client.close();
  await backend.close();
});

/** Sends one chat call and appends the assistant reply to `messages` (tool-call arguments kept as strings). */
async function step(messages: ChatMessage[]): Promise<{ weight: string; content: string; toolCalls: any[] | null }> {
  const choice = firstChoice(await client.post("/v1/chat/completions", { messages, tools: WEATHER_TOOLS }));
  const message = choice["message"];
  messages.push({ role: "assistant", content: message["content"], ...(message["tool_calls"] ? { tool_calls: message["tool_calls"] } : {}) });
  return { weight: choice["meta_info"]["weight_version"], content: message["content"], toolCalls: message["tool_calls"] };
}

const toolResult = (messages: ChatMessage[], n: number): void => {
  const last = messages[messages.length - 1];
  messages.push({ role: "tool", content: MOCK_TOOL_RESULTS[n], tool_call_id: (last.tool_calls ?? [])[0]?.id });
};

describe("weatherScript", () => {
  test("the scripted weather run gets w0..w4, w7, w8 in order, tool calls included", async () => {
    const messages = buildInitialMessages();
    const initial = await step(messages);
    expect(initial.weight).toBe("w0");
    expect(initial.toolCalls?.[0].function).toEqual({ name: "get_weather", arguments: '{"location": "Beijing"}' });

    toolResult(messages, 0);
    const beijing = await step(messages);
    expect(beijing).toMatchObject({ weight: "w1", toolCalls: null });
    expect(beijing.content).toContain("22 degrees Celsius and sunny");

    messages.push({ role: "user", content: USER_FOLLOWUP_TEXT });
    const shanghaiCall = await step(messages);
    expect(shanghaiCall.weight).toBe("w2");
    expect(shanghaiCall.toolCalls?.[0].function.arguments).toBe('{"location": "Shanghai"}');

    toolResult(messages, 1);
    expect((await step(messages)).weight).toBe("w3");

    messages.push({ role: "system", content: SYSTEM_REMINDER_TEXT });
    expect(await step(messages)).toMatchObject({ weight: "w4", content: "I will answer in one sentence." });

    messages.pop();
    messages.pop();
    messages.push({ role: "user", content: FORCE_FINAL_TEXT });
    const forced = await step(messages);
    expect(forced.weight).toBe("w7");
    expect(forced.content).toMatch(/^<final_answer>.*<\/final_answer>$/);

    messages.push(...ASSISTANT_INPUT_TEXTS.map((content) => ({ role: "assistant", content })));
    messages.push({ role: "user", content: ASSISTANT_INPUT_FOLLOWUP_TEXT });
    const final = await step(messages);
    expect(final.weight).toBe("w8");
    expect(final.content).toMatch(/^<final_answer>.*<\/final_answer>$/);
    expect(backend.requestLog).toHaveLength(7);
  });

  test("most specific key first: each key beats every less specific one also present", () => {
    const keys = [ASSISTANT_INPUT_FOLLOWUP_TEXT, FORCE_FINAL_TEXT, SYSTEM_REMINDER_TEXT, MOCK_TOOL_RESULTS[1], USER_FOLLOWUP_TEXT, MOCK_TOOL_RESULTS[0]];
    const weights = ["w8", "w7", "w4", "w3", "w2", "w1"];
    keys.forEach((key, rank) => {
      const prompt = [...keys.slice(rank)].reverse().join("\n");
      expect(weatherScript(prompt, {})).toMatchObject({ meta_info: { weight_version: weights[rank] } });
    });
    expect(weatherScript("anything else", {})).toMatchObject({ meta_info: { weight_version: "w0" } });
  });

  test("returns fresh copies: a caller mutating a reply does not change the script", () => {
    const first = weatherScript("", {}) as { text: string; meta_info: { weight_version: string } };
    first.meta_info.weight_version = "tampered";
    expect(weatherScript("", {})).toMatchObject({ meta_info: { weight_version: "w0" } });
    expect(WEATHER_SCRIPT_REPLIES.beijingCall.meta_info.weight_version).toBe("w0");
  });
});

describe("echoScript", () => {
  test("echoes the last user turn of a rendered prompt", async () => {
    const prompt = tokenizer.renderChatTemplate(
      [...buildInitialMessages(), { role: "assistant", content: "ok" }, { role: "user", content: "second question" }],
      { addGenerationPrompt: true },
    );
    expect(lastUserTurn(prompt)).toBe("second question");
    expect(await echoScript(prompt, {})).toEqual({ text: "echo: second question" });
  });
});
