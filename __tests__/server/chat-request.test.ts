// Chat request normalization and samples-body parsing (SPEC §6), pure: what goes upstream for each client body.
// Covers the chat_template_kwargs rules the Qwen3 server cannot reach over HTTP (its pinned kwarg is never empty).
import { normalizeChatRequest, parseJsonBody, parseSamplesBody, type KwargsMerger } from "../../src/server/chat-request";
import { SessionHttpError } from "../../src/server";

const merge: KwargsMerger = (defaults, overrides) => ({ ...defaults, ...overrides });
const USER = { role: "user", content: "hi" };

function refusal(fn: () => unknown): SessionHttpError {
  try {
    fn();
  } catch (error) {
    if (error instanceof SessionHttpError) return error;
    throw error;
  }
  throw new Error("expected a SessionHttpError");
}

describe("chat_template_kwargs", () => {
  test("empty defaults and no request kwargs: the key is removed from the upstream body", () => {
    for (const kwargs of [undefined, null, {}]) {
      const body = kwargs === undefined ? { messages: [USER] } : { messages: [USER], chat_template_kwargs: kwargs };
      const normalized = normalizeChatRequest(body, {}, merge);
      expect("chat_template_kwargs" in normalized.upstreamBody).toBe(false);
      expect(normalized.chatTemplateKwargs).toEqual({});
    }
  });

  test("request kwargs merge over the defaults and keep the client's key position", () => {
    const normalized = normalizeChatRequest({ chat_template_kwargs: { a: 2, c: 3 }, messages: [USER] }, { a: 1, b: 1 }, merge);
    expect(normalized.upstreamBody.chat_template_kwargs).toEqual({ a: 2, b: 1, c: 3 });
    expect(Object.keys(normalized.upstreamBody)[0]).toBe("chat_template_kwargs");
    expect(normalized.chatTemplateKwargs).toEqual({ a: 2, b: 1, c: 3 });
  });

  test("an empty request object leaves the defaults, which are sent", () => {
    const normalized = normalizeChatRequest({ messages: [USER], chat_template_kwargs: {} }, { enable_thinking: false }, merge);
    expect(normalized.upstreamBody.chat_template_kwargs).toEqual({ enable_thinking: false });
  });

  test("non-object kwargs are 400; a merge rule's refusal is 400 naming it", () => {
    for (const bad of [[], "x", 1, true]) {
      const error = refusal(() => normalizeChatRequest({ messages: [USER], chat_template_kwargs: bad }, {}, merge));
      expect([error.status, error.message]).toEqual([400, "chat_template_kwargs must be an object"]);
    }
    const pinned: KwargsMerger = () => {
      throw new Error("clear_thinking is pinned to false");
    };
    const error = refusal(() => normalizeChatRequest({ messages: [USER], chat_template_kwargs: { clear_thinking: true } }, {}, pinned));
    expect([error.status, error.message]).toEqual([400, "clear_thinking is pinned to false"]);
  });
});

describe("stream and forced flags", () => {
  test("stream is remembered by truthiness and removed with stream_options; flags are forced", () => {
    const cases: Array<[unknown, boolean]> = [
      [true, true],
      [1, true],
      ["yes", true],
      [false, false],
      [0, false],
      [null, false],
      [undefined, false],
      [[], false],
    ];
    for (const [stream, expected] of cases) {
      const normalized = normalizeChatRequest(
        { messages: [USER], stream, stream_options: { include_usage: true }, logprobs: false, return_meta_info: false, no_stop_trim: true },
        {},
        merge,
      );
      expect(normalized.clientStream).toBe(expected);
      expect(normalized.upstreamBody).toEqual({ messages: [USER], logprobs: true, return_meta_info: true, no_stop_trim: false });
    }
  });

  test("the client body object is not modified", () => {
    const body = { messages: [USER], stream: true };
    normalizeChatRequest(body, { a: 1 }, merge);
    expect(body).toEqual({ messages: [USER], stream: true });
  });
});

describe("body validation", () => {
  // mirrors miles/rollout/session/core.py::prepare_chat_request (`json.loads(body) if body else {}`, JSONDecodeError text)
  test("invalid JSON is 400 with Python's decoder message; only an empty body is {}", () => {
    const invalid = refusal(() => parseJsonBody(Buffer.from("{oops")));
    expect([invalid.status, invalid.message]).toEqual([400, "invalid JSON body: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"]);
    expect(refusal(() => parseJsonBody(Buffer.from("  "))).message).toBe("invalid JSON body: Expecting value: line 1 column 3 (char 2)");
    expect(parseJsonBody(Buffer.alloc(0))).toEqual({});
  });

  test("messages and tools must be well formed", () => {
    expect(refusal(() => normalizeChatRequest([], {}, merge)).message).toBe("chat request body must be a JSON object");
    expect(refusal(() => normalizeChatRequest({ messages: [] }, {}, merge)).message).toMatch(/non-empty array/);
    expect(refusal(() => normalizeChatRequest({ messages: [USER, "x"] }, {}, merge)).message).toBe("messages[1] must be an object with a string role");
    expect(refusal(() => normalizeChatRequest({ messages: [USER], tools: {} }, {}, merge)).message).toBe("tools must be an array of tool objects");
    expect(normalizeChatRequest({ messages: [USER], tools: null }, {}, merge).tools).toBeNull();
  });

  test("samples body: integer or null max_seq_len, object metadata", () => {
    expect(parseSamplesBody({})).toEqual({ max_seq_len: null });
    expect(parseSamplesBody({ max_seq_len: 12, metadata: { a: 1 } })).toEqual({ max_seq_len: 12, metadata: { a: 1 } });
    expect(parseSamplesBody({ max_seq_len: null, metadata: null })).toEqual({ max_seq_len: null });
    for (const bad of [{ max_seq_len: 1.5 }, { max_seq_len: "3" }, { metadata: [1] }, []]) {
      expect(refusal(() => parseSamplesBody(bad)).status).toBe(400);
    }
  });
});
