// Turns a client chat body into the body sent upstream (SPEC §6 normalization), before any session logic.
// Session-independent: the same rules serve v1 and v2; every malformed input is a 400 naming the problem.
import type { ChatMessage, ChatTemplateKwargs } from "../tokenizer/types";
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- MAX_JSON_DEPTH is named by a TSDoc {@link} below
import { describeJsonDepthExcess, type MAX_JSON_DEPTH } from "../wire/json-depth";
import type { JsonObject } from "../wire/sample";
import { addLoraPath, addReplayFlags, type ReplayRequestOptions } from "./replay-request";
import { parsePyJsonBytes, PyFloat, PyBigInt, type PyJsonBytesRead } from "../wire/py-json";
import { NormalizedChatRequest, SamplesRequestBody, SessionHttpError } from "./types";

/** Merges request chat-template kwargs over the server defaults; throws (→ 400) on a forbidden override. */
export type KwargsMerger = (defaults: ChatTemplateKwargs, overrides: ChatTemplateKwargs) => ChatTemplateKwargs;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Python truthiness for the `stream` flag (a client may send 1 or "true"). */
function truthy(value: unknown): boolean {
  if (value instanceof PyFloat) return value.value !== 0;
  if (value instanceof PyBigInt) return true;
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return Boolean(value);
}

/**
 * Roles whose content the chat template concatenates as text: anything else would render as an empty or garbled
 * turn (Qwen3's template has no branch for content parts), so it is refused before anything is stored.
 */
const TEXT_ONLY_ROLES = new Set(["user", "tool", "system"]);

function describeContent(content: unknown): string {
  if (content === undefined) return "no content";
  if (content === null) return "null";
  if (Array.isArray(content)) return "a list (content parts)";
  if (content instanceof PyFloat || content instanceof PyBigInt || typeof content === "number") return "a number";
  return typeof content === "object" ? "an object" : `a ${typeof content}`;
}

/**
 * Refuses an assistant message from `from` on (the messages the TITO step renders) whose `content` is neither a
 * string nor null: Qwen3's template concatenates it as text, so Python's Jinja2 raises (`can only concatenate str
 * (not "list") to str`) where a JS engine would render an empty turn and silently drop the text from the prompt.
 * Messages before `from` matched stored history and are not rendered, so their spelling is the matcher's business.
 * `hint`, asked only when refusing, may return a sentence appended to the message (how the client can be accepted).
 * @throws SessionHttpError(400) naming the message index and the content type
 */
export function assertRenderableAssistantContent(messages: readonly ChatMessage[], from: number, hint?: () => string | null): void {
  for (let i = from; i < messages.length; i++) {
    const message = messages[i];
    const content: unknown = message.content;
    if (message.role !== "assistant" || content === null || content === undefined || typeof content === "string") continue;
    const advice = hint?.() ?? null;
    throw new SessionHttpError(
      400,
      `messages[${i}].content must be a string or null for role "assistant", got ${describeContent(content)}; ` +
        "content parts and objects are not rendered by the chat template" +
        (advice === null ? "" : `; ${advice}`),
    );
  }
}

/**
 * `tool_calls` must be null/absent or an array of objects whose `function` is an object: anything else is a
 * client mistake the chat template would otherwise trip over (miles answers 500 there; listed as a deviation).
 * Arguments that are not JSON are refused by the template step, also as 400.
 */
function checkToolCallsShape(toolCalls: unknown, messageIndex: number): void {
  if (toolCalls === undefined || toolCalls === null) return;
  const where = `messages[${messageIndex}].tool_calls`;
  if (!Array.isArray(toolCalls)) throw new SessionHttpError(400, `${where} must be an array of tool calls or null, got ${describeKind(toolCalls)}`);
  toolCalls.forEach((call, j) => {
    if (!isObject(call)) throw new SessionHttpError(400, `${where}[${j}] must be a tool call object, got ${describeKind(call)}`);
    if (!isObject(call.function))
      throw new SessionHttpError(400, `${where}[${j}].function must be an object with name and arguments, got ${describeKind(call.function)}`);
  });
}

function describeKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/**
 * Parses a JSON request body as Python's `json.loads` does (ints and floats kept apart, big ints exact); an empty
 * body is `{}`. Throws SessionHttpError(400) with Python's decoder message on invalid JSON, or on nesting deeper
 * than {@link MAX_JSON_DEPTH} (checked by a scan before the parser runs).
 */
export function parseJsonBody(body: Buffer): unknown {
  // miles: `json.loads(body) if body else {}` — only a body of zero bytes is `{}`; whitespace is invalid JSON.
  if (body.length === 0) return {};
  let read: PyJsonBytesRead;
  try {
    read = parsePyJsonBytes(body); // the depth cap first, as a scan before any parsing
  } catch (error) {
    throw new SessionHttpError(400, `invalid JSON body: ${(error as Error).message}`);
  }
  if (read.excess !== null) throw new SessionHttpError(400, `request body refused: ${describeJsonDepthExcess(read.excess)}`);
  return read.value;
}

/**
 * Normalizes a chat request: drops `stream` (remembered) and `stream_options`, forces `logprobs`,
 * `return_meta_info` (plus the routing-replay return flags `replay` asks for) and `no_stop_trim: false`, merges `chat_template_kwargs` over the defaults (sent only
 * when non-empty). Key order follows the client body; new keys are appended.
 */
export function normalizeChatRequest(
  parsed: unknown,
  defaults: ChatTemplateKwargs,
  mergeKwargs: KwargsMerger,
  replay?: ReplayRequestOptions,
): NormalizedChatRequest {
  if (!isObject(parsed)) throw new SessionHttpError(400, "chat request body must be a JSON object");
  const body: Record<string, unknown> = { ...parsed };

  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new SessionHttpError(400, "messages must be a non-empty array of chat messages");
  }
  messages.forEach((message, i) => {
    if (!isObject(message) || typeof message.role !== "string") {
      throw new SessionHttpError(400, `messages[${i}] must be an object with a string role`);
    }
    if (TEXT_ONLY_ROLES.has(message.role) && typeof message.content !== "string") {
      throw new SessionHttpError(
        400,
        `messages[${i}].content must be a string for role ${JSON.stringify(message.role)}, got ${describeContent(message.content)}; ` +
          "content parts and objects are not rendered by the chat template",
      );
    }
    checkToolCallsShape(message.tool_calls, i);
  });
  const tools = body.tools;
  if (tools !== undefined && tools !== null && !(Array.isArray(tools) && tools.every(isObject))) {
    throw new SessionHttpError(400, "tools must be an array of tool objects");
  }

  const clientStream = truthy(body.stream);
  delete body.stream;
  delete body.stream_options;
  body.logprobs = true;
  body.return_meta_info = true;
  if (replay) addReplayFlags(body, replay);
  body.no_stop_trim = false;
  if (replay) addLoraPath(body, replay);

  const requestKwargs = body.chat_template_kwargs;
  if (requestKwargs !== undefined && requestKwargs !== null && !isObject(requestKwargs)) {
    throw new SessionHttpError(400, "chat_template_kwargs must be an object");
  }
  let kwargs: ChatTemplateKwargs = { ...defaults };
  if (isObject(requestKwargs) && Object.keys(requestKwargs).length > 0) {
    try {
      kwargs = mergeKwargs(defaults, requestKwargs);
    } catch (error) {
      throw new SessionHttpError(400, (error as Error).message); // miles: MessageValidationError(str(e))
    }
  }
  if (Object.keys(kwargs).length > 0) body.chat_template_kwargs = { ...kwargs };
  else delete body.chat_template_kwargs;

  return {
    messages: messages as ChatMessage[],
    tools: Array.isArray(tools) ? tools : null,
    chatTemplateKwargs: kwargs,
    upstreamBody: body,
    clientStream,
  };
}

const LONE_SURROGATE = /\p{Cs}/u;

/** `path` rendered with one more key: `.name` for identifiers, `["..."]` (JSON-escaped) otherwise. */
function keyPath(path: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/**
 * The path of the first key or string holding a lone UTF-16 surrogate (`"\ud800"` escaped in the JSON), or null.
 * Such text has no UTF-8 form, so the samples payload's UTF-8 JSON cannot carry it. Iterative (depth is capped anyway).
 */
function findLoneSurrogate(root: unknown, rootPath: string): string | null {
  const stack: Array<[unknown, string]> = [[root, rootPath]];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === "string") {
      if (LONE_SURROGATE.test(value)) return path;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i -= 1) stack.push([value[i], `${path}[${i}]`]);
    } else if (isObject(value) && !(value instanceof PyFloat) && !(value instanceof PyBigInt)) {
      const keys = Object.keys(value);
      for (const key of keys) if (LONE_SURROGATE.test(key)) return `a key of ${path} (${JSON.stringify(key)})`;
      for (let i = keys.length - 1; i >= 0; i -= 1) stack.push([value[keys[i]], keyPath(path, keys[i])]);
    }
  }
  return null;
}

/**
 * Validates the samples-op body: `{"max_seq_len": int|null, "metadata"?: object}`. Throws 400 otherwise, and
 * for metadata the samples payload cannot carry (a lone UTF-16 surrogate in a key or string; miles answers 500 there). With
 * `readMetadata` false (v1) the `metadata` key is not read at all, whatever it holds, as the Python v1 route does.
 */
export function parseSamplesBody(parsed: unknown, readMetadata = true): SamplesRequestBody {
  if (!isObject(parsed)) throw new SessionHttpError(400, "samples request body must be a JSON object");
  const maxSeqLen = parsed.max_seq_len ?? null;
  if (maxSeqLen !== null && !(typeof maxSeqLen === "number" && Number.isInteger(maxSeqLen))) {
    throw new SessionHttpError(400, `max_seq_len must be an integer or null, got ${JSON.stringify(maxSeqLen)}`);
  }
  if (!readMetadata) return { max_seq_len: maxSeqLen };
  const metadata = parsed.metadata;
  // Python's big ints and floats arrive as PyBigInt / PyFloat instances: numbers, not objects.
  if (metadata !== undefined && metadata !== null && (!isObject(metadata) || metadata instanceof PyFloat || metadata instanceof PyBigInt)) {
    throw new SessionHttpError(
      400,
      `metadata must be an object, got ${describeKind(metadata instanceof PyFloat || metadata instanceof PyBigInt ? 0 : metadata)}`,
    );
  }
  if (isObject(metadata)) {
    const broken = findLoneSurrogate(metadata, "metadata");
    if (broken !== null) {
      throw new SessionHttpError(
        400,
        `${broken} holds a lone UTF-16 surrogate, which has no UTF-8 form: the samples payload cannot carry it (the text must be well-formed UTF-16)`,
      );
    }
  }
  return isObject(metadata) ? { max_seq_len: maxSeqLen, metadata: metadata as JsonObject } : { max_seq_len: maxSeqLen };
}
