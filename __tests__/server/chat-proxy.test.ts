// The TITO chat proxy over loopback HTTP: what goes upstream, what is recorded, what the client gets back.
// Covers normalization, fake streaming, replay-payload stripping, and every upstream failure status.
import { lastUserTurn, startMockBackend, weatherScript, type MockBackend, type ProcessFunction } from "../../src/backend";
import { WEATHER_TOOLS, buildInitialMessages } from "../../src/agent/texts";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import { createTito, loadTokenizer } from "../../src/tokenizer";
import type { ChatMessage } from "../../src/tokenizer/types";
import { gzipSync, brotliCompressSync } from "node:zlib";
import { call, chat, createSession, getSession, rawChatReply, recordingLogger, startRawBackend, type RawBackend } from "./helpers";
import { dumpsPy, parsePyJson, PY_RESPONSE_JSON } from "../../src/wire/py-json";

/** The seed fixture's server kwargs: servers alone default to {} (miles' --apply-chat-template-kwargs). */
const SEED_KWARGS = { enable_thinking: false };

const scripted: ProcessFunction = (prompt, body) => {
  const last = lastUserTurn(prompt);
  if (last.includes("[length]")) return { text: "this answer was cut off", finish_reason: "length" };
  if (last.includes("[replay]")) {
    return { text: "with replay", meta_info: { routed_experts: "AAECAwQF", indexer_topk: "BgcICQ==", weight_version: "w9" } };
  }
  if (last.includes("[boom]")) throw new Error("engine exploded");
  return weatherScript(prompt, body);
};

let backend: MockBackend;
let server: RunningSessionServer;

beforeAll(async () => {
  backend = await startMockBackend({ process: scripted });
  server = await startSessionServer({ chatTemplateKwargs: SEED_KWARGS, version: "v1", backendUrl: backend.url, logger: recordingLogger() });
});

afterAll(async () => {
  await server.close();
  await backend.close();
});

function user(content: string): ChatMessage {
  return { role: "user", content };
}

describe("request normalization and records", () => {
  test("records exactly the body sent upstream (input_ids, forced flags, merged kwargs) and the full response", async () => {
    const id = await createSession(server.url);
    backend.reset();
    const messages = buildInitialMessages();
    const reply = await chat(server.url, id, {
      model: "m",
      messages,
      tools: WEATHER_TOOLS,
      temperature: 0,
      stream: false,
      stream_options: { include_usage: true },
      logprobs: false,
      no_stop_trim: true,
    });
    expect(reply.status).toBe(200);
    expect(backend.requestLog).toHaveLength(1);
    const sent = backend.requestLog[0];
    const view = await getSession(server.url, id);
    expect(view.records).toHaveLength(1);
    const record = view.records[0];
    expect(record.request).toEqual(sent);
    expect(Object.keys(record.request)).toEqual([
      "model",
      "messages",
      "tools",
      "temperature",
      "logprobs",
      "no_stop_trim",
      "return_meta_info",
      "chat_template_kwargs",
      "input_ids",
    ]);
    expect(sent.logprobs).toBe(true);
    expect(sent.return_meta_info).toBe(true);
    expect(sent.no_stop_trim).toBe(false);
    expect(sent.chat_template_kwargs).toEqual({ enable_thinking: false, clear_thinking: false });
    const tokenizer = await loadTokenizer();
    const expectedIds = createTito(tokenizer, { enable_thinking: false }).renderPromptIds(messages, WEATHER_TOOLS, {});
    expect(sent.input_ids).toEqual(expectedIds);
    expect(record.response).toEqual(reply.json());
    expect(record.method).toBe("POST");
    expect(record.path).toBe("/v1/chat/completions");
    expect(record.status_code).toBe(200);
    expect(record.timestamp).toBeGreaterThanOrEqual(record.request_timestamp);
    expect(Number.isInteger(record.timestamp)).toBe(false);
    const completionIds = record.response.choices[0].meta_info.output_token_logprobs.map((p: number[]) => p[1]);
    expect(view.metadata.accumulated_token_ids).toEqual([...expectedIds, ...completionIds]);
    expect(view.metadata.tito_session_mismatch).toEqual([]);
  });

  test("record timestamps are fractional seconds even on a whole-second wall clock, and ordered", async () => {
    const id = await createSession(server.url);
    const clock = jest.spyOn(Date, "now").mockReturnValue(1_750_000_000_000);
    let reply;
    try {
      reply = await chat(server.url, id, { messages: [user("hi")] });
    } finally {
      clock.mockRestore();
    }
    expect(reply.status).toBe(200);
    const [record] = (await getSession(server.url, id)).records;
    for (const stamp of [record.timestamp, record.request_timestamp]) {
      expect(Number.isInteger(stamp)).toBe(false);
      expect(Math.abs(stamp - Date.now() / 1000)).toBeLessThan(3600);
    }
    expect(record.timestamp).toBeGreaterThan(record.request_timestamp);
  });

  test("request kwargs merge over the defaults before going upstream", async () => {
    const id = await createSession(server.url);
    backend.reset();
    const reply = await chat(server.url, id, { messages: [user("hi")], chat_template_kwargs: { enable_thinking: true, custom: 1 } });
    expect(reply.status).toBe(200);
    expect(backend.requestLog[0].chat_template_kwargs).toEqual({ enable_thinking: true, clear_thinking: false, custom: 1 });
  });

  test("the client reply is the upstream JSON re-emitted compactly, in Python's spelling (-0.0 kept)", async () => {
    const id = await createSession(server.url);
    const reply = await chat(server.url, id, { messages: [user("hi")] });
    expect(reply.headers["content-type"]).toBe("application/json");
    expect(reply.text).toBe(dumpsPy(parsePyJson(reply.text), PY_RESPONSE_JSON));
    expect(reply.text).toContain('"output_token_logprobs":[[-0.0,');
  });
});

describe("fake streaming", () => {
  test("stream: true returns one chunk equal in content to the non-stream reply, then [DONE]", async () => {
    const [plainId, streamId] = await Promise.all([createSession(server.url), createSession(server.url)]);
    const messages = buildInitialMessages();
    const plain = await chat(server.url, plainId, { messages, tools: WEATHER_TOOLS });
    const streamed = await chat(server.url, streamId, { messages, tools: WEATHER_TOOLS, stream: true, stream_options: { include_usage: true } });
    expect(streamed.status).toBe(200);
    expect(streamed.headers["content-type"]).toBe("text/event-stream");
    expect(streamed.headers["cache-control"]).toBe("no-cache");
    const events = streamed.text.split("\n\n").filter((e) => e !== "");
    expect(events).toHaveLength(2);
    expect(events[1]).toBe("data: [DONE]");
    expect(events[0].startsWith("data: ")).toBe(true);
    const chunk = JSON.parse(events[0].slice("data: ".length));
    const full = plain.json<any>();
    const message = full.choices[0].message;
    expect(chunk.object).toBe("chat.completion.chunk");
    expect(chunk.choices).toHaveLength(1);
    expect(chunk.choices[0].index).toBe(0);
    expect(chunk.choices[0].delta.role).toBe("assistant");
    expect(chunk.choices[0].delta.content).toBe(message.content);
    expect(chunk.choices[0].finish_reason).toBe("tool_calls");
    expect(message.tool_calls).toHaveLength(1);
    expect(chunk.choices[0].delta.tool_calls).toEqual(message.tool_calls.map((c: object, index: number) => ({ ...c, index })));
    expect(chunk.usage).toEqual(full.usage);
    expect(chunk.meta_info).toBeUndefined();
    // Both sessions hold the same trajectory ids: streaming changes only the client rendering.
    const [a, b] = await Promise.all([getSession(server.url, plainId), getSession(server.url, streamId)]);
    expect(b.metadata.accumulated_token_ids).toEqual(a.metadata.accumulated_token_ids);
    expect("stream" in b.records[0].request).toBe(false);
    expect("stream_options" in b.records[0].request).toBe(false);
  });

  test("finish_reason length passes through the stream", async () => {
    const id = await createSession(server.url);
    const streamed = await chat(server.url, id, { messages: [user("go [length]")], stream: true });
    const chunk = JSON.parse(streamed.text.split("\n\n")[0].slice(6));
    expect(chunk.choices[0].finish_reason).toBe("length");
    expect(chunk.choices[0].delta.content).toBe("this answer was cut off");
    expect("tool_calls" in chunk.choices[0].delta).toBe(false);
  });

  test("a backend error for a streaming client stays JSON with its status and is not recorded", async () => {
    const id = await createSession(server.url);
    const reply = await chat(server.url, id, { messages: [user("[boom]")], stream: true });
    expect(reply.status).toBe(500);
    expect(reply.headers["content-type"]).toBe("application/json");
    expect(reply.json()).toMatchObject({ object: "error", code: 500, message: "engine exploded" });
    expect((await getSession(server.url, id)).records).toHaveLength(0);
  });
});

describe("replay payloads", () => {
  test("routed_experts and indexer_topk are stripped from the client reply but kept in the record", async () => {
    const id = await createSession(server.url);
    const reply = await chat(server.url, id, { messages: [user("[replay]")] });
    expect(reply.status).toBe(200);
    const clientMeta = reply.json<any>().choices[0].meta_info;
    expect(clientMeta.routed_experts).toBeUndefined();
    expect(clientMeta.indexer_topk).toBeUndefined();
    expect(clientMeta.weight_version).toBe("w9");
    expect(clientMeta.output_token_logprobs.length).toBe(clientMeta.completion_tokens);
    const recordMeta = (await getSession(server.url, id)).records[0].response.choices[0].meta_info;
    expect(recordMeta.routed_experts).toBe("AAECAwQF");
    expect(recordMeta.indexer_topk).toBe("BgcICQ==");
    const { routed_experts: _r, indexer_topk: _i, ...rest } = recordMeta;
    expect(rest).toEqual(clientMeta);
  });
});

describe("upstream failures", () => {
  test("a backend 500 passes through unrecorded and the session keeps working", async () => {
    const id = await createSession(server.url);
    const boom = await chat(server.url, id, { messages: [user("[boom]")] });
    expect(boom.status).toBe(500);
    // The backend's own error body, unchanged (SGLang's error shape).
    expect(boom.json()).toMatchObject({ object: "error", message: "engine exploded", code: 500 });
    expect((await getSession(server.url, id)).records).toHaveLength(0);
    const ok = await chat(server.url, id, { messages: [user("hello")] });
    expect(ok.status).toBe(200);
    expect((await getSession(server.url, id)).records).toHaveLength(1);
  });

  test("backend down is 502 backend transport error and nothing is recorded", async () => {
    const dead = await startRawBackend(() => ({ status: 200, body: "{}" }));
    const deadUrl = dead.url;
    await dead.close();
    const lonely = await startSessionServer({ chatTemplateKwargs: SEED_KWARGS, version: "v1", backendUrl: deadUrl, logger: recordingLogger() });
    try {
      const id = await createSession(lonely.url);
      const reply = await chat(lonely.url, id, { messages: [user("hi")] });
      expect(reply.status).toBe(502);
      expect(reply.json<{ error: string }>().error).toMatch(/^backend transport error: /);
      expect((await getSession(lonely.url, id)).records).toHaveLength(0);
      const proxied = await call("GET", `${lonely.url}/sessions/${id}/health`);
      expect(proxied.status).toBe(502);
    } finally {
      await lonely.close();
    }
  });

  describe("malformed 200 replies are 502 and unrecorded", () => {
    let raw: RawBackend;
    let rawServer: RunningSessionServer;
    let mode = "";
    beforeAll(async () => {
      raw = await startRawBackend(() => {
        switch (mode) {
          case "no-meta":
            return { status: 200, body: rawChatReply([1, 2], { meta: null }) };
          case "null-content":
            return { status: 200, body: rawChatReply([1, 2], { content: null }) };
          case "length-mismatch":
            return { status: 200, body: rawChatReply([1, 2, 3], { completionTokens: 2 }) };
          case "not-json":
            return { status: 200, body: "<html>oops</html>" };
          default:
            return { status: 200, body: rawChatReply([9707, 151645]) };
        }
      });
      rawServer = await startSessionServer({ chatTemplateKwargs: SEED_KWARGS, version: "v1", backendUrl: raw.url, logger: recordingLogger() });
    });
    afterAll(async () => {
      await rawServer.close();
      await raw.close();
    });

    test.each([
      ["no-meta", "meta_info and output_token_logprobs must be in choice"],
      ["null-content", "assistant message content is None, when tool call parser failed"],
      ["length-mismatch", "len(output_token_logprobs)=3 != completion_tokens=2"],
      ["not-json", "backend returned invalid JSON"],
    ])("%s", async (which, message) => {
      const id = await createSession(rawServer.url);
      mode = which;
      const reply = await chat(rawServer.url, id, { messages: [user("hi")] });
      expect(reply.status).toBe(502);
      expect(reply.json<{ error: string }>().error).toContain(message);
      expect((await getSession(rawServer.url, id)).records).toHaveLength(0);
      mode = "";
      const ok = await chat(rawServer.url, id, { messages: [user("hi")] });
      expect(ok.status).toBe(200);
      expect((await getSession(rawServer.url, id)).records).toHaveLength(1);
    });

    test("the routing key header carries the session id upstream", async () => {
      const id = await createSession(rawServer.url);
      await chat(rawServer.url, id, { messages: [user("hi")] });
      expect(raw.requests[raw.requests.length - 1].headers["x-smg-routing-key"]).toBe(id);
      expect(raw.requests[raw.requests.length - 1].url).toBe("/v1/chat/completions");
    });
  });
});

describe("compressed backend replies", () => {
  let raw: RawBackend;
  let rawServer: RunningSessionServer;
  beforeAll(async () => {
    // A backend that compresses whatever the client accepts or not (e.g. behind a compressing proxy).
    raw = await startRawBackend((req) => {
      const body = req.url.startsWith("/v1/chat") ? rawChatReply([9707, 151645]) : JSON.stringify({ path: req.url, ok: true });
      const br = req.url.startsWith("/br");
      const encoded = br ? brotliCompressSync(Buffer.from(body)) : gzipSync(Buffer.from(body));
      return { status: 200, headers: { "content-type": "application/json", "content-encoding": br ? "br" : "gzip" }, body: encoded };
    });
    rawServer = await startSessionServer({ chatTemplateKwargs: SEED_KWARGS, version: "v1", backendUrl: raw.url, logger: recordingLogger() });
  });
  afterAll(async () => {
    await rawServer.close();
    await raw.close();
  });

  test("a gzip-encoded chat reply is decoded, validated and recorded; the client gets plain JSON", async () => {
    const id = await createSession(rawServer.url);
    const reply = await chat(rawServer.url, id, { messages: [user("hi")] }, { "accept-encoding": "gzip" });
    expect(reply.status).toBe(200);
    expect(reply.headers["content-encoding"]).toBeUndefined();
    expect(reply.json<any>().choices[0].message.content).toBe("ok");
    expect((await getSession(rawServer.url, id)).metadata.accumulated_token_ids.slice(-2)).toEqual([9707, 151645]);
  });

  test("the raw proxy decodes gzip and br bodies and drops content-encoding", async () => {
    const id = await createSession(rawServer.url);
    for (const path of ["gz/route", "br/route"]) {
      const reply = await call("GET", `${rawServer.url}/sessions/${id}/${path}`);
      expect(reply.status).toBe(200);
      expect(reply.headers["content-encoding"]).toBeUndefined();
      expect(reply.json()).toEqual({ path: `/${path}`, ok: true });
    }
  });
});
