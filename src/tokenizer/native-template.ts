// Renders a checkpoint's own chat template as transformers does (render_jinja_template): its special-token
// variables, Python's tojson and str.strip(chars), raise_exception, strftime_now, and miles' input preparation.
import * as path from "node:path";
import { Template } from "@huggingface/jinja";
import { dumpsPy, parsePyJson, PyFloat, rememberKeyOrder, type PyJson } from "../wire/py-json";
import { ChatTemplateError } from "./chat-template-error";
import { EXACT_INTEGER, toJinjaValue } from "./jinja-py-values";
import type { ChatTemplateRenderer } from "./checkpoint-tokenizer";
import { canonicalizeTools } from "./sglang-tools";
import type { ChatMessage, RenderOptions, ToolSpec } from "./types";

/** The template variables transformers adds from the tokenizer (`special_tokens_map`): `bos_token`, `eos_token`, ... */
export type SpecialTokenVariables = Readonly<Record<string, string | readonly string[]>>;

/** `SpecialTokensMixin.SPECIAL_TOKENS_ATTRIBUTES` of transformers: the keys of `special_tokens_map`. */
const SPECIAL_TOKEN_KEYS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"] as const;

function tokenText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (value !== null && typeof value === "object" && typeof (value as { content?: unknown }).content === "string")
    return (value as { content: string }).content;
  return undefined;
}

/**
 * The special-token variables of a tokenizer_config.json, as `tokenizer.special_tokens_map` holds them (strings; an
 * `AddedToken` object gives its `content`; unset tokens are left out, as transformers leaves them out).
 */
export function specialTokenVariables(tokenizerConfig: Readonly<Record<string, unknown>>): SpecialTokenVariables {
  const variables: Record<string, string | string[]> = {};
  for (const key of SPECIAL_TOKEN_KEYS) {
    const text = tokenText(tokenizerConfig[key]);
    if (text !== undefined) variables[key] = text;
  }
  const additional = tokenizerConfig.additional_special_tokens;
  if (Array.isArray(additional)) {
    const texts = additional.map(tokenText).filter((text): text is string => text !== undefined);
    if (texts.length > 0) variables.additional_special_tokens = texts;
  }
  return variables;
}

/** A runtime value of @huggingface/jinja as our host functions receive it (its classes are not exported). */
interface RuntimeLike {
  type: string;
  value: unknown;
}

/** A runtime value as the Python value Jinja2 would hold: floats stay floats, objects keep their key order. */
function toPyJson(value: RuntimeLike): PyJson {
  switch (value.type) {
    case "IntegerValue": {
      // a Python int beyond 2^53 from the request carries its exact value; any other integral number that large came from a float
      const exact = (value as unknown as Record<symbol, PyJson | undefined>)[EXACT_INTEGER];
      if (exact !== undefined) return exact;
      return Number.isSafeInteger(value.value) ? (value.value as number) : new PyFloat(value.value as number);
    }
    case "FloatValue":
      return Number.isInteger(value.value) ? new PyFloat(value.value as number) : (value.value as number);
    case "StringValue":
    case "BooleanValue":
      return value.value as string | boolean;
    case "NullValue":
    case "UndefinedValue":
      return null;
    case "ArrayValue":
    case "TupleValue":
      return (value.value as RuntimeLike[]).map(toPyJson);
    case "ObjectValue":
    case "KeywordArgumentsValue": {
      const entries = [...(value.value as Map<string, RuntimeLike>)];
      const object: Record<string, PyJson> = {};
      for (const [key, item] of entries) object[key] = toPyJson(item);
      rememberKeyOrder(
        object,
        entries.map(([key]) => key),
      );
      return object;
    }
    default:
      throw new ChatTemplateError(`Object of type ${value.type} is not JSON serializable`);
  }
}

interface ToJsonOptions {
  indent: number | null;
  itemSeparator: string;
  keySeparator: string;
  sortKeys: boolean;
  ensureAscii: boolean;
}

/** Python's json.dumps for the cases dumpsPy does not spell (indent, custom separators, sort_keys). */
function writePyJson(value: PyJson, options: ToJsonOptions, depth: number): string {
  const scalar = { ensureAscii: options.ensureAscii, compact: false, allowNan: true };
  if (value === null || typeof value !== "object" || value instanceof PyFloat || !("length" in value || Object.getPrototypeOf(value) === Object.prototype)) {
    return dumpsPy(value, scalar);
  }
  const newline = options.indent === null ? "" : `\n${" ".repeat(options.indent * (depth + 1))}`;
  const close = options.indent === null ? "" : `\n${" ".repeat(options.indent * depth)}`;
  const itemSeparator = options.indent === null ? options.itemSeparator : options.itemSeparator.trimEnd();
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[${newline}${value.map((item) => writePyJson(item, options, depth + 1)).join(itemSeparator + newline)}${close}]`;
  }
  const record = value as Record<string, PyJson>;
  let keys = Object.keys(record);
  if (options.sortKeys) keys = [...keys].sort();
  if (keys.length === 0) return "{}";
  const parts = keys.map((key) => dumpsPy(key, scalar) + options.keySeparator + writePyJson(record[key], options, depth + 1));
  return `{${newline}${parts.join(itemSeparator + newline)}${close}}`;
}

/** transformers' tojson: `json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`. */
function hostToJson(wrapped: unknown, keywords?: unknown): string {
  const value = toPyJson((wrapped as RuntimeLike[])[0]);
  const kwargs = keywords instanceof Map ? (keywords as Map<string, RuntimeLike>) : new Map<string, RuntimeLike>();
  const indentValue = kwargs.get("indent");
  const indent = indentValue === undefined || indentValue.type === "NullValue" ? null : (indentValue.value as number);
  const separators = kwargs.get("separators");
  const ensureAscii = kwargs.get("ensure_ascii")?.value === true;
  const sortKeys = kwargs.get("sort_keys")?.value === true;
  if (indent === null && separators === undefined && !sortKeys) return dumpsPy(value, { ensureAscii, compact: false, allowNan: true });
  let itemSeparator = indent === null ? ", " : ",";
  let keySeparator = ": ";
  if (separators !== undefined && separators.type !== "NullValue") {
    const pair = separators.value as RuntimeLike[];
    itemSeparator = pair[0].value as string;
    keySeparator = pair[1].value as string;
  }
  return writePyJson(value, { indent, itemSeparator, keySeparator, sortKeys, ensureAscii }, 0);
}

/** Python's `str.strip(chars)` / `lstrip` / `rstrip` (the engine's own ignore their argument). */
function hostStrip(wrapped: unknown, chars: unknown, side: unknown): string {
  const target = (wrapped as RuntimeLike[])[0];
  if (target.type !== "StringValue") throw new ChatTemplateError(`'${target.type}' object has no attribute '${String(side)}'`);
  const text = target.value as string;
  if (chars === null || chars === undefined) {
    const whitespace = /\s/u;
    return stripSet(text, (char) => whitespace.test(char), side as string);
  }
  const set = new Set(Array.from(String(chars)));
  return stripSet(text, (char) => set.has(char), side as string);
}

function stripSet(text: string, strip: (char: string) => boolean, side: string): string {
  const chars = Array.from(text);
  let start = 0;
  let end = chars.length;
  if (side !== "rstrip") while (start < end && strip(chars[start])) start += 1;
  if (side !== "lstrip") while (end > start && strip(chars[end - 1])) end -= 1;
  return chars.slice(start, end).join("");
}

const TOJSON_FUNCTION = "__tito_py_tojson";
const STRIP_FUNCTION = "__tito_py_strip";

type Node = Record<string, unknown> & { type?: unknown };

function identifier(name: string): Node {
  return { type: "Identifier", value: name };
}

/** The expression `[operand]`: our host function then receives the operand's runtime value (its int/float kind). */
function wrapped(operand: unknown): Node {
  return { type: "ArrayLiteral", value: [operand] };
}

/** Rewrites one node when it is `x | tojson(...)` or `x.strip(chars)`-like; returns the replacement or the node. */
function rewriteNode(node: Node): Node {
  if (node.type === "FilterExpression") {
    const filter = node.filter as Node;
    if (filter.type === "Identifier" && filter.value === "tojson")
      return { type: "CallExpression", callee: identifier(TOJSON_FUNCTION), args: [wrapped(node.operand)] };
    if (filter.type === "CallExpression" && (filter.callee as Node).type === "Identifier" && (filter.callee as Node).value === "tojson") {
      return { type: "CallExpression", callee: identifier(TOJSON_FUNCTION), args: [wrapped(node.operand), ...(filter.args as unknown[])] };
    }
  }
  if (node.type === "CallExpression") {
    const callee = node.callee as Node;
    const args = node.args as unknown[];
    if (callee.type === "MemberExpression" && callee.computed === false && args.length === 1) {
      const property = callee.property as Node;
      if (property.type === "Identifier" && (property.value === "strip" || property.value === "lstrip" || property.value === "rstrip")) {
        return {
          type: "CallExpression",
          callee: identifier(STRIP_FUNCTION),
          args: [wrapped(callee.object), args[0], { type: "StringLiteral", value: property.value }],
        };
      }
    }
  }
  return node;
}

/** Walks the parsed program once, replacing the nodes {@link rewriteNode} rewrites (children first). */
function rewriteTree(node: unknown, seen: Set<unknown>): unknown {
  if (node === null || typeof node !== "object" || seen.has(node)) return node;
  seen.add(node);
  if (Array.isArray(node)) {
    for (let index = 0; index < node.length; index += 1) node[index] = rewriteTree(node[index], seen);
    return node;
  }
  const record = node as Node;
  for (const key of Object.keys(record)) record[key] = rewriteTree(record[key], seen);
  return rewriteNode(record);
}

/** miles' `normalize_tool_arguments(messages, "dict")`: assistant `content: None` → "", JSON-string arguments parsed. */
function prepareMessages(messages: readonly ChatMessage[]): unknown[] {
  return messages.map((message, messageIndex) => {
    if (message.role !== "assistant") return message;
    const copy: ChatMessage = { ...message };
    if (copy.content === null || copy.content === undefined) copy.content = "";
    if (Array.isArray(copy.tool_calls)) {
      copy.tool_calls = copy.tool_calls.map((call, callIndex) => {
        const fn = call?.function as unknown;
        if (fn === null || typeof fn !== "object" || typeof (fn as { arguments?: unknown }).arguments !== "string") return call;
        const text = (fn as { arguments: string }).arguments;
        let parsed: unknown;
        try {
          parsed = parsePyJson(text);
        } catch (error) {
          throw new ChatTemplateError(
            `messages[${messageIndex}].tool_calls[${callIndex}].function.arguments is not valid JSON (${(error as Error).message}): ${text.slice(0, 200)}`,
          );
        }
        return { ...call, function: { ...fn, arguments: parsed } } as typeof call;
      });
    }
    return copy;
  });
}

/** The request's kwargs as template variables, each holding what Jinja2 would hold (undefined ones left out). */
function jinjaKwargs(kwargs: RenderOptions["kwargs"]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (kwargs === undefined || kwargs === null) return out;
  for (const [key, value] of Object.entries(kwargs)) if (value !== undefined) out[key] = toJinjaValue(value);
  return out;
}

/** A checkpoint's chat template, rendered as `tokenizer.apply_chat_template(..., tokenize=False)` renders it in miles. */
export class NativeChatTemplate implements ChatTemplateRenderer {
  private readonly template: Template;

  /**
   * Parses `source` once.
   * @param source the Jinja source text
   * @param origin where it came from (messages name only its last path segment)
   * @param specialTokens the special-token variables ({@link specialTokenVariables})
   * @throws ChatTemplateError when the template does not parse
   */
  constructor(
    readonly source: string,
    readonly origin: string,
    readonly specialTokens: SpecialTokenVariables = {},
  ) {
    try {
      this.template = new Template(source);
    } catch (error) {
      throw new ChatTemplateError(`chat template ${path.basename(origin)} does not parse: ${(error as Error).message}`);
    }
    rewriteTree((this.template as unknown as { parsed: unknown }).parsed, new Set());
  }

  private renderWith(messages: unknown[], tools: unknown, options: RenderOptions): string {
    const context: Record<string, unknown> = {
      ...this.specialTokens,
      ...jinjaKwargs(options.kwargs),
      messages: toJinjaValue(messages),
      tools: toJinjaValue(tools),
      documents: null,
      add_generation_prompt: options.addGenerationPrompt ?? false,
      [TOJSON_FUNCTION]: hostToJson,
      [STRIP_FUNCTION]: hostStrip,
    };
    return this.template.render(context);
  }

  /**
   * Renders as miles' `apply_chat_template` does: messages prepared by `normalize_tool_arguments("dict")`, tools
   * as SGLang's Tool dumps (`extract_tool_dicts`); when that render fails with tools, once more with the bare
   * function objects (its tool-format fallback).
   * @throws ChatTemplateError carrying the template's own error text
   */
  render(messages: readonly ChatMessage[], options: RenderOptions = {}): string {
    const prepared = prepareMessages(messages);
    const tools: ToolSpec[] | null = canonicalizeTools(options.tools);
    const name = path.basename(this.origin);
    try {
      return this.renderWith(prepared, tools, options);
    } catch (error) {
      if (tools === null) throw new ChatTemplateError(`rendering chat template ${name} failed: ${(error as Error).message}`);
      try {
        return this.renderWith(
          prepared,
          tools.map((tool) => tool.function ?? tool),
          options,
        );
      } catch (fallbackError) {
        throw new ChatTemplateError(`rendering chat template ${name} failed (tool format fallback): ${(fallbackError as Error).message}`);
      }
    }
  }
}
