// Builds SGLang-shaped reply bodies (OpenAI chat completion, /generate) from a process result.
// Pure: token ids come from the tokenizer handed in, time and ids from the context; no I/O here.
import { randomBytes } from "node:crypto";
import { plannedLogprobs } from "./reply-plans";
import { stringifyReplyJson } from "./reply-json";
import { pushContentArrayJson, pushPairsArrayJson, tokenizerMemo, tokenText, type CompletionLogprobs } from "./reply-token-json";
import type { Tokenizer, ToolSpec } from "../tokenizer/types";
import type { FinishReason, ProcessResult } from "./types";
import { routingMetaInfo, type MockRoutingOptions, type RoutingRequest } from "./routing-buffers";
import { QWEN25_TOOL_CALLS } from "./formats/qwen25";
import type { MockFormats } from "./mock-model";

/** Everything a reply builder needs besides the request and the process result. */
export interface ReplyContext {
  tokenizer: Tokenizer;
  /** Id of the stop token (Qwen3 `<|im_end|>`), appended on stop/tool-call finishes when `emitStopToken`. */
  stopTokenId: number | undefined;
  /** How reasoning and tool calls are read out of the completion text (default: `qwen25` tool calls, no reasoning). */
  formats?: MockFormats;
  emitStopToken: boolean;
  model: string;
  /** Seconds since the epoch (integer part goes into `created`). */
  now(): number;
  /** Fresh 8-hex-digit id for `chatcmpl-<id>` and generate `meta_info.id`. */
  newId(): string;
  /** The request's routing-replay flags and the engine's buffer shapes (absent: no routing payloads). */
  routing?: { request: RoutingRequest; options: MockRoutingOptions };
  /** Draft tokens per verify step of a speculating engine (absent: the engine reports no `spec_*` counters). */
  speculativeDraftTokens?: number;
}

/**
 * The `spec_*` counters a speculating engine (SGLang with `--speculative-algorithm`, e.g. EAGLE, `k` draft tokens a
 * step) reports for `n` output tokens, as if every step accepted all it could: each verify step yields its accepted
 * drafts plus one token of its own, so `ceil(n / (k + 1))` steps, `n - steps` accepted, `steps * k` drafted.
 */
export function speculativeCounters(n: number, k: number): { spec_accept_token_num: number; spec_draft_token_num: number; spec_verify_ct: number } {
  const steps = Math.ceil(n / (k + 1));
  return { spec_accept_token_num: n - steps, spec_draft_token_num: steps * k, spec_verify_ct: steps };
}

function specMeta(context: ReplyContext, outputCount: number): Record<string, unknown> {
  return context.speculativeDraftTokens === undefined ? {} : speculativeCounters(outputCount, context.speculativeDraftTokens);
}

function routingMeta(context: ReplyContext, promptIds: readonly number[], outputIds: readonly number[]): Record<string, unknown> {
  if (context.routing === undefined) return {};
  return routingMetaInfo(context.routing.request, [...promptIds, ...outputIds], context.routing.options);
}

/** Whether the reasoning parser starts inside the block: opened by the prompt, or forced by the request's kwarg. */
function reasoningForced(formats: MockFormats, body: Record<string, unknown>): boolean {
  if (formats.reasoningOpenedByPrompt) return true;
  const key = formats.reasoningForcedByKwarg;
  if (key === undefined) return false;
  const kwargs = body["chat_template_kwargs"];
  return kwargs !== null && typeof kwargs === "object" && (kwargs as Record<string, unknown>)[key] === true;
}

/** The prompt as the backend saw it. */
export interface PromptView {
  /** Text handed to the process function. */
  text: string;
  /** Prompt token ids (the request's `input_ids`, else the encoding of `text`). */
  ids: readonly number[];
}

/** `[logprob, token_id]` pair as SGLang reports it in `meta_info.output_token_logprobs`. */
type TokenLogprob = [number, number];

interface Completion {
  ids: number[];
  logprobs: CompletionLogprobs;
  finishReason: FinishReason;
  /** The JSON of the two per-token arrays of these ids with the default ramp, kept with the encoded text. */
  rampArrays?: Map<number, TokenArraysJson>;
  /** Key of this completion's ids in `rampArrays`: the stop token id appended to the text's ids, or -1. */
  rampKey: number;
}

/** The JSON texts of `logprobs.content` and `meta_info.output_token_logprobs`. */
interface TokenArraysJson {
  content: string;
  pairs: string;
}

/**
 * How a builder fills the two per-token arrays: as the objects themselves, or as marks (strings no reply holds: a
 * per-process random nonce) that {@link spliceTokenArrays} replaces in the written JSON by the arrays' own text.
 */
type TokenArrays = "objects" | "marks";

const MARK_NONCE = randomBytes(12).toString("hex");
const CONTENT_MARK = `\u0000logprobs.content:${MARK_NONCE}\u0000`;
const PAIRS_MARK = `\u0000output_token_logprobs:${MARK_NONCE}\u0000`;
const QUOTED_CONTENT_MARK = JSON.stringify(CONTENT_MARK);
const QUOTED_PAIRS_MARK = JSON.stringify(PAIRS_MARK);

function logprobPairs(completion: Completion): TokenLogprob[] {
  return completion.ids.map((id, position): TokenLogprob => [completion.logprobs.values[position], id]);
}

/** Most completion texts remembered per tokenizer; the memo is emptied when it would grow past this. */
const COMPLETION_MEMO_LIMIT = 1024;

/** A completion text's ids, and the array JSON of replies with the default log-probs (by appended stop token). */
interface EncodedText {
  ids: readonly number[];
  rampArrays: Map<number, TokenArraysJson>;
}

/** Per tokenizer, completion texts already encoded (a process function often repeats its texts). */
const completionIds = new WeakMap<Tokenizer, Map<string, EncodedText>>();

/** `tokenizer.encode(text)`, encoding each distinct text once (encoding is deterministic); callers copy the ids. */
function encodeCompletion(tokenizer: Tokenizer, text: string): EncodedText {
  const memo = tokenizerMemo(completionIds, tokenizer);
  let encoded = memo.get(text);
  if (encoded === undefined) {
    encoded = { ids: tokenizer.encode(text), rampArrays: new Map() };
    if (memo.size >= COMPLETION_MEMO_LIMIT) memo.clear();
    memo.set(text, encoded);
  }
  return encoded;
}

function completeTokens(result: ProcessResult, finishReason: FinishReason, context: ReplyContext): Completion {
  const encoded = encodeCompletion(context.tokenizer, result.text);
  const ids = [...encoded.ids];
  const endsWithStop = finishReason === "stop" || finishReason === "tool_calls";
  let rampKey = -1;
  if (endsWithStop && context.emitStopToken && context.stopTokenId !== undefined) {
    ids.push(context.stopTokenId);
    rampKey = context.stopTokenId;
  }
  // A fuzz plan's seed decides the log-probs; otherwise miles' mock SGLang rule (mock_sglang_server.py:
  // `-1 / 128 * i`): the first log-prob is -0.0, a negative zero that every parity run then carries from the
  // backend reply to the samples payload.
  const seed = result.output_logprobs_seed;
  const planned = seed === undefined ? null : plannedLogprobs(seed, ids.length);
  const values = planned ?? ids.map((_id, position) => -position / 128);
  return { ids, logprobs: { values, ramp: planned === null }, finishReason, rampArrays: planned === null ? encoded.rampArrays : undefined, rampKey };
}

/**
 * The JSON of the completion's two per-token arrays; with the default log-probs they depend only on the tokenizer
 * and the ids, so they are written once per completion text and appended stop token and then reused.
 */
function tokenArraysJson(completion: Completion, context: ReplyContext): TokenArraysJson {
  const kept = completion.rampArrays?.get(completion.rampKey);
  if (kept !== undefined) return kept;
  const content: string[] = [];
  pushContentArrayJson(content, context.tokenizer, completion.ids, completion.logprobs);
  const pairs: string[] = [];
  pushPairsArrayJson(pairs, completion.ids, completion.logprobs);
  const arrays = { content: content.join(""), pairs: pairs.join("") };
  completion.rampArrays?.set(completion.rampKey, arrays);
  return arrays;
}

function metaExtras(result: ProcessResult): Record<string, unknown> {
  const extras: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(result.meta_info ?? {})) if (value !== undefined) extras[key] = value;
  return extras;
}

/**
 * The non-streaming chat completion reply. `meta_info` sits inside `choices[0]` as SGLang returns it with
 * `return_meta_info`; process `meta_info` extras are merged last (they may override computed keys on purpose).
 */
export function buildChatCompletion(body: Record<string, unknown>, prompt: PromptView, result: ProcessResult, context: ReplyContext): Record<string, unknown> {
  return chatCompletion(body, prompt, result, context, "objects").reply;
}

/**
 * The JSON text of the non-streaming chat completion reply: exactly `stringifyReplyJson(buildChatCompletion(...))`
 * (same calls of `context.newId` and `context.now`), written without the per-token objects.
 */
export function chatCompletionJson(body: Record<string, unknown>, prompt: PromptView, result: ProcessResult, context: ReplyContext): string {
  const { reply, completion } = chatCompletion(body, prompt, result, context, "marks");
  return spliceTokenArrays(stringifyReplyJson(reply), completion, context);
}

/** The streamed chat completion: exactly `chatCompletionToSse(buildChatCompletion(...))` (the stream carries no per-token arrays). */
export function chatCompletionSseText(body: Record<string, unknown>, prompt: PromptView, result: ProcessResult, context: ReplyContext): string {
  return chatCompletionToSse(chatCompletion(body, prompt, result, context, "marks").reply);
}

function chatCompletion(
  body: Record<string, unknown>,
  prompt: PromptView,
  result: ProcessResult,
  context: ReplyContext,
  arrays: TokenArrays,
): { reply: Record<string, unknown>; completion: Completion } {
  const tools = Array.isArray(body["tools"]) ? (body["tools"] as ToolSpec[]) : [];
  let finishReason: FinishReason = result.finish_reason ?? "stop";
  let content = result.text;
  let reasoning: string | null = null;
  const formats = context.formats;
  if (formats?.reasoning) {
    // SGLang separates reasoning first, then hands the rest to the tool-call parser
    const split = formats.reasoning.parse(content, reasoningForced(formats, body));
    reasoning = split.reasoning;
    content = split.content;
  }
  let toolCalls: Record<string, unknown>[] | null = null;
  if (tools.length > 0 && (finishReason === "stop" || finishReason === "tool_calls")) {
    const parsed = (formats?.toolCalls ?? QWEN25_TOOL_CALLS).parse(content, tools);
    if (parsed.calls.length > 0) {
      finishReason = "tool_calls";
      content = parsed.content;
      toolCalls = parsed.calls.map((call, position) => ({
        id: call.id ?? (formats?.toolCalls.idsPerPrompt === true ? `call_${prompt.ids.length}_${position}` : `call${String(position).padStart(5, "0")}`),
        index: call.toolIndex,
        type: "function",
        function: { name: call.name, arguments: call.arguments },
      }));
    }
  }
  const completion = completeTokens(result, finishReason, context);
  const cachedTokens = result.cached_tokens ?? 0;
  const choice: Record<string, unknown> = {
    index: 0,
    message:
      reasoning === null
        ? { role: "assistant", content, tool_calls: toolCalls }
        : { role: "assistant", content, reasoning_content: reasoning, tool_calls: toolCalls },
    logprobs: {
      content: arrays === "marks" ? CONTENT_MARK : completion.ids.map((id, position) => tokenLogprobEntry(id, completion.logprobs.values[position], context)),
    },
    finish_reason: completion.finishReason,
    meta_info: {
      output_token_logprobs: arrays === "marks" ? PAIRS_MARK : logprobPairs(completion),
      completion_tokens: completion.ids.length,
      prompt_tokens: prompt.ids.length,
      cached_tokens: cachedTokens,
      ...routingMeta(context, prompt.ids, completion.ids),
      ...specMeta(context, completion.ids.length),
      ...metaExtras(result),
    },
  };
  if (body["return_prompt_token_ids"] === true) choice["prompt_token_ids"] = [...prompt.ids];
  const reply = {
    id: `chatcmpl-${context.newId()}`,
    object: "chat.completion",
    created: Math.floor(context.now()),
    model: typeof body["model"] === "string" && body["model"] ? body["model"] : context.model,
    choices: [choice],
    usage: {
      prompt_tokens: prompt.ids.length,
      completion_tokens: completion.ids.length,
      total_tokens: prompt.ids.length + completion.ids.length,
      prompt_tokens_details: { cached_tokens: cachedTokens },
    },
  };
  return { reply, completion };
}

/**
 * `text` with the per-token arrays' JSON where a builder left their marks (each mark at most once: a process
 * `meta_info` that overrides `output_token_logprobs` leaves no mark). Both marks are found in the text as written,
 * then spliced in order of position; one join writes the reply as a flat string.
 */
function spliceTokenArrays(text: string, completion: Completion, context: ReplyContext): string {
  const contentAt = text.indexOf(QUOTED_CONTENT_MARK);
  const pairsAt = text.indexOf(QUOTED_PAIRS_MARK);
  if (contentAt === -1 && pairsAt === -1) return text;
  const arrays = tokenArraysJson(completion, context);
  const pieces: [at: number, length: number, json: string][] = [];
  if (contentAt !== -1) pieces.push([contentAt, QUOTED_CONTENT_MARK.length, arrays.content]);
  if (pairsAt !== -1) pieces.push([pairsAt, QUOTED_PAIRS_MARK.length, arrays.pairs]);
  if (pieces.length === 2 && pieces[0][0] > pieces[1][0]) pieces.reverse();
  const parts: string[] = [];
  let from = 0;
  for (const [at, length, json] of pieces) {
    parts.push(text.slice(from, at), json);
    from = at + length;
  }
  parts.push(text.slice(from));
  return parts.join("");
}

function tokenLogprobEntry(id: number, logprob: number, context: ReplyContext): Record<string, unknown> {
  const { token, bytes } = tokenText(context.tokenizer, id);
  return { token, token_id: id, logprob, bytes: [...bytes], top_logprobs: [] };
}

/** The native `/generate` reply: `{text, meta_info}` with a `{type, ...}` finish reason object. */
export function buildGenerateReply(prompt: PromptView, result: ProcessResult, context: ReplyContext): Record<string, unknown> {
  return generateReply(prompt, result, context, "objects").reply;
}

/** The JSON text of the `/generate` reply: exactly `stringifyReplyJson(buildGenerateReply(...))`, without the per-token pairs. */
export function generateReplyJson(prompt: PromptView, result: ProcessResult, context: ReplyContext): string {
  const { reply, completion } = generateReply(prompt, result, context, "marks");
  return spliceTokenArrays(stringifyReplyJson(reply), completion, context);
}

function generateReply(
  prompt: PromptView,
  result: ProcessResult,
  context: ReplyContext,
  arrays: TokenArrays,
): { reply: Record<string, unknown>; completion: Completion } {
  const completion = completeTokens(result, result.finish_reason ?? "stop", context);
  const finishReason: Record<string, unknown> = { type: completion.finishReason };
  if (completion.finishReason === "length") finishReason["length"] = completion.ids.length;
  const endsWithStopToken = completion.ids.length > 0 && completion.ids[completion.ids.length - 1] === context.stopTokenId;
  if (completion.finishReason !== "length" && completion.finishReason !== "abort" && endsWithStopToken) {
    finishReason["matched"] = context.stopTokenId;
  }
  const reply = {
    text: result.text,
    meta_info: {
      id: context.newId(),
      finish_reason: finishReason,
      prompt_tokens: prompt.ids.length,
      cached_tokens: result.cached_tokens ?? 0,
      completion_tokens: completion.ids.length,
      output_token_logprobs: arrays === "marks" ? PAIRS_MARK : logprobPairs(completion),
      ...routingMeta(context, prompt.ids, completion.ids),
      ...specMeta(context, completion.ids.length),
      ...metaExtras(result),
    },
  };
  return { reply, completion };
}

/**
 * Renders a chat completion as an OpenAI SSE stream: one chunk carrying the whole delta (tool calls with
 * their position as `index`), one chunk with the finish reason and usage, then `[DONE]`.
 */
export function chatCompletionToSse(reply: Record<string, unknown>): string {
  const choice = (reply["choices"] as Record<string, unknown>[])[0];
  const message = choice["message"] as Record<string, unknown>;
  const delta: Record<string, unknown> = { role: "assistant", content: message["content"] };
  if (typeof message["reasoning_content"] === "string") delta["reasoning_content"] = message["reasoning_content"];
  const toolCalls = message["tool_calls"] as Record<string, unknown>[] | null;
  if (toolCalls) delta["tool_calls"] = toolCalls.map((call, position) => ({ ...call, index: position }));
  const head = { id: reply["id"], object: "chat.completion.chunk", created: reply["created"], model: reply["model"] };
  const chunks = [
    { ...head, choices: [{ index: 0, delta, finish_reason: null }] },
    { ...head, choices: [{ index: 0, delta: {}, finish_reason: choice["finish_reason"] }], usage: reply["usage"] },
  ];
  return chunks.map((chunk) => `data: ${stringifyReplyJson(chunk)}\n\n`).join("") + "data: [DONE]\n\n";
}
