// The mock backend itself: msw request handlers that answer like SGLang's HTTP server.
// Both transports (node:http bridge, in-process setupServer) serve these same handlers.
import { randomBytes } from "node:crypto";
import { http, type RequestHandler } from "msw";
import type { ChatMessage, ChatTemplateKwargs, Tokenizer, ToolSpec } from "../tokenizer/types";
import type { FinishReason, ProcessFunction, ProcessResult } from "./types";
import type { TokenRef } from "../tokenizer/families/types";
import { stopTokenId, type MockFormats } from "./mock-model";
import { planLookupKeys, type ReplyPlanRegistry } from "./reply-plans";
import { plannedReplyAsThePromptAsks } from "./thinking-mode";
import { BackendStatsRecorder } from "./stats";
import { LatencyWaits } from "./latency-waits";
import { decodePromptIds } from "./prompt-texts";
import { RequestBodyMemo, type ParsedBody } from "./request-body-memo";
import type { DirectRoute } from "./http-bridge";
import { errorReply, errorResponse, jsonResponse, jsonTextReply, notFoundMessage, toResponse, type MockReply } from "./errors";
import { checkRoutingOptions, readRoutingRequest, type MockRoutingOptions, type RoutingRequest } from "./routing-buffers";
import { chatCompletionJson, chatCompletionSseText, generateReplyJson, type PromptView, type ReplyContext } from "./replies";
import { fitsTemplate, makeTemplate, writeChatTemplate, writeGenerateTemplate, type ReplyTemplate } from "./reply-templates";
import { ignoresRequest } from "./request-blind";

/** The stop token a Qwen3 engine reports at the end of a finished turn. */
export const QWEN3_STOP_TOKEN = "<|im_end|>";

/** Default `model` of replies when the request names none. */
export const DEFAULT_MOCK_MODEL = "mock-model";

/** Options of {@link createBackendHandlers} (routing replay: `routedExperts`, `indexerTopk`). */
export interface BackendOptions extends MockRoutingOptions {
  /** Decides the completion for each prompt. */
  process: ProcessFunction;
  /** Tokenizer used to decode `input_ids`, render `messages` and encode completions (the family's template). */
  tokenizer: Tokenizer;
  /** How the family's tool calls and reasoning are written and parsed (default: `qwen25` tool calls, no reasoning parser). */
  formats?: MockFormats;
  /** The token ending a finished turn (default: the tokenizer's `eos_token`, else `<|im_end|>`). */
  stopToken?: TokenRef;
  /** Kwargs under each `messages` request's own `chat_template_kwargs` when the mock renders it (default none). */
  chatTemplateKwargs?: ChatTemplateKwargs;
  /** Delay before each generation reply, in milliseconds (default 0). */
  latencyMs?: number;
  /** Append `<|im_end|>` to the output ids of stop/tool-call finishes (default true). */
  emitStopToken?: boolean;
  /** `model` of replies whose request names none (default `"mock-model"`). */
  model?: string;
  /** Recorder the handlers log into; pass one to share it, otherwise a fresh one is used. */
  stats?: BackendStatsRecorder;
  /**
   * Serve only this origin (`http://host:port`) and answer 404 for its unknown paths. Default: match the
   * four routes on any origin and leave other paths unhandled (the bridge answers those itself).
   */
  origin?: string;
  /** Clock in seconds since the epoch, for `created` (default wall clock). */
  clock?: () => number;
  /** Source of the 8-hex-digit reply ids (default random). */
  idSource?: () => string;
  /** Aborting it ends pending latency waits (used by `close()`). */
  signal?: AbortSignal;
  /** Reply plans: a request whose routing key has a plan is answered from it instead of `process`. */
  plans?: ReplyPlanRegistry;
  /**
   * Report speculative-decoding counters (`spec_accept_token_num`, `spec_draft_token_num`, `spec_verify_ct`) in each
   * reply's `meta_info`, as SGLang does under `--speculative-algorithm` with this many draft tokens a step (default:
   * none reported). A process function's own `meta_info` values override them.
   */
  speculativeDraftTokens?: number;
}

/** A tokenizer given directly or loaded on first use. */
export type TokenizerSource = Tokenizer | (() => Promise<Tokenizer>);

/** {@link BackendOptions} with a lazily loaded tokenizer (used by the transports). */
export type LazyBackendOptions = Omit<BackendOptions, "tokenizer"> & { tokenizer: TokenizerSource };

class BadRequest extends Error {}

const GENERATION_PATHS = ["/v1/chat/completions", "/generate"] as const;
type GenerationPath = (typeof GENERATION_PATHS)[number];

/**
 * msw handlers for `POST /v1/chat/completions`, `POST /generate`, `GET /health` and `POST /abort_request`,
 * matching any origin (or only `options.origin`). Stats land in `options.stats` when given.
 */
export function createBackendHandlers(options: BackendOptions): RequestHandler[] {
  return buildBackendHandlers(options).handlers;
}

/**
 * Handlers plus the recorder they write to; accepts a lazily loaded tokenizer. All routes share one msw
 * handler that dispatches on method and path, so a request is matched (and cloned by msw) only once.
 */
export function buildBackendHandlers(options: LazyBackendOptions): { handlers: RequestHandler[]; stats: BackendStatsRecorder; directRoute?: DirectRoute } {
  const stats = options.stats ?? new BackendStatsRecorder();
  const engine = new MockEngine(options, stats);
  const origin = options.origin === undefined ? undefined : new URL(options.origin).origin;
  const routes = new Map<string, (request: Request) => Response | Promise<Response>>([
    ...GENERATION_PATHS.map((path) => [`POST ${path}`, (request: Request) => engine.handleGeneration(path, request)] as const),
    ["GET /health", () => jsonResponse(200, { status: "ok" })],
    ["POST /abort_request", () => jsonResponse(200, { status: "ok" })],
  ]);
  const routeKey = (request: Request): string => `${request.method} ${new URL(request.url).pathname}`;
  const served = (request: Request): boolean => (origin === undefined ? routes.has(routeKey(request)) : new URL(request.url).origin === origin);
  const handler = http.all(
    ({ request }) => served(request),
    ({ request }) => (routes.get(routeKey(request)) ?? ((unmatched: Request) => unknownPathResponse(stats, unmatched)))(request),
  );
  // The loopback bridge's shortcut for the generation routes: the same engine call the handler makes, without msw's
  // Request/Response objects (only for handlers that match any origin, as the bridge's are).
  const decoder = new TextDecoder();
  const bodies = new RequestBodyMemo((bytes) => decoder.decode(bytes), parseRequestBody);
  const directRoute: DirectRoute | undefined =
    origin !== undefined
      ? undefined
      : (method, path, body, headers) => {
          if (method !== "POST" || (path !== "/generate" && path !== "/v1/chat/completions")) return undefined;
          const { body: parsed, logged } = bodies.parsed(body);
          return engine.answerGeneration(path, method, parsed, logged, headers);
        };
  return { handlers: [handler], stats, directRoute };
}

/** Logs a request to a path the backend does not serve and answers 404 (shared with the bridge). */
export async function unknownPathResponse(stats: BackendStatsRecorder, request: Request): Promise<Response> {
  const path = new URL(request.url).pathname;
  const entry = stats.record(request.method, path, await request.text());
  entry.status = 404;
  return errorResponse(404, notFoundMessage(request.method, path));
}

/** The request body the handler answers (the log keeps the text and parses its own copy when read). */
function parseRequestBody(text: string): ParsedBody {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `request body is not valid JSON (${(error as Error).message})` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { problem: "request body must be a JSON object" };
  return { parsed: value as Record<string, unknown> };
}

const ID_POOL_BYTES = 4096;
let idPool = Buffer.alloc(0);
let idPoolOffset = 0;

/** Eight random hex digits, cut from a refilled random pool (one crypto call per 1024 ids). */
function randomHexId(): string {
  if (idPoolOffset + 4 > idPool.length) {
    idPool = randomBytes(ID_POOL_BYTES);
    idPoolOffset = 0;
  }
  idPoolOffset += 4;
  return idPool.toString("hex", idPoolOffset - 4, idPoolOffset);
}

class MockEngine {
  private tokenizerPromise: Promise<Tokenizer> | undefined;
  private readonly latencyMs: number;
  private readonly emitStopToken: boolean;
  private readonly clock: () => number;
  private readonly idSource: () => string;
  private readonly latencyWaits = new LatencyWaits();
  private readonly repeats = new RepeatNotesStore();

  constructor(
    private readonly options: LazyBackendOptions,
    private readonly stats: BackendStatsRecorder,
  ) {
    this.latencyMs = options.latencyMs ?? 0;
    this.emitStopToken = options.emitStopToken ?? true;
    this.clock = options.clock ?? (() => Date.now() / 1000);
    this.idSource = options.idSource ?? randomHexId;
    checkRoutingOptions(options);
    const draft = options.speculativeDraftTokens;
    if (draft !== undefined && !(Number.isSafeInteger(draft) && draft > 0)) {
      throw new Error(`speculativeDraftTokens must be a positive integer, got ${JSON.stringify(draft)}`);
    }
  }

  private tokenizer(): Promise<Tokenizer> {
    const source = this.options.tokenizer;
    this.tokenizerPromise ??= typeof source === "function" ? source() : Promise.resolve(source);
    return this.tokenizerPromise;
  }

  async handleGeneration(path: GenerationPath, request: Request): Promise<Response> {
    const text = await request.text();
    return toResponse(await this.answerGeneration(path, request.method, parseRequestBody(text), text, () => request.headers));
  }

  /**
   * The reply to a generation request, whichever transport brought it (msw's Request or the bridge's socket):
   * `body` is its parsed body, `logged` what the log keeps of it (its text, or bytes that decode to it; only the log
   * holds it while the reply waits out the latency), `headers` gives the request's Headers (the same object each
   * call) and is called only when they are read.
   */
  async answerGeneration(path: GenerationPath, method: string, body: ParsedBody, logged: string | Uint8Array, headers: () => Headers): Promise<MockReply> {
    const entry = this.stats.record(method, path, logged);
    const reply = await this.reply(path, body, headers);
    entry.status = reply.status;
    return reply;
  }

  private async reply(path: GenerationPath, parsedBody: ParsedBody, headers: () => Headers): Promise<MockReply> {
    const { parsed: view, problem, copy } = parsedBody;
    if (view === undefined) return errorReply(400, problem ?? "request body must be a JSON object");
    // A repeated body comes as its kept parse, which nothing may change. When the prompt comes from `input_ids` or
    // `text` (no template renders `messages`), that kept parse is only read until the latency is over, and the
    // request's own copy is made then, so the copy is not held through the wait (and never made for a process
    // function that does not read its request: the builders only read the body). Otherwise it is made now.
    const deferCopy = copy !== undefined && (path === "/generate" || (view["input_ids"] !== undefined && view["input_ids"] !== null));
    let body = copy !== undefined && !deferCopy ? copy() : view;
    // What such a repeat derives from its body alone is kept with it: its prompt, routing flags and reply templates.
    const repeat = deferCopy ? this.repeats.notes(path, parsedBody) : undefined;
    let tokenizer: Tokenizer;
    let prompt: PromptView;
    let routing: RoutingRequest;
    try {
      tokenizer = await this.tokenizer();
    } catch (error) {
      return errorReply(500, `mock backend could not load its tokenizer: ${(error as Error).message}`);
    }
    try {
      const derived = repeat?.derived;
      if (derived !== undefined && derived.tokenizer === tokenizer) {
        ({ prompt, routing } = derived);
      } else {
        prompt = path === "/generate" ? generatePrompt(body, tokenizer) : chatPrompt(body, tokenizer, this.options.chatTemplateKwargs);
        flattenBeforeWait(prompt.text);
        routing = readRoutingRequest(body, prompt.ids.length, this.options);
        if (repeat !== undefined) {
          repeat.derived = { tokenizer, prompt, routing };
          repeat.templates = [];
        }
      }
    } catch (error) {
      return errorReply(400, (error as Error).message);
    }
    const signal = this.options.signal;
    this.stats.enter();
    try {
      if (this.latencyMs > 0) await this.latencyWaits.wait(this.latencyMs, signal);
      if (deferCopy && !ignoresRequest(this.options.process)) {
        body = copy();
        // the prompt's ids are the body's own `input_ids` array, as for a body parsed afresh
        if (prompt.ids === view["input_ids"]) prompt = { text: prompt.text, ids: body["input_ids"] as number[] };
      }
      // An empty registry answers no key (and counts nothing): the headers need not be read for it.
      const plan = this.options.plans;
      const keys = plan === undefined || plan.size === 0 ? undefined : planLookupKeys(headers());
      const answered = keys === undefined ? undefined : plan?.answer(keys.routingKey, keys.callIndex);
      // a planned reply is the model's: under a prompt that leaves reasoning to the model, it thinks first
      const planned = answered === undefined ? undefined : plannedReplyAsThePromptAsks(answered, prompt.text, this.options.formats);
      const formats = this.options.formats;
      const result =
        planned ??
        (await this.options.process(prompt.text, body, {
          get headers() {
            return headers();
          },
          formats,
        }));
      checkProcessResult(result);
      const context = this.replyContext(tokenizer, routing);
      // the builders read only the kept parse (no copy was made): the reply may come from a template of that body
      if (repeat !== undefined && body === view) return templatedReply(path, repeat, this.repeats, body, prompt, result, context);
      if (path === "/generate") return jsonTextReply(200, generateReplyJson(prompt, result, context));
      if (body["stream"] === true) return chatSseReply(body, prompt, result, context);
      return jsonTextReply(200, chatCompletionJson(body, prompt, result, context));
    } catch (error) {
      if (signal?.aborted) return errorReply(503, "mock backend is shutting down");
      return errorReply(500, error instanceof Error ? error.message : String(error));
    } finally {
      this.stats.exit();
    }
  }

  private replyContext(tokenizer: Tokenizer, routing: RoutingRequest): ReplyContext {
    return {
      routing: routing.routedExperts || routing.indexerTopk ? { request: routing, options: this.options } : undefined,
      tokenizer,
      stopTokenId: stopTokenId(tokenizer, this.options.stopToken ?? { eos: true }),
      formats: this.options.formats,
      emitStopToken: this.emitStopToken,
      model: this.options.model ?? DEFAULT_MOCK_MODEL,
      now: this.clock,
      newId: this.idSource,
      speculativeDraftTokens: this.options.speculativeDraftTokens,
    };
  }
}

/**
 * Makes V8 flatten a string now (reading a character does; the value is unchanged): a prompt decoded piece by
 * piece is a rope of dozens of pieces that the process function's searches would flatten later anyway. Flat before
 * the latency wait, one string instead of the rope stays alive across it, less for each young-generation collection
 * to copy while hundreds of requests wait.
 */
function flattenBeforeWait(text: string): void {
  text.charCodeAt(0);
}

/** What a repeated body's requests to one route share once the first of them has derived it (per engine and route). */
interface RepeatNotes {
  /** The prompt of the kept parse (its `input_ids` array itself, or the ids of its `text`) and its routing flags. */
  derived?: { tokenizer: Tokenizer; prompt: PromptView; routing: RoutingRequest };
  /** The latest reply templates of this body on this route with that tokenizer, newest first. */
  templates?: ReplyTemplate[];
}

/** Most reply templates kept per repeated body (a process function may answer the same prompt in a few ways). */
const TEMPLATES_PER_BODY = 4;
/** Larger replies are not kept as templates. */
const TEMPLATE_MAX_BYTES = 1024 * 1024;
/** Most template bytes made before every note is dropped (the bodies kept then derive theirs again). */
const TEMPLATE_BUDGET_BYTES = 16 * 1024 * 1024;

/**
 * The notes of repeated bodies, per route; each lives as long as its body is kept by the memo (the same ParsedBody
 * object for every repeat of its bytes), and all are dropped once the templates made pass a byte budget.
 */
class RepeatNotesStore {
  private chat = new WeakMap<ParsedBody, RepeatNotes>();
  private generate = new WeakMap<ParsedBody, RepeatNotes>();
  private templateBytes = 0;

  notes(path: GenerationPath, body: ParsedBody): RepeatNotes {
    const byBody = path === "/generate" ? this.generate : this.chat;
    let notes = byBody.get(body);
    if (notes === undefined) {
      notes = {};
      byBody.set(body, notes);
    }
    return notes;
  }

  /** Whether a template of `bytes` may be kept; counts it when it may. */
  keep(bytes: number): boolean {
    if (bytes > TEMPLATE_MAX_BYTES) return false;
    this.templateBytes += bytes;
    if (this.templateBytes > TEMPLATE_BUDGET_BYTES) {
      this.chat = new WeakMap();
      this.generate = new WeakMap();
      this.templateBytes = bytes;
    }
    return true;
  }
}

function chatSseReply(body: Record<string, unknown>, prompt: PromptView, result: ProcessResult, context: ReplyContext): MockReply {
  const text = chatCompletionSseText(body, prompt, result, context);
  return { status: 200, text, headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } };
}

/**
 * The reply to a repeated body that the builders read as kept: written from a template of an earlier reply to it when
 * the result and context fit one (the id source and clock called as the builders call them), else built by the
 * builders and kept as a template for the next repeat. A stream is always built.
 */
function templatedReply(
  path: GenerationPath,
  repeat: RepeatNotes,
  store: RepeatNotesStore,
  body: Record<string, unknown>,
  prompt: PromptView,
  result: ProcessResult,
  context: ReplyContext,
): MockReply {
  const kind = path === "/generate" ? "generate" : "chat";
  if (kind === "chat" && body["stream"] === true) return chatSseReply(body, prompt, result, context);
  const templates = (repeat.templates ??= []);
  for (const template of templates) {
    if (!fitsTemplate(template, result, context)) continue;
    if (kind === "chat") return writeChatTemplate(template, context);
    const id: unknown = context.newId();
    if (typeof id === "string") return writeGenerateTemplate(template, id);
    return jsonTextReply(200, generateReplyJson(prompt, result, { ...context, newId: () => id as string }));
  }
  let id: unknown;
  let now: unknown;
  const recording: ReplyContext = {
    ...context,
    newId: () => (id = context.newId()),
    now: () => (now = context.now()),
  };
  const text = kind === "chat" ? chatCompletionJson(body, prompt, result, recording) : generateReplyJson(prompt, result, recording);
  const template = makeTemplate(kind, text, result, context, id, now);
  if (template !== undefined && store.keep(template.head.length + template.tail.length)) {
    templates.unshift(template);
    if (templates.length > TEMPLATES_PER_BODY) templates.pop();
  }
  return jsonTextReply(200, text);
}

const FINISH_REASONS: readonly string[] = ["stop", "tool_calls", "length", "abort"] satisfies readonly FinishReason[];

/** Refuses a process result the reply builders would turn into a malformed reply (answered as a 500 naming the field). */
function checkProcessResult(result: ProcessResult): void {
  if (result === null || typeof result !== "object" || typeof result.text !== "string") {
    throw new Error("process function must return an object with a string `text`");
  }
  const { finish_reason: finishReason, cached_tokens: cachedTokens, meta_info: metaInfo } = result;
  if (finishReason !== undefined && !FINISH_REASONS.includes(finishReason)) {
    throw new Error(`process function returned finish_reason ${JSON.stringify(finishReason)}; expected one of ${FINISH_REASONS.join(", ")}`);
  }
  if (cachedTokens !== undefined && !(Number.isSafeInteger(cachedTokens) && cachedTokens >= 0)) {
    throw new Error(`process function returned cached_tokens ${JSON.stringify(cachedTokens)}; expected a non-negative integer`);
  }
  if (metaInfo !== undefined && (metaInfo === null || typeof metaInfo !== "object" || Array.isArray(metaInfo))) {
    throw new Error("process function returned a `meta_info` that is not an object");
  }
}

function readInputIds(body: Record<string, unknown>): number[] | undefined {
  const ids = body["input_ids"];
  if (ids === undefined || ids === null) return undefined;
  if (!Array.isArray(ids) || !allTokenIds(ids)) throw new BadRequest("`input_ids` must be an array of non-negative integer token ids");
  return ids as number[];
}

/** `ids.every(isTokenId)` for a parsed JSON array (which has no holes for `every` to skip), as a plain loop. */
function allTokenIds(ids: readonly unknown[]): boolean {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (!(Number.isInteger(id) && (id as number) >= 0)) return false;
  }
  return true;
}

function chatPrompt(body: Record<string, unknown>, tokenizer: Tokenizer, defaults: ChatTemplateKwargs | undefined): PromptView {
  const tools = body["tools"];
  if (tools !== undefined && tools !== null && !Array.isArray(tools)) throw new BadRequest("`tools` must be an array");
  const inputIds = readInputIds(body);
  if (inputIds !== undefined) return { text: decodePromptIds(tokenizer, inputIds), ids: inputIds };
  const messages = body["messages"];
  if (messages === undefined || messages === null) {
    throw new BadRequest("request needs `messages` or `input_ids`");
  }
  if (!Array.isArray(messages) || !messages.every((m: unknown) => m !== null && typeof m === "object" && typeof (m as { role?: unknown }).role === "string")) {
    throw new BadRequest("`messages` must be an array of objects with a string `role`");
  }
  const kwargs = body["chat_template_kwargs"];
  if (kwargs !== undefined && kwargs !== null && (typeof kwargs !== "object" || Array.isArray(kwargs))) {
    throw new BadRequest("`chat_template_kwargs` must be an object");
  }
  let text: string;
  try {
    text = tokenizer.renderChatTemplate(messages as ChatMessage[], {
      tools: (tools as ToolSpec[] | null | undefined) ?? null,
      addGenerationPrompt: true,
      // the mock's --chat-template-kwargs under the request's own
      kwargs: { ...defaults, ...((kwargs as ChatTemplateKwargs | null | undefined) ?? {}) },
    });
  } catch (error) {
    throw new BadRequest(`chat template could not render \`messages\` with \`tools\`: ${(error as Error).message}`);
  }
  return { text, ids: tokenizer.encode(text) };
}

function generatePrompt(body: Record<string, unknown>, tokenizer: Tokenizer): PromptView {
  const inputIds = readInputIds(body);
  if (inputIds !== undefined) return { text: decodePromptIds(tokenizer, inputIds), ids: inputIds };
  if (typeof body["text"] === "string") return { text: body["text"], ids: tokenizer.encode(body["text"]) };
  throw new BadRequest("request needs `input_ids` (or `text`)");
}
