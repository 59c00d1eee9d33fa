// Reply templates: a repeated request body answered with the same process result gets the same reply text but for
// its id (and a chat reply's `created`), so that reply is written as bytes from the first one's text around them.
import { isProxy } from "node:util/types";
import type { MockReply } from "./errors";
import type { ReplyContext } from "./replies";
import { numberJson } from "./reply-token-json";
import type { ProcessResult } from "./types";

/** Which reply a template writes: the non-streaming chat completion or the `/generate` reply. */
export type TemplateKind = "chat" | "generate";

/** The process result fields a reply is made of (any other key of a result is never read). */
const RESULT_FIELDS = ["text", "finish_reason", "cached_tokens", "meta_info", "output_logprobs_seed"] as const;

/** The first reply's text of a body and what it was made from; replies to the same body from the same inputs differ only in the holes. */
export interface ReplyTemplate {
  readonly kind: TemplateKind;
  readonly text: string;
  readonly finishReason: unknown;
  readonly cachedTokens: unknown;
  readonly seed: unknown;
  /** `meta_info`'s own enumerable keys in order (undefined: no `meta_info`), and their primitive values. */
  readonly metaKeys: readonly string[] | undefined;
  readonly metaValues: readonly unknown[];
  /** The context's fields a reply reads, and the routing configs' numbers when a routing payload is asked for. */
  readonly context: readonly unknown[];
  /** The bytes before the id's JSON: `{"id":` (chat), `{"text":…,"meta_info":{"id":` (generate). */
  readonly head: Buffer;
  /** The bytes after the chat reply's `created` value, or after the generate reply's id. */
  readonly tail: Buffer;
}

const CHAT_HEAD = '{"id":';
const CHAT_MIDDLE = ',"object":"chat.completion","created":';
const CHAT_MIDDLE_BYTES = Buffer.from(CHAT_MIDDLE);

/**
 * Reading these result fields invokes nothing and gives the same value every time: a plain object (no proxy, no
 * prototype but Object's or none) whose fields are data properties or absent (and not inherited).
 */
function plainFields(result: object): boolean {
  if (isProxy(result)) return false;
  const prototype: unknown = Object.getPrototypeOf(result);
  if (prototype !== Object.prototype && prototype !== null) return false;
  for (const name of RESULT_FIELDS) {
    const descriptor = Object.getOwnPropertyDescriptor(result, name);
    if (descriptor === undefined ? name in result : !("value" in descriptor)) return false;
  }
  return true;
}

/** A value the reply writer spells without calling anything, compared by `Object.is`. */
function isPlainPrimitive(value: unknown): boolean {
  const type = typeof value;
  return value === null || type === "string" || type === "number" || type === "boolean" || type === "undefined";
}

/**
 * `meta_info`'s entries as `Object.entries` reads them (own enumerable string keys, in order), when each is a data
 * property holding a primitive; undefined otherwise (a proxy, an accessor, an object value).
 */
function metaEntries(meta: object): { keys: string[]; values: unknown[] } | undefined {
  if (isProxy(meta)) return undefined;
  const keys: string[] = [];
  const values: unknown[] = [];
  for (const key in meta) {
    if (!Object.prototype.hasOwnProperty.call(meta, key)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(meta, key) as PropertyDescriptor;
    if (!("value" in descriptor) || !isPlainPrimitive(descriptor.value)) return undefined;
    keys.push(key);
    values.push(descriptor.value);
  }
  return { keys, values };
}

/** True when `meta_info` holds exactly these entries, as data properties, in this order (nothing invoked to find out). */
function sameMeta(meta: unknown, keys: readonly string[] | undefined, values: readonly unknown[]): boolean {
  if (meta === undefined || keys === undefined) return meta === undefined && keys === undefined;
  if (meta === null || typeof meta !== "object" || isProxy(meta)) return false;
  let at = 0;
  for (const key in meta) {
    if (!Object.prototype.hasOwnProperty.call(meta, key)) continue;
    if (at >= keys.length || keys[at] !== key) return false;
    const descriptor = Object.getOwnPropertyDescriptor(meta, key) as PropertyDescriptor;
    if (!("value" in descriptor) || !Object.is(descriptor.value, values[at])) return false;
    at++;
  }
  return at === keys.length;
}

/** The context fields the reply builders read (all but the clock and the id source), routing configs by their numbers. */
function contextInputs(context: ReplyContext): unknown[] {
  const routing = context.routing;
  const inputs: unknown[] = [context.tokenizer, context.stopTokenId, context.formats, context.emitStopToken, context.model, routing === undefined];
  if (routing !== undefined) {
    const { request, options } = routing;
    inputs.push(request.routedExperts, request.startRow, request.indexerTopk);
    inputs.push(options.routedExperts?.numLayers, options.routedExperts?.topk, options.routedExperts?.numExperts);
    inputs.push(options.indexerTopk?.numLayers, options.indexerTopk?.topk);
  }
  return inputs;
}

/** {@link contextInputs} compared with kept ones, without building the list. */
function sameContext(kept: readonly unknown[], context: ReplyContext): boolean {
  const routing = context.routing;
  if (
    kept[0] !== context.tokenizer ||
    !Object.is(kept[1], context.stopTokenId) ||
    kept[2] !== context.formats ||
    kept[3] !== context.emitStopToken ||
    kept[4] !== context.model ||
    kept[5] !== (routing === undefined)
  ) {
    return false;
  }
  if (routing === undefined) return true;
  const { request, options } = routing;
  return (
    kept[6] === request.routedExperts &&
    kept[7] === request.startRow &&
    kept[8] === request.indexerTopk &&
    kept[9] === options.routedExperts?.numLayers &&
    kept[10] === options.routedExperts?.topk &&
    kept[11] === options.routedExperts?.numExperts &&
    kept[12] === options.indexerTopk?.numLayers &&
    kept[13] === options.indexerTopk?.topk
  );
}

/** The UTF-8 bytes of a text that round-trips through them (no lone surrogate), else undefined. */
function exactBytes(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, "utf8");
  return bytes.toString("utf8") === text ? bytes : undefined;
}

/**
 * A template of `text`, the reply the reference builders wrote for `result` in `context` while the context's id
 * source gave `id` and its clock `now` (one call each; the clock only for chat). Undefined when the result is not
 * plain data, the id or time is not a plain string or number, or the text does not start as the reply's holes say.
 */
export function makeTemplate(
  kind: TemplateKind,
  text: string,
  result: ProcessResult,
  context: ReplyContext,
  id: unknown,
  now: unknown,
): ReplyTemplate | undefined {
  if (!plainFields(result) || typeof id !== "string") return undefined;
  const { finish_reason: finishReason, cached_tokens: cachedTokens, output_logprobs_seed: seed, meta_info: meta } = result;
  if (!isPlainPrimitive(finishReason) || !isPlainPrimitive(cachedTokens) || !isPlainPrimitive(seed)) return undefined;
  const entries = meta === undefined ? { keys: undefined, values: [] } : metaEntries(meta);
  if (entries === undefined) return undefined;
  let head: string;
  let prefix: string;
  if (kind === "chat") {
    if (typeof now !== "number") return undefined;
    head = CHAT_HEAD;
    prefix = `${CHAT_HEAD}${JSON.stringify(`chatcmpl-${id}`)}${CHAT_MIDDLE}${numberJson(Math.floor(now))}`;
  } else {
    head = `{"text":${JSON.stringify(result.text)},"meta_info":{"id":`;
    prefix = `${head}${JSON.stringify(id)}`;
  }
  if (!text.startsWith(prefix)) return undefined;
  const headBytes = exactBytes(head);
  const tailBytes = exactBytes(text.slice(prefix.length));
  if (headBytes === undefined || tailBytes === undefined) return undefined;
  return {
    kind,
    text: result.text,
    finishReason,
    cachedTokens,
    seed,
    metaKeys: entries.keys,
    metaValues: entries.values,
    context: contextInputs(context),
    head: headBytes,
    tail: tailBytes,
  };
}

/** True when the reference builders would write `template`'s reply (but for its holes) for `result` in `context`. */
export function fitsTemplate(template: ReplyTemplate, result: ProcessResult, context: ReplyContext): boolean {
  return (
    plainFields(result) &&
    result.text === template.text &&
    Object.is(result.finish_reason, template.finishReason) &&
    Object.is(result.cached_tokens, template.cachedTokens) &&
    Object.is(result.output_logprobs_seed, template.seed) &&
    sameMeta(result.meta_info, template.metaKeys, template.metaValues) &&
    sameContext(template.context, context)
  );
}

/** A reply whose body is already written as bytes, in pieces; its text (for a Fetch Response) is decoded on demand. */
class WrittenReply implements MockReply {
  readonly status = 200;
  readonly headers: Record<string, string>;

  constructor(readonly parts: readonly Buffer[]) {
    let length = 0;
    for (const part of parts) length += part.length;
    this.headers = { "content-type": "application/json", "content-length": String(length) };
  }

  get text(): string {
    return Buffer.concat(this.parts).toString("utf8");
  }
}

/** Length of a text whose characters are all printable ASCII but `"` and `\` (JSON writes it as it is), else -1. */
function plainAsciiLength(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) return -1;
  }
  return text.length;
}

function putAscii(target: Buffer, text: string, at: number): number {
  for (let i = 0; i < text.length; i++) target[at + i] = text.charCodeAt(i);
  return at + text.length;
}

/** Writes the JSON string of `text` at `at` (as it is when plain, else as JSON.stringify spells it); returns the end. */
function putJsonString(target: Buffer, text: string, json: string | undefined, at: number): number {
  if (json !== undefined) return at + target.write(json, at, "utf8");
  target[at] = 0x22;
  const end = putAscii(target, text, at + 1);
  target[end] = 0x22;
  return end + 1;
}

/** The JSON of a string id when it is not plain ASCII (undefined: written as it is, quoted), and its byte length. */
function idJson(id: string): { json: string | undefined; bytes: number } {
  const plain = plainAsciiLength(id);
  if (plain !== -1) return { json: undefined, bytes: plain + 2 };
  const json = JSON.stringify(id);
  return { json, bytes: Buffer.byteLength(json, "utf8") };
}

let lastCreated = Number.NaN;
let lastCreatedJson = "null";

/** {@link numberJson} of the chat reply's `created`, which stays the same for a second at a time. */
function createdJson(created: number): string {
  if (!Object.is(created, lastCreated)) {
    lastCreatedJson = numberJson(created);
    lastCreated = created;
  }
  return lastCreatedJson;
}

/**
 * The chat reply of a fitting template: the context's id source and then its clock are called once each, as the
 * reference builder calls them, and their values go into a small buffer written before the template's kept tail (the
 * bridge writes both in one write, so no reply-sized buffer is filled per request).
 */
export function writeChatTemplate(template: ReplyTemplate, context: ReplyContext): MockReply {
  const id = `chatcmpl-${context.newId()}`;
  const created = createdJson(Math.floor(context.now()));
  const { json, bytes: idBytes } = idJson(id);
  const prefix = Buffer.allocUnsafe(template.head.length + idBytes + CHAT_MIDDLE_BYTES.length + created.length);
  prefix.set(template.head, 0);
  const at = putJsonString(prefix, id, json, template.head.length);
  prefix.set(CHAT_MIDDLE_BYTES, at);
  putAscii(prefix, created, at + CHAT_MIDDLE_BYTES.length);
  return new WrittenReply([prefix, template.tail]);
}

/** The `/generate` reply of a fitting template with the id the context's id source gave (a string), between its kept head and tail. */
export function writeGenerateTemplate(template: ReplyTemplate, id: string): MockReply {
  const { json, bytes } = idJson(id);
  const idPart = Buffer.allocUnsafe(bytes);
  putJsonString(idPart, id, json, 0);
  return new WrittenReply([template.head, idPart, template.tail]);
}
