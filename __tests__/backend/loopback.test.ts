// The mock backend on a real loopback port, driven by an undici Pool: reply shapes, tool calls, stop tokens,
// concurrency accounting, reset, every bad-input case, and close() with a request still in flight.
import { createServer } from "node:net";
import { startMockBackend, type MockBackend, type ProcessFunction, type ProcessResult } from "../../src/backend";
import { loadTokenizer } from "../../src/tokenizer/load";
import type { Tokenizer } from "../../src/tokenizer/types";
import { buildInitialMessages, WEATHER_TOOLS } from "../../src/agent/texts";
import { TestClient, firstChoice } from "./http-client";

const TOOLS = [...WEATHER_TOOLS, { type: "function", function: { name: "get_time", description: "Current time in a zone.", parameters: { type: "object" } } }];
const toolBlock = (json: string): string => `<tool_call>\n${json}\n</tool_call>`;

/** Answers whatever ProcessResult the test put in the request's `test_reply` field. */
const replyFromRequest: ProcessFunction = (_prompt, request) => {
  const reply = request["test_reply"] as ProcessResult | undefined;
  if (reply === undefined) throw new Error("test request carries no test_reply");
  return reply;
};

let tokenizer: Tokenizer;
let imEnd: number;
let backend: MockBackend;
let client: TestClient;
const prompts: string[] = [];

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  imEnd = tokenizer.tokenToId("<|im_end|>") as number;
  backend = await startMockBackend({
    tokenizer,
    process: (prompt, request) => {
      prompts.push(prompt);
      return replyFromRequest(prompt, request);
    },
  });
  client = new TestClient(backend.url);
});

afterAll(async () => {
  await client.close();
  await backend.close();
});

beforeEach(() => {
  backend.reset();
  prompts.length = 0;
});

const chat = (testReply: ProcessResult, extra: Record<string, unknown> = {}) =>
  client.post("/v1/chat/completions", { messages: buildInitialMessages(), tools: TOOLS, test_reply: testReply, ...extra });

describe("chat completions", () => {
  test("a tool-call reply carries SGLang's fields, call ids, tool index, finish reason and the stop token last", async () => {
    const text = `I will check Beijing.\n${toolBlock('{"name": "get_weather", "arguments": {"location": "Beijing", "hours": [1.0, 2]}}')}`;
    const reply = await chat({
      text,
      cached_tokens: 7,
      meta_info: { weight_version: "w5", spec_accept_token_num: 3, spec_draft_token_num: 4, spec_verify_ct: 2 },
    });
    expect(reply.status).toBe(200);
    expect(reply.contentType).toContain("application/json");
    const body = reply.json;
    expect(body["id"]).toMatch(/^chatcmpl-[0-9a-f]{8}$/);
    expect(body["object"]).toBe("chat.completion");
    expect(Number.isInteger(body["created"])).toBe(true);
    expect(body["model"]).toBe("mock-model");
    const choice = firstChoice(reply);
    expect(choice["index"]).toBe(0);
    expect(choice["finish_reason"]).toBe("tool_calls");
    expect(choice["message"]).toEqual({
      role: "assistant",
      content: "I will check Beijing.",
      tool_calls: [
        {
          id: "call00000",
          index: 0,
          type: "function",
          function: { name: "get_weather", arguments: '{"location": "Beijing", "hours": [1.0, 2]}' },
        },
      ],
    });
    const expectedIds = [...tokenizer.encode(text), imEnd];
    const expectedPrompt = tokenizer.renderChatTemplate(buildInitialMessages(), { tools: TOOLS, addGenerationPrompt: true });
    const meta = choice["meta_info"];
    expect(meta["output_token_logprobs"]).toEqual(expectedIds.map((id, i) => [-i / 128, id]));
    expect(meta["output_token_logprobs"].at(-1)[1]).toBe(imEnd);
    expect(meta).toMatchObject({
      completion_tokens: expectedIds.length,
      prompt_tokens: tokenizer.encode(expectedPrompt).length,
      cached_tokens: 7,
      weight_version: "w5",
      spec_accept_token_num: 3,
      spec_draft_token_num: 4,
      spec_verify_ct: 2,
    });
    expect(body["usage"]).toEqual({
      prompt_tokens: meta["prompt_tokens"],
      completion_tokens: expectedIds.length,
      total_tokens: meta["prompt_tokens"] + expectedIds.length,
      prompt_tokens_details: { cached_tokens: 7 },
    });
    const content = choice["logprobs"]["content"] as Record<string, unknown>[];
    expect(content.map((entry) => entry["token_id"])).toEqual(expectedIds);
    expect(content.map((entry) => entry["logprob"])).toEqual(meta["output_token_logprobs"].map((pair: number[]) => pair[0]));
    expect(content.at(-1)).toMatchObject({ token: "<|im_end|>", top_logprobs: [] });
    expect(prompts).toEqual([expectedPrompt]);
  });

  test("two tool calls in one reply get call00000/call00001 and their tools' positions", async () => {
    const text = [
      toolBlock('{"name": "get_time", "arguments": {"zone": "Asia/Shanghai"}}'),
      toolBlock('{"name": "get_weather", "arguments": {"location": "Shanghai"}}'),
    ].join("\n");
    const choice = firstChoice(await chat({ text }));
    expect(choice["finish_reason"]).toBe("tool_calls");
    expect(choice["message"]["content"]).toBe("");
    expect(choice["message"]["tool_calls"]).toEqual([
      { id: "call00000", index: 1, type: "function", function: { name: "get_time", arguments: '{"zone": "Asia/Shanghai"}' } },
      { id: "call00001", index: 0, type: "function", function: { name: "get_weather", arguments: '{"location": "Shanghai"}' } },
    ]);
    expect(choice["meta_info"]["output_token_logprobs"].at(-1)[1]).toBe(imEnd);
  });

  test("malformed tool-call JSON leaves the whole text as content with a plain stop", async () => {
    const text = `Checking.\n${toolBlock('{"name": "get_weather", "arguments": {"location": }')}`;
    const choice = firstChoice(await chat({ text }));
    expect(choice["finish_reason"]).toBe("stop");
    expect(choice["message"]).toEqual({ role: "assistant", content: text, tool_calls: null });
    expect(choice["meta_info"]["output_token_logprobs"].map((pair: number[]) => pair[1])).toEqual([...tokenizer.encode(text), imEnd]);
  });

  test("without `tools` a tool-call block is not parsed", async () => {
    const text = toolBlock('{"name": "get_weather", "arguments": {"location": "X"}}');
    const choice = firstChoice(await client.post("/v1/chat/completions", { messages: buildInitialMessages(), test_reply: { text } }));
    expect(choice["finish_reason"]).toBe("stop");
    expect(choice["message"]["content"]).toBe(text);
    expect(choice["message"]["tool_calls"]).toBeNull();
  });

  test('finish_reason "length" carries no stop token', async () => {
    const text = "The weather in Beijing is";
    const choice = firstChoice(await chat({ text, finish_reason: "length" }));
    expect(choice["finish_reason"]).toBe("length");
    const ids = choice["meta_info"]["output_token_logprobs"].map((pair: number[]) => pair[1]);
    expect(ids).toEqual(tokenizer.encode(text));
    expect(ids).not.toContain(imEnd);
    expect(choice["meta_info"]["completion_tokens"]).toBe(ids.length);
  });

  test("with input_ids the process sees their decode (special tokens kept) and prompt_tokens counts them", async () => {
    const rendered = tokenizer.renderChatTemplate(buildInitialMessages(), { tools: TOOLS, addGenerationPrompt: true });
    const inputIds = tokenizer.encode(rendered);
    const reply = await client.post("/v1/chat/completions", {
      messages: [{ role: "user", content: "ignored when input_ids are present" }],
      input_ids: inputIds,
      return_prompt_token_ids: true,
      test_reply: { text: "Hello." },
    });
    expect(prompts).toEqual([tokenizer.decode(inputIds, { skipSpecialTokens: false })]);
    expect(prompts[0]).toContain("<|im_start|>user\nWhat's the weather in Beijing?<|im_end|>");
    const choice = firstChoice(reply);
    expect(choice["meta_info"]["prompt_tokens"]).toBe(inputIds.length);
    expect(choice["prompt_token_ids"]).toEqual(inputIds);
  });

  test("the request's `model` is echoed; replies get fresh ids", async () => {
    const first = await chat({ text: "a" }, { model: "Qwen/Qwen3-0.6B" });
    const second = await chat({ text: "a" });
    expect(first.json["model"]).toBe("Qwen/Qwen3-0.6B");
    expect(first.json["id"]).not.toBe(second.json["id"]);
  });

  test("stream: true answers OpenAI SSE chunks ending in [DONE]", async () => {
    const text = `Sure.\n${toolBlock('{"name": "get_time", "arguments": {"zone": "UTC"}}')}`;
    const reply = await chat({ text }, { stream: true });
    expect(reply.contentType).toContain("text/event-stream");
    const events = reply.text.split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice("data: ".length)));
    expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk")).toBe(true);
    expect(chunks[0].choices[0].delta).toEqual({
      role: "assistant",
      content: "Sure.",
      tool_calls: [{ id: "call00000", index: 0, type: "function", function: { name: "get_time", arguments: '{"zone": "UTC"}' } }],
    });
    expect(chunks.at(-1).choices[0].finish_reason).toBe("tool_calls");
  });
});

describe("/generate, /health, /abort_request", () => {
  test("/generate answers {text, meta_info} with a stop finish matched on <|im_end|>", async () => {
    const inputIds = tokenizer.encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
    const reply = await client.post("/generate", { input_ids: inputIds, test_reply: { text: "Hi there.", meta_info: { weight_version: "w3" } } });
    expect(reply.status).toBe(200);
    const expectedIds = [...tokenizer.encode("Hi there."), imEnd];
    // mirrors miles/utils/test_utils/mock_sglang_server.py (`-1 / 128 * i`): the first log-prob is -0.0 on the wire
    expect(reply.text).toContain(`"output_token_logprobs":[[-0.0,${expectedIds[0]}],[-0.0078125,${expectedIds[1]}]`);
    expect(reply.json).toEqual({
      text: "Hi there.",
      meta_info: {
        id: expect.stringMatching(/^[0-9a-f]{8}$/),
        finish_reason: { type: "stop", matched: imEnd },
        prompt_tokens: inputIds.length,
        cached_tokens: 0,
        completion_tokens: expectedIds.length,
        output_token_logprobs: expectedIds.map((id, i) => [-i / 128, id]),
        weight_version: "w3",
      },
    });
    expect(prompts).toEqual([tokenizer.decode(inputIds, { skipSpecialTokens: false })]);
  });

  test("/generate with a length finish reports the length and no stop token", async () => {
    const reply = await client.post("/generate", { input_ids: [1, 2, 3], test_reply: { text: "abc def", finish_reason: "length" } });
    const meta = reply.json["meta_info"] as Record<string, any>;
    expect(meta["finish_reason"]).toEqual({ type: "length", length: tokenizer.encode("abc def").length });
    expect(meta["output_token_logprobs"].map((pair: number[]) => pair[1])).toEqual(tokenizer.encode("abc def"));
  });

  test("/health and /abort_request answer ok and are not logged as generations", async () => {
    expect((await client.get("/health")).json).toEqual({ status: "ok" });
    expect((await client.post("/abort_request", { rid: "x" })).json).toEqual({ status: "ok" });
    expect(backend.requestLog).toEqual([]);
  });
});

describe("stats", () => {
  test("latency plus 16 concurrent requests reach maxConcurrent 16 and every body is logged", async () => {
    let arrived = 0;
    let release!: () => void;
    const allArrived = new Promise<void>((resolve) => (release = resolve));
    const slow = await startMockBackend({
      tokenizer,
      latencyMs: 50,
      // Holds every request until all 16 are in flight, so the peak does not depend on machine speed.
      process: async (_prompt, request) => {
        arrived += 1;
        if (arrived === 16) release();
        await allArrived;
        return { text: `reply ${String(request["n"])}` };
      },
    });
    const slowClient = new TestClient(slow.url, 16);
    try {
      const replies = await Promise.all(Array.from({ length: 16 }, (_, n) => slowClient.post("/v1/chat/completions", { messages: buildInitialMessages(), n })));
      expect(replies.map((reply) => firstChoice(reply)["message"]["content"]).sort()).toEqual(Array.from({ length: 16 }, (_, n) => `reply ${n}`).sort());
      expect(slow.maxConcurrent).toBe(16);
      expect(slow.currentConcurrent).toBe(0);
      expect(slow.requestLog.map((body) => body["n"]).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 16 }, (_, n) => n));
    } finally {
      await slowClient.close();
      await slow.close();
    }
  });

  test("reset() clears the log and the peak", async () => {
    await chat({ text: "one" });
    await chat({ text: "two" });
    expect(backend.requestLog).toHaveLength(2);
    expect(backend.maxConcurrent).toBeGreaterThanOrEqual(1);
    backend.reset();
    expect(backend.requestLog).toEqual([]);
    expect(backend.requests).toEqual([]);
    expect(backend.maxConcurrent).toBe(0);
    await chat({ text: "three" });
    expect(backend.requestLog).toHaveLength(1);
    expect((backend.requestLog[0]["test_reply"] as ProcessResult).text).toBe("three");
    expect(backend.maxConcurrent).toBe(1);
  });
});

describe("bad input", () => {
  test.each([
    ["a body that is not JSON", "/v1/chat/completions", "{not json", 400, /not valid JSON/],
    ["a JSON body that is not an object", "/v1/chat/completions", "[1, 2]", 400, /must be a JSON object/],
    ["neither messages nor input_ids", "/v1/chat/completions", JSON.stringify({ tools: TOOLS }), 400, /`messages` or `input_ids`/],
    ["input_ids that are not token ids", "/v1/chat/completions", JSON.stringify({ input_ids: [1, "x"] }), 400, /`input_ids` must be/],
    ["messages that are not role objects", "/v1/chat/completions", JSON.stringify({ messages: ["hi"] }), 400, /`messages` must be/],
    [
      "a tool entry that is not an object",
      "/v1/chat/completions",
      JSON.stringify({ messages: [{ role: "user", content: "hi" }], tools: ["get_weather"] }),
      400,
      /could not render `messages` with `tools`: tools\[0\] must be a tool object/,
    ],
    [
      "tool-call arguments that are not JSON",
      "/v1/chat/completions",
      JSON.stringify({ messages: [{ role: "assistant", content: "", tool_calls: [{ type: "function", function: { name: "f", arguments: "{oops" } }] }] }),
      400,
      /messages\[0\]\.tool_calls\[0\]\.function\.arguments is not valid JSON/,
    ],
    ["/generate without input_ids", "/generate", JSON.stringify({ sampling_params: {} }), 400, /needs `input_ids`/],
    ["an unknown path", "/v1/completions", JSON.stringify({ prompt: "x" }), 404, /no route for POST \/v1\/completions/],
  ])("%s (POST %s) gets an SGLang error with its status and is still logged", async (_name, path, body, status, message) => {
    const reply = await client.post(path, body);
    expect(reply.status).toBe(status);
    expect(reply.json).toMatchObject({ object: "error", code: status, message: expect.stringMatching(message) });
    expect(backend.requestLog).toHaveLength(1);
    expect(backend.requests[0]).toMatchObject({ method: "POST", path, status });
    const logged = backend.requestLog[0];
    if (logged["invalid_body"] !== undefined) expect(logged).toEqual({ invalid_body: body });
    else expect(logged).toEqual(JSON.parse(body));
    expect((await client.get("/health")).status).toBe(200);
  });

  test("a process function that throws gives 500 with its message; the request is logged", async () => {
    const reply = await client.post("/v1/chat/completions", { messages: buildInitialMessages() });
    expect(reply.status).toBe(500);
    expect(reply.json).toMatchObject({ object: "error", code: 500, message: "test request carries no test_reply" });
    expect(backend.requests).toEqual([expect.objectContaining({ path: "/v1/chat/completions", status: 500 })]);
    expect(backend.currentConcurrent).toBe(0);
  });

  test("a process result without text gives 500 naming the problem", async () => {
    const reply = await chat({ finish_reason: "stop" } as unknown as ProcessResult);
    expect(reply.status).toBe(500);
    expect(reply.json["message"]).toMatch(/string `text`/);
  });

  test.each([
    ["an unknown finish_reason", { text: "x", finish_reason: "done" }, /finish_reason "done"; expected one of stop, tool_calls, length, abort/],
    ["a negative cached_tokens", { text: "x", cached_tokens: -1 }, /cached_tokens -1; expected a non-negative integer/],
    ["a fractional cached_tokens", { text: "x", cached_tokens: 1.5 }, /cached_tokens 1.5; expected a non-negative integer/],
    ["a meta_info that is an array", { text: "x", meta_info: [1] }, /`meta_info` that is not an object/],
  ])("a process result with %s gives 500 naming the field, on chat and /generate", async (_name, testReply, message) => {
    const reply = await chat(testReply as unknown as ProcessResult);
    expect(reply.status).toBe(500);
    expect(reply.json).toMatchObject({ object: "error", code: 500, message: expect.stringMatching(message) });
    const generated = await client.post("/generate", { input_ids: [1, 2], test_reply: testReply });
    expect(generated.status).toBe(500);
    expect(generated.json["message"]).toMatch(message);
    expect(backend.requests.map((entry) => entry.status)).toEqual([500, 500]);
  });
});

describe("emitStopToken: false", () => {
  test("stop finishes carry no stop token", async () => {
    const plain = await startMockBackend({ tokenizer, emitStopToken: false, process: replyFromRequest });
    const plainClient = new TestClient(plain.url);
    try {
      const choice = firstChoice(await plainClient.post("/v1/chat/completions", { messages: buildInitialMessages(), test_reply: { text: "Done." } }));
      expect(choice["finish_reason"]).toBe("stop");
      expect(choice["meta_info"]["output_token_logprobs"].map((pair: number[]) => pair[1])).toEqual(tokenizer.encode("Done."));
    } finally {
      await plainClient.close();
      await plain.close();
    }
  });
});

describe("close()", () => {
  test("releases the port while a request is still in flight", async () => {
    const stuck = await startMockBackend({ tokenizer, latencyMs: 60_000, process: () => ({ text: "never" }) });
    const port = Number(new URL(stuck.url).port);
    const stuckClient = new TestClient(stuck.url, 1);
    const pending = stuckClient.post("/v1/chat/completions", { messages: buildInitialMessages() });
    pending.catch(() => undefined);
    while (stuck.currentConcurrent === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await stuck.close();
    await expect(pending).rejects.toThrow();
    expect(stuck.currentConcurrent).toBe(0);
    await stuckClient.close();
    const probe = createServer();
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.listen(port, "127.0.0.1", () => resolve());
    });
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });

  test("startMockBackend loads the Qwen3 tokenizer itself when none is given", async () => {
    const own = await startMockBackend({ process: () => ({ text: "Hello." }) });
    const ownClient = new TestClient(own.url);
    try {
      const choice = firstChoice(await ownClient.post("/v1/chat/completions", { messages: buildInitialMessages() }));
      expect(choice["meta_info"]["output_token_logprobs"].map((pair: number[]) => pair[1])).toEqual([...tokenizer.encode("Hello."), imEnd]);
      expect(new URL(own.url).hostname).toBe("127.0.0.1");
    } finally {
      await ownClient.close();
      await own.close();
    }
  });
});
