// Reads and re-emits the backend's chat reply: validation of the TITO fields, replay-payload stripping,
// and the single-chunk fake SSE stream (the backend call itself never streams).
import type { ChatMessage } from "../tokenizer/types";
import { dumpsPy, parsePyJsonBytes, PY_RESPONSE_JSON, pyNumberValue, pyRepr, type PyJsonBytesRead, type SpelledPyJson } from "../wire/py-json";
import { describeJsonDepthExcess, MAX_JSON_DEPTH } from "../wire/json-depth";
import { tallyBytes } from "./retained-size";
import { SessionHttpError } from "./types";

/** The validated parts of an upstream chat completion. */
export interface ExtractedCompletion {
  /** The full upstream JSON. */
  response: Record<string, unknown>;
  /** `choices[0].message` (its content is never null). */
  assistantMessage: ChatMessage;
  /** The second elements of `meta_info.output_token_logprobs`. */
  completionIds: number[];
  /** `choices[0].finish_reason`, or null when absent. */
  finishReason: string | null;
  /** `response.id`, or null when absent. */
  responseId: string | null;
  /** The backend's text of `response` when it is exactly `dumpsPy(response, PY_RESPONSE_JSON)` already. */
  spelledResponse?: SpelledPyJson;
  /**
   * The parsed reply's retained size, from the parse scan's tally of its text (when it kept one): the turn's charge
   * takes it instead of walking the tree. Nothing in the servers changes a reply after parsing it.
   */
  responseBytes?: number;
}

/** `meta_info` keys carrying routing-replay tensors: kept in records, removed from client replies. */
const CLIENT_STRIPPED_META_KEYS = ["routed_experts", "indexer_topk"] as const;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function firstChoice(response: Record<string, unknown>): Record<string, unknown> {
  const choices = response.choices;
  if (Array.isArray(choices) && isObject(choices[0])) return choices[0];
  return {};
}

/**
 * Validates a 200 chat reply (SPEC §6 "Upstream reply"; miles `core.py::extract_completion` and its
 * `UpstreamResponseError` → 502); every failure is SessionHttpError(502) and nothing is stored. Beyond miles's
 * checks (a deviation listed in docs/PROTOCOL.md), the body must nest at most 128 deep, each log-prob must be a
 * number and each token id an integer in `[0, vocabSize)` (when `vocabSize` is given): an id outside the
 * vocabulary would be stored in the trajectory and break every later turn of the session at the backend.
 */
export function extractCompletion(body: Buffer, vocabSize?: number): ExtractedCompletion {
  let read: PyJsonBytesRead;
  try {
    read = parsePyJsonBytes(body, MAX_JSON_DEPTH, { keepSpelling: true }); // the depth cap first, as a scan before any parsing
  } catch (error) {
    throw new SessionHttpError(502, `backend returned invalid JSON: ${(error as Error).message}`);
  }
  if (read.excess !== null) throw new SessionHttpError(502, `backend reply refused: ${describeJsonDepthExcess(read.excess)}`);
  const response: unknown = read.value;
  if (!isObject(response)) throw new SessionHttpError(502, "backend reply is not a JSON object");
  const choice = firstChoice(response);
  const meta = choice.meta_info;
  if (!isObject(meta) || !("output_token_logprobs" in meta)) {
    throw new SessionHttpError(502, "meta_info and output_token_logprobs must be in choice (requires logprobs=True)");
  }
  const message = isObject(choice.message) ? choice.message : {};
  if (message.content === null || message.content === undefined) {
    throw new SessionHttpError(
      502,
      "assistant message content is None, when tool call parser failed SGLang should still return an empty content rather than None. " +
        "Please check your modified SGLang version.",
    );
  }
  const logprobs = meta.output_token_logprobs;
  if (!Array.isArray(logprobs)) throw new SessionHttpError(502, "meta_info.output_token_logprobs must be an array of [logprob, token_id] pairs");
  const completionTokens = meta.completion_tokens;
  if (logprobs.length !== pyNumberValue(completionTokens)) {
    throw new SessionHttpError(
      502,
      `invalid chat completion response: len(output_token_logprobs)=${logprobs.length} != completion_tokens=${pyRepr(completionTokens)}. ` +
        "Please check whether you use the correct SGLang branch which has fix the tokenizer batch decode issue.",
    );
  }
  const completionIds = logprobs.map((pair, i) => {
    if (!Array.isArray(pair) || pair.length < 2 || pyNumberValue(pair[0]) === undefined || !Number.isInteger(pair[1])) {
      throw new SessionHttpError(502, `meta_info.output_token_logprobs[${i}] must be a [logprob, token_id] pair`);
    }
    const id = pair[1] as number;
    if (id < 0 || (vocabSize !== undefined && id >= vocabSize)) {
      const range = vocabSize !== undefined ? `0 <= id < ${vocabSize}` : "id >= 0";
      throw new SessionHttpError(502, `meta_info.output_token_logprobs[${i}][1] = ${id} is not a token id of the tokenizer's vocabulary (${range})`);
    }
    return id;
  });
  const finishReason = typeof choice.finish_reason === "string" ? choice.finish_reason : null;
  const responseId = typeof response.id === "string" ? response.id : null;
  const responseBytes = read.tally === undefined ? undefined : tallyBytes(read.tally);
  return { response, assistantMessage: message as ChatMessage, completionIds, finishReason, responseId, spelledResponse: read.spelled, responseBytes };
}

/** A copy of the reply without `routed_experts`/`indexer_topk` in any `choices[i].meta_info` (input untouched). */
export function stripReplayPayloads(response: Record<string, unknown>): Record<string, unknown> {
  const choices = response.choices;
  if (!Array.isArray(choices)) return response;
  let changed = false;
  const stripped = choices.map((choice: unknown) => {
    if (!isObject(choice) || !isObject(choice.meta_info)) return choice;
    const meta = choice.meta_info;
    if (!CLIENT_STRIPPED_META_KEYS.some((key) => key in meta)) return choice;
    changed = true;
    const kept: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(meta)) {
      if (!(CLIENT_STRIPPED_META_KEYS as readonly string[]).includes(key)) kept[key] = value;
    }
    return { ...choice, meta_info: kept };
  });
  return changed ? { ...response, choices: stripped } : response;
}

/** The single `chat.completion.chunk` that carries a whole reply for a fake stream. */
function toStreamChunk(response: Record<string, unknown>): Record<string, unknown> {
  const choice = firstChoice(response);
  const message = isObject(choice.message) ? choice.message : {};
  const delta: Record<string, unknown> = { role: message.role ?? "assistant", content: message.content ?? null };
  if (message.reasoning_content !== null && message.reasoning_content !== undefined) delta.reasoning_content = message.reasoning_content;
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
    delta.tool_calls = message.tool_calls.map((call: unknown, index) => (isObject(call) ? { ...call, index } : call));
  }
  const chunk: Record<string, unknown> = {
    id: response.id ?? null,
    object: "chat.completion.chunk",
    created: response.created ?? null,
    model: response.model ?? null,
    choices: [{ index: 0, delta, finish_reason: choice.finish_reason ?? null }],
  };
  if (response.usage !== null && response.usage !== undefined) chunk.usage = response.usage;
  return chunk;
}

/** The SSE body of a fake stream: one data event, then `[DONE]`. */
export function renderFakeStream(response: Record<string, unknown>): string {
  return `data: ${dumpsPy(toStreamChunk(response), PY_RESPONSE_JSON)}\n\ndata: [DONE]\n\n`;
}
