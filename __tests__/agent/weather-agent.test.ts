// The weather agent against a scripted fake session endpoint on loopback: schedule, requests, failure modes.
// Every request body is recorded, so each test asserts exactly what the agent sent and in which order.
import {
  AgentChatError,
  ASSISTANT_INPUT_FOLLOWUP_TEXT,
  ASSISTANT_INPUT_TEXTS,
  buildInitialMessages,
  FORCE_FINAL_TEXT,
  MOCK_TOOL_RESULTS,
  runWeatherAgent,
  SYSTEM_REMINDER_TEXT,
  TOOL_CALL_FAILURE_TEXT,
  USER_FOLLOWUP_TEXT,
  WEATHER_TOOLS,
  WEATHER_USER_QUESTION,
  type AgentSampling,
} from "../../src/agent";
import { fullMessage, startFakeSessionEndpoint, type FakeSessionEndpoint, type Script, type ScriptedTurn } from "./fake-session-endpoint";

type Message = Record<string, unknown>;
const SAMPLING = { temperature: 0, seed: 20260803, max_tokens: 128 };

function lastMessage(body: Record<string, unknown>): Message {
  const messages = body.messages as Message[];
  return messages[messages.length - 1];
}

/** Calls the tool for the two city questions, answers in text otherwise; every turn's text names its call. */
const weatherScript: Script = (body, call) => {
  const last = lastMessage(body);
  if (last.role === "user" && last.content === WEATHER_USER_QUESTION) {
    return { content: `checking ${call}`, tool_calls: [{ id: `call_bj_${call}`, name: "get_weather", arguments: '{"location": "Beijing"}' }] };
  }
  if (last.role === "user" && last.content === USER_FOLLOWUP_TEXT) {
    return { content: `checking ${call}`, tool_calls: [{ id: `call_sh_${call}`, name: "get_weather", arguments: '{"location": "Shanghai"}' }] };
  }
  return { content: `turn ${call}` };
};

/** The folded (streamed) form of a scripted turn: tool calls without index. */
function streamedMessage(turn: ScriptedTurn): Message {
  const message = fullMessage(turn);
  if (Array.isArray(message.tool_calls)) {
    message.tool_calls = (message.tool_calls as Message[]).map(({ index: _index, ...rest }) => rest);
  }
  return message;
}

/** The 9 request message lists the agent must send with the weather script, for a given message form. */
function expectedConversations(asMessage: (turn: ScriptedTurn) => Message): Message[][] {
  const turn = (call: number, messages: Message[]): Message => asMessage(weatherScript({ messages }, call) as ScriptedTurn);
  const out: Message[][] = [];
  let messages: Message[] = buildInitialMessages();
  out.push(messages); // 0 initial
  const a0 = turn(0, messages);
  messages = [...messages, a0, { role: "tool", content: MOCK_TOOL_RESULTS[0], tool_call_id: "call_bj_0" }];
  out.push(messages); // 1 tool result
  const a1 = turn(1, messages);
  messages = [...messages, a1, { role: "user", content: USER_FOLLOWUP_TEXT }];
  out.push(messages); // 2 user follow-up
  const a2 = turn(2, messages);
  messages = [...messages, a2, { role: "tool", content: MOCK_TOOL_RESULTS[1], tool_call_id: "call_sh_2" }];
  out.push(messages); // 3 tool result
  const a3 = turn(3, messages);
  messages = [...messages, a3, { role: "system", content: SYSTEM_REMINDER_TEXT }];
  out.push(messages); // 4 system reminder
  out.push(messages); // 5 rollback: turn 4 popped
  out.push(messages); // 6 rollback: turn 5 popped
  const a6 = turn(6, messages);
  messages = [...messages, a6, { role: "user", content: FORCE_FINAL_TEXT }];
  out.push(messages); // 7 force final
  const a7 = turn(7, messages);
  messages = [
    ...messages,
    a7,
    { role: "assistant", content: ASSISTANT_INPUT_TEXTS[0] },
    { role: "assistant", content: ASSISTANT_INPUT_TEXTS[1] },
    { role: "user", content: ASSISTANT_INPUT_FOLLOWUP_TEXT },
  ];
  out.push(messages); // 8 assistant input
  return out;
}

/** The agent's request spelling before its bodies were built from cached message JSON: the whole object stringified. */
function referenceBody(messages: Message[], sampling: Record<string, unknown>, stream: boolean): string {
  const body = { messages, tools: WEATHER_TOOLS, ...sampling };
  return JSON.stringify(stream ? { ...body, stream: true } : body);
}

const WEATHER_EVENTS = ["initial", "append_tool", "append_user", "append_tool", "append_system", "rollback", "rollback", "force_final", "append_assistant"];

describe("runWeatherAgent", () => {
  let endpoint: FakeSessionEndpoint | undefined;
  afterEach(async () => {
    await endpoint?.close();
    endpoint = undefined;
  });

  test("streams 9 calls with the exact schedule, folded messages and tool answers", async () => {
    endpoint = await startFakeSessionEndpoint(weatherScript);
    const result = await runWeatherAgent({ baseUrl: endpoint.baseUrl, sampling: SAMPLING, cycles: 1, toolCallFailureMode: "rollback" });
    expect(result).toStrictEqual({
      driver_events: WEATHER_EVENTS,
      rollback_count: 2,
      user_count: 2,
      system_count: 1,
      assistant_input_count: 2,
      tool_result_count: 2,
      tool_call_count: 2,
    });
    expect(endpoint.paths).toEqual(Array(9).fill("/sessions/fake/v1/chat/completions"));
    expect(endpoint.requests.map((body) => body.messages)).toStrictEqual(expectedConversations(streamedMessage));
    for (const body of endpoint.requests) {
      expect(body).toMatchObject({ stream: true, temperature: 0, seed: 20260803, max_tokens: 128 });
      expect(body.tools).toStrictEqual(WEATHER_TOOLS);
    }
    // byte for byte the old spelling, rollbacks included (the conversations are built here, not read back)
    expect(endpoint.rawBodies).toStrictEqual(expectedConversations(streamedMessage).map((messages) => referenceBody(messages, SAMPLING, true)));
  });

  test("non-stream mode sends no stream flag and appends the reply message verbatim", async () => {
    endpoint = await startFakeSessionEndpoint(weatherScript);
    const result = await runWeatherAgent({ baseUrl: `${endpoint.baseUrl}/`, stream: false });
    expect(result.driver_events).toEqual(WEATHER_EVENTS);
    expect(endpoint.requests.map((body) => body.messages)).toStrictEqual(expectedConversations(fullMessage));
    for (const body of endpoint.requests) expect("stream" in body).toBe(false);
    expect(endpoint.rawBodies).toStrictEqual(expectedConversations(fullMessage).map((messages) => referenceBody(messages, {}, false)));
  });

  test("replies with escapes, non-ASCII and lone surrogates are sent back in the old spelling, in both modes and with an index key", async () => {
    const odd = 'quote " backslash \\ newline \n tab \t é € 😀 lone \ud800 and \udc00 nul \u0000 <\u2028>';
    const script: Script = (body, call) => {
      const turn = weatherScript(body, call) as ScriptedTurn;
      return { ...turn, content: `${odd} ${call}`, reasoning_content: call % 2 === 0 ? `thinking ${odd}` : undefined };
    };
    const plain = { temperature: 0.5, stop: ["é", "\ud83d"], logit_bias: { "42": -1 }, nested: { "1": [null, true, 1e21, -0] } };
    // an array-index key sorts ahead of "messages" in the whole object: the writer must not split that body
    const indexKey = { temperature: 0, "7": "seven" };
    const runs: [boolean, Record<string, unknown>][] = [
      [true, plain],
      [false, plain],
      [true, indexKey],
    ];
    for (const [stream, sampling] of runs) {
      endpoint = await startFakeSessionEndpoint(script);
      await runWeatherAgent({ baseUrl: endpoint.baseUrl, sampling: sampling as AgentSampling, cycles: 2, stream, toolCallFailureMode: "append_user" });
      expect(endpoint.rawBodies.length).toBeGreaterThan(9);
      expect(endpoint.rawBodies.some((raw) => raw.includes("\\ud800") && raw.includes("😀"))).toBe(true);
      // each request read back and spelled as the old agent spelled the same objects
      expect(endpoint.rawBodies).toStrictEqual(endpoint.requests.map((body) => referenceBody(body.messages as Message[], sampling, stream)));
      await endpoint.close();
      endpoint = undefined;
    }
  });

  test("two cycles: 14 calls, the cycle repeats after the extra rollback, tool results keep cycling", async () => {
    // Calls a tool unless it has just been given a tool result, so every tool-result step finds a call.
    endpoint = await startFakeSessionEndpoint((body, call) =>
      lastMessage(body).role === "tool"
        ? { content: `turn ${call}` }
        : { content: "", tool_calls: [{ id: `call_${call}`, name: "get_weather", arguments: '{"location": "Beijing"}' }] },
    );
    const result = await runWeatherAgent({ baseUrl: endpoint.baseUrl, cycles: 2 });
    expect(endpoint.requests).toHaveLength(14);
    expect(result.driver_events).toEqual([
      ...WEATHER_EVENTS.slice(0, 7),
      "append_tool",
      "append_user",
      "append_tool",
      "append_system",
      "rollback",
      "force_final",
      "append_assistant",
    ]);
    expect(result.tool_result_count).toBe(4);
    expect(result.rollback_count).toBe(3);
    const toolMessages = (endpoint.requests[13].messages as Message[]).filter((m) => m.role === "tool");
    expect(toolMessages.map((m) => m.content)).toEqual(MOCK_TOOL_RESULTS.slice(0, 4));
    // Calls 4 and 5 were rolled back, so the third answered call is call 6.
    expect(toolMessages.map((m) => m.tool_call_id)).toEqual(["call_0", "call_2", "call_6", "call_8"]);
  });

  test("rollback failure mode pops the tool-less turn and retries, then gives up after 3 in a row", async () => {
    endpoint = await startFakeSessionEndpoint((_body, call) => ({ content: `no tool ${call}` }));
    const failure = runWeatherAgent({ baseUrl: endpoint.baseUrl, cycles: 2 });
    await expect(failure).rejects.toThrow(/step 9 tool_result: .*4 times in a row; the rollback fallback is capped at 3 consecutive retries/);
    // Calls: initial + steps 1..8 (the 4th failure at step 9 throws before calling).
    expect(endpoint.requests).toHaveLength(9);
    // Step 1 popped "no tool 0" and re-asked from the initial messages.
    expect(endpoint.requests[1].messages).toStrictEqual(buildInitialMessages());
  });

  test("a successful tool call resets the consecutive-rollback streak", async () => {
    // Tool calls only for the Shanghai follow-up: tool-result steps alternate failure / success.
    endpoint = await startFakeSessionEndpoint((body, call) =>
      lastMessage(body).content === USER_FOLLOWUP_TEXT ? weatherScript(body, call) : { content: `no tool ${call}` },
    );
    const result = await runWeatherAgent({ baseUrl: endpoint.baseUrl, cycles: 4 });
    const count = (name: string) => result.driver_events.filter((event) => event === name).length;
    expect(count("tool_call_failure_rollback")).toBe(4);
    expect(count("append_tool")).toBe(4);
    expect(result.rollback_count).toBe(4 + 5);
    expect(result.tool_call_count).toBe(4);
    // The first failure consumed step 1: the follow-up comes right after the re-asked opening.
    expect(result.driver_events.slice(0, 4)).toEqual(["initial", "tool_call_failure_rollback", "append_user", "append_tool"]);
  });

  test("append_tool failure mode splices a sentinel tool message", async () => {
    endpoint = await startFakeSessionEndpoint((_body, call) => ({ content: `no tool ${call}` }));
    const result = await runWeatherAgent({ baseUrl: endpoint.baseUrl, toolCallFailureMode: "append_tool" });
    expect(result.driver_events).toEqual([
      "initial",
      "tool_call_failure_append_tool",
      "append_user",
      "tool_call_failure_append_tool",
      "append_system",
      "rollback",
      "rollback",
      "force_final",
      "append_assistant",
    ]);
    expect(result.tool_result_count).toBe(0);
    expect(result.tool_call_count).toBe(0);
    expect(lastMessage(endpoint.requests[1])).toStrictEqual({ role: "tool", tool_call_id: "none", content: TOOL_CALL_FAILURE_TEXT });
  });

  test("append_user failure mode splices a user message and counts it", async () => {
    endpoint = await startFakeSessionEndpoint((_body, call) => ({ content: `no tool ${call}` }));
    const result = await runWeatherAgent({ baseUrl: endpoint.baseUrl, toolCallFailureMode: "append_user" });
    expect(result.driver_events[1]).toBe("tool_call_failure_append_user");
    expect(result.user_count).toBe(4); // 2 failure messages, the follow-up, the assistant-input request (force_final is not counted)
    expect(lastMessage(endpoint.requests[1])).toStrictEqual({ role: "user", content: TOOL_CALL_FAILURE_TEXT });
  });

  test("append_user is refused up front when the template does not allow user appends", async () => {
    endpoint = await startFakeSessionEndpoint(weatherScript);
    await expect(runWeatherAgent({ baseUrl: endpoint.baseUrl, toolCallFailureMode: "append_user", allowedAppendRoles: ["tool", "system"] })).rejects.toThrow(
      /"append_user" needs the "user" append role/,
    );
    expect(endpoint.requests).toHaveLength(0);
  });

  test("bad options are refused before any call", async () => {
    endpoint = await startFakeSessionEndpoint(weatherScript);
    const baseUrl = endpoint.baseUrl;
    await expect(runWeatherAgent({ baseUrl, toolCallFailureMode: "retry" as never })).rejects.toThrow(/unknown toolCallFailureMode "retry"/);
    await expect(runWeatherAgent({ baseUrl, sampling: { stream: false, tools: [] } })).rejects.toThrow(/sampling must not set tools, stream/);
    await expect(runWeatherAgent({ baseUrl, cycles: 0 })).rejects.toThrow(/cycles must be an integer >= 1/);
    await expect(runWeatherAgent({ baseUrl, sampling: [0.5] as never })).rejects.toThrow(
      "runWeatherAgent: sampling must be an object of chat-completion parameters, got an array",
    );
    await expect(runWeatherAgent({ baseUrl, stream: 1 as never })).rejects.toThrow("runWeatherAgent: stream must be true or false, got 1");
    expect(endpoint.requests).toHaveLength(0);
  });

  test("a failed chat call names the step, the status and the body", async () => {
    endpoint = await startFakeSessionEndpoint((body, call) =>
      call === 3 ? { status: 400, body: '{"error":"rollback too deep"}' } : weatherScript(body, call),
    );
    const failure = runWeatherAgent({ baseUrl: endpoint.baseUrl });
    await expect(failure).rejects.toBeInstanceOf(AgentChatError);
    await expect(failure).rejects.toMatchObject({ step: "step 3 tool_result", status: 400, body: '{"error":"rollback too deep"}' });
    await expect(failure).rejects.toThrow('step 3 tool_result chat call failed (status 400): {"error":"rollback too deep"}');
  });

  test("a stream without [DONE] or with the wrong content type is an error", async () => {
    endpoint = await startFakeSessionEndpoint(() => ({ omitDone: true }));
    await expect(runWeatherAgent({ baseUrl: endpoint.baseUrl })).rejects.toThrow(
      /initial chat call failed \(status 200\): SSE stream ended without data: \[DONE\]/,
    );
    await endpoint.close();
    endpoint = await startFakeSessionEndpoint(() => ({ status: 200, body: "{}", contentType: "application/json" }));
    await expect(runWeatherAgent({ baseUrl: endpoint.baseUrl })).rejects.toThrow(/expected text\/event-stream, got content-type "application\/json"/);
  });

  test.each([
    ["SSE data that is not JSON", true, "text/event-stream", "data: {oops\n\ndata: [DONE]\n\n", "SSE data is not JSON: {oops"],
    ["an event after [DONE]", true, "text/event-stream", 'data: [DONE]\n\ndata: {"late":1}\n\n', 'SSE event after [DONE]: {"late":1}'],
    [
      "a stream of plain completions",
      true,
      "text/event-stream",
      'data: {"object":"chat.completion","choices":[]}\n\ndata: [DONE]\n\n',
      "initial: SSE event 0 is not a chat.completion.chunk",
    ],
    ["a stream with no chunk", true, "text/event-stream", "data: [DONE]\n\n", "initial: the SSE stream held no chunk before [DONE]"],
    ["a JSON reply that is not JSON", false, "application/json", "<html>", "reply is not JSON: <html>"],
    ["a JSON reply without choices", false, "application/json", '{"id":"x"}', 'reply has no choices[0].message: {"id":"x"}'],
  ])("a malformed reply (%s) fails the initial call with status 200, naming the problem", async (_what, stream, contentType, body, message) => {
    endpoint = await startFakeSessionEndpoint(() => ({ status: 200, contentType, body }));
    const failure = runWeatherAgent({ baseUrl: endpoint.baseUrl, stream });
    await expect(failure).rejects.toMatchObject({ name: "AgentChatError", step: "initial", status: 200 });
    await expect(failure).rejects.toThrow(message);
    expect(endpoint.requests).toHaveLength(1);
  });

  test("an unreachable server is a transport error naming the step", async () => {
    endpoint = await startFakeSessionEndpoint(weatherScript);
    const baseUrl = endpoint.baseUrl;
    await endpoint.close();
    endpoint = undefined;
    await expect(runWeatherAgent({ baseUrl })).rejects.toMatchObject({ step: "initial", status: 0, message: expect.stringMatching(/transport error/) });
  });
});
