// Token-in/token-out (TITO) prompt construction for any registered family: reuse stored ids, tokenize only the
// appended messages, join them by the family's boundary rule; also merges kwargs and builds the mismatch report.
import { QWEN3_FAMILY } from "./families/qwen3";
import { TitoModelError, type TitoFamily, type TokenRef } from "./families/types";
import { deepSeekThinkingEnabled } from "./deepseek/encoder-renderer";
import { MismatchComparator, type TitoMismatchEntry } from "./mismatch";
import type { RenderedIdsMemo } from "./rendered-ids-memo";
import { exactDataKeyAt, type TitoPrefixCache } from "./tito-prefix-cache";
import { TitoRenderCaches } from "./tito-render-caches";
import type { ChatMessage, ChatTemplateKwargs, Tokenizer, ToolCall, ToolSpec } from "./types";
import { pyEquals } from "../wire/py-equals";
import { pyRepr } from "../wire/py-json";

/** A TITO rule was broken: disallowed role, conflicting pinned kwarg, non-append-only render, ... */
export class TitoError extends Error {
  override readonly name = "TitoError";
}

/** Roles that may follow the stored history, in the order they are listed in messages. */
export const QWEN3_TITO_APPEND_ROLES: readonly string[] = QWEN3_FAMILY.allowedAppendRoles;

/** Kwargs the Qwen3 family fixes for TITO; a request may repeat them but never change them. */
export const QWEN3_PINNED_KWARGS: Readonly<ChatTemplateKwargs> = QWEN3_FAMILY.pinnedKwargs;

/** Decides whether a stored message and a new message are the same history entry. */
export type TitoMessageMatcher = (stored: ChatMessage, incoming: ChatMessage) => boolean;

const DUMMY_SYSTEM: ChatMessage = Object.freeze({ role: "system", content: "dummy system" });

/** Stand-in for the stored last turn: keeps its tool calls (they decide how a following tool result opens). */
function dummyAssistant(toolCalls: readonly ToolCall[]): ChatMessage {
  return { role: "assistant", content: "", reasoning_content: " ", tool_calls: toolCalls as ToolCall[] };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Where a {@link TokenRef} is looked up: the tokenizer plus its checkpoint's eos token, for messages. */
interface TokenResolver {
  tokenizer: Tokenizer;
  /** The checkpoint's `eos_token` text (tokenizer_config.json), when it names one. */
  eosToken?: string;
}

/** What a {@link TokenRef} looks like in a message. */
function describeTokenRef(ref: TokenRef): string {
  if ("token" in ref) return ref.token;
  if ("text" in ref) return `${JSON.stringify(ref.text)} (as one token)`;
  return "eos_token";
}

/**
 * The id of a {@link TokenRef} in this vocabulary.
 * @throws TitoModelError ("missing-token") naming the family, tokenizer.json and the token
 */
export function resolveTokenRef(ref: TokenRef, resolver: TokenResolver, family: string): number {
  const { tokenizer } = resolver;
  let id: number | undefined;
  if ("token" in ref) id = tokenizer.tokenToId(ref.token);
  else if ("text" in ref) {
    const ids = tokenizer.encode(ref.text);
    id = ids.length === 1 ? ids[0] : undefined;
  } else if (resolver.eosToken !== undefined) id = tokenizer.tokenToId(resolver.eosToken);
  if (id === undefined) {
    const where =
      "eos" in ref && resolver.eosToken === undefined
        ? `the tokenizer_config.json beside ${tokenizer.source} names no eos_token`
        : `${tokenizer.source} has no ${describeTokenRef(ref)} token`;
    throw new TitoModelError("missing-token", family, `--tito-model ${family}: ${where}, which the ${family} family needs`, "tokenizer.json");
  }
  return id;
}

function resolveAll(refs: readonly TokenRef[] | undefined, resolver: TokenResolver, family: string): number[] {
  const ids: number[] = [];
  for (const ref of refs ?? []) {
    if ("token" in ref && ref.optional === true && resolver.tokenizer.tokenToId(ref.token) === undefined) continue;
    ids.push(resolveTokenRef(ref, resolver, family));
  }
  return ids;
}

/**
 * The render memo's key of a canonical render whose caller names its messages and tools (see
 * {@link FamilyTito.canonicalIds}): a space of its own (an exact key never starts with NUL), the kwargs keyed exactly.
 */
function namedCanonicalKey(inputsName: string, merged: ChatTemplateKwargs): string | undefined {
  const kwargsKey = exactDataKeyAt(merged, 1);
  return kwargsKey === undefined ? undefined : `\u0000canonical\u0000${inputsName}\u0000${kwargsKey}`;
}

/** Options of {@link FamilyTito}. */
export interface TitoOptions {
  /**
   * Remember the ids of prompt, canonical and appended-suffix renders by their exact inputs (bounded, least
   * recently used), so a conversation seen again is not rendered again. Off by default: the results are the same
   * either way, only repeated renders get cheaper. Session servers turn it on.
   */
  memoizeRenders?: boolean;
  /**
   * The caches to render through, which other rule sets over the same vocabulary and template may share
   * (`sharedTitoRenderCaches`); default: a set of this rule set's own. Sharing changes no result, only how often
   * a render is computed.
   */
  renderCaches?: TitoRenderCaches;
  /** The checkpoint's `eos_token` text, for families whose rules name `{eos: true}`. */
  eosToken?: string;
  /**
   * For a `real-history` family: the text the render of `newer` (with the generation prompt) adds after the render
   * of `older`, computed without rendering the history, or null when it cannot be (then both are rendered whole).
   * DeepSeek V4's encoder provides it.
   */
  historySuffix?: (
    older: readonly ChatMessage[],
    newer: readonly ChatMessage[],
    tools: readonly ToolSpec[] | null,
    kwargs: ChatTemplateKwargs,
  ) => string | null;
}

/**
 * A family's TITO rules (miles' TITOTokenizer subclass of that family). Stateless apart from the tokenizer, the
 * default kwargs and optional render memos.
 */
export class FamilyTito {
  /** Stored completion tokens that may be trimmed before merging (`max_trim_tokens`). */
  readonly maxTrimTokens: number;
  /** Roles a request may append after the stored history. */
  readonly allowedAppendRoles: ReadonlySet<string>;
  /** Server default kwargs with the pinned ones applied. */
  readonly defaultKwargs: Readonly<ChatTemplateKwargs>;
  private readonly comparator: MismatchComparator;
  /** Renders of `[dummySystem, dummyAssistant]` per tools, kwargs and stored tool calls. */
  private readonly prefixRenders: TitoPrefixCache;
  /** Ids of whole renders by exact inputs; null unless {@link TitoOptions.memoizeRenders}. */
  private readonly renderedIds: RenderedIdsMemo | null;
  /** Stored last ids after which the boundary appends {@link appendIds}. */
  private readonly appendAfterIds: ReadonlySet<number>;
  private readonly appendIds: readonly number[];
  /** Stored last ids the boundary drops. */
  private readonly dropLastIds: ReadonlySet<number>;
  private readonly aliases: ReadonlySet<string>;
  /** {@link TitoOptions.historySuffix}. */
  private readonly historySuffix: TitoOptions["historySuffix"];

  /**
   * @param tokenizer the checkpoint's tokenizer rendering the family's template
   * @param defaultKwargs server default chat-template kwargs (miles' `--apply-chat-template-kwargs`, default `{}`)
   * @param options render memoization (off by default), the checkpoint's eos token
   * @param family the family whose rules apply (default: qwen3)
   * @throws TitoError when the defaults contradict a pinned kwarg
   * @throws TitoModelError when the vocabulary lacks a token the family names
   */
  constructor(
    readonly tokenizer: Tokenizer,
    defaultKwargs: ChatTemplateKwargs = {},
    options: TitoOptions = {},
    readonly family: TitoFamily = QWEN3_FAMILY,
  ) {
    const caches = options.renderCaches ?? new TitoRenderCaches();
    this.prefixRenders = caches.prefixRenders;
    this.renderedIds = options.memoizeRenders === true ? caches.renderedIds : null;
    this.historySuffix = options.historySuffix;
    this.maxTrimTokens = family.boundary.maxTrimTokens;
    this.allowedAppendRoles = new Set(family.allowedAppendRoles);
    this.aliases = new Set(family.kwargAliases);
    const resolver: TokenResolver = { tokenizer, eosToken: options.eosToken };
    resolveAll(family.requiredTokens, resolver, family.name);
    this.appendAfterIds = new Set(resolveAll(family.boundary.appendAfter?.whenLastIs, resolver, family.name));
    this.appendIds = resolveAll(family.boundary.appendAfter?.append, resolver, family.name);
    this.dropLastIds = new Set(resolveAll(family.boundary.dropLastWhen, resolver, family.name));
    const trailing = new Set(resolveAll(family.boundary.trailing, resolver, family.name));
    const spec = family.comparator.specialTokens;
    let specialIds: ReadonlySet<number>;
    if (spec.kind === "only") specialIds = new Set(resolveAll(spec.tokens, resolver, family.name));
    else {
      const except = new Set(resolveAll(spec.except, resolver, family.name));
      specialIds = except.size === 0 ? tokenizer.specialIds : new Set([...tokenizer.specialIds].filter((id) => !except.has(id)));
    }
    this.defaultKwargs = Object.freeze(this.withThinking(this.applyPinned({ ...defaultKwargs }, "default")));
    this.comparator = new MismatchComparator({
      specialIds,
      trailingIds: trailing,
      assistantStart: family.comparator.assistantStart,
      decode: (ids) => tokenizer.decode(ids, { skipSpecialTokens: false }),
    });
  }

  private applyPinned(kwargs: ChatTemplateKwargs, layer: string): ChatTemplateKwargs {
    for (const [key, value] of Object.entries(this.family.pinnedKwargs)) {
      // Python's `provided_kwargs[key] != value`: 0 and 0.0 equal False; the text is miles' ValueError
      if (key in kwargs && kwargs[key] !== undefined && !pyEquals(kwargs[key], value)) {
        throw new TitoError(
          `chat template kwarg ${key}=${pyRepr(kwargs[key])} conflicts with the value registered for ` +
            `${this.family.pythonClass}: ${pyRepr(value)}${layer === "default" ? " (server default)" : ""}`,
        );
      }
      kwargs[key] = value;
    }
    return kwargs;
  }

  /**
   * Request kwargs layered over the defaults (`merge_chat_template_kwargs`: a request setting one of the family's
   * alias kwargs replaces them all). Pinned kwargs (Qwen3: `clear_thinking: false`) always win; a request that
   * asks for a different value is rejected. Idempotent: merging already-merged kwargs returns the same values.
   * @throws TitoError when the kwargs are not an object or contradict a pinned kwarg
   */
  mergeKwargs(requestKwargs?: ChatTemplateKwargs | null): ChatTemplateKwargs {
    if (requestKwargs === undefined || requestKwargs === null) return { ...this.defaultKwargs };
    if (!isPlainObject(requestKwargs)) throw new TitoError("chat_template_kwargs must be an object");
    const base: ChatTemplateKwargs = { ...this.defaultKwargs };
    if (this.aliases.size > 0 && Object.keys(requestKwargs).some((key) => this.aliases.has(key))) for (const key of this.aliases) delete base[key];
    return this.withThinking(this.applyPinned({ ...base, ...requestKwargs }, "request"));
  }

  /** The kwargs with `thinking` set to the mode they resolve to, for a family that sets it (DeepSeek). */
  private withThinking(kwargs: ChatTemplateKwargs): ChatTemplateKwargs {
    if (this.family.setsThinkingKwarg === true) kwargs.thinking = deepSeekThinkingEnabled(kwargs);
    return kwargs;
  }

  /** Prompt ids for `messages` rendered from scratch, with the generation prompt. */
  renderPromptIds(messages: readonly ChatMessage[], tools: readonly ToolSpec[] | null, kwargs?: ChatTemplateKwargs): number[] {
    const merged = this.mergeKwargs(kwargs);
    return this.memoized(["prompt", messages, tools, merged], () =>
      this.tokenizer.encode(this.tokenizer.renderChatTemplate(messages, { tools, addGenerationPrompt: true, kwargs: merged })),
    );
  }

  /** `compute()`, or the remembered ids of an earlier call with the same exact inputs when renders are memoized. */
  private memoized(inputs: readonly unknown[], compute: () => number[]): number[] {
    return this.renderedIds === null ? compute() : this.renderedIds.get(inputs, compute);
  }

  /**
   * Checks that `newMessages` (the full new list) extends `oldMessages` with allowed roles only. With a matcher,
   * each stored message must also match its counterpart; without one, the caller vouches for the prefix.
   * @throws TitoError naming the offending index and role
   */
  assertAppendable(oldMessages: readonly ChatMessage[], newMessages: readonly ChatMessage[], matcher?: TitoMessageMatcher): void {
    if (newMessages.length < oldMessages.length) {
      throw new TitoError(`new messages (${newMessages.length}) are fewer than stored messages (${oldMessages.length})`);
    }
    if (matcher) {
      oldMessages.forEach((stored, index) => {
        if (!matcher(stored, newMessages[index])) {
          throw new TitoError(
            `message ${index} (role ${JSON.stringify(newMessages[index].role)}) does not match the stored ` + `message (role ${JSON.stringify(stored.role)})`,
          );
        }
      });
    }
    for (let index = oldMessages.length; index < newMessages.length; index += 1) {
      const role = newMessages[index].role;
      if (!this.allowedAppendRoles.has(role)) {
        throw new TitoError(
          `appended message ${index} has role ${JSON.stringify(role)}, which the ${this.family.name} TITO template cannot ` +
            `append; allowed roles: ${[...this.allowedAppendRoles].join(", ")}`,
        );
      }
    }
  }

  /**
   * Ids of the messages appended after `oldMessages`, plus the generation prompt: renders
   * `[dummySystem, dummyAssistant] + appended` (with generation prompt) and `[dummySystem, dummyAssistant]`
   * (without) and encodes the difference. The cost depends on the appended messages only, never on the history.
   * The prefix render is cached per tools, merged kwargs and stored tool calls (bounded).
   * @throws TitoError when a role is not allowed, there is no stored message, or the render is not append-only
   */
  tokenizeAppended(
    oldMessages: readonly ChatMessage[],
    newMessages: readonly ChatMessage[],
    tools: readonly ToolSpec[] | null,
    kwargs?: ChatTemplateKwargs,
  ): number[] {
    if (oldMessages.length === 0) {
      throw new TitoError("no stored messages to append to; render the prompt from scratch instead");
    }
    this.assertAppendable(oldMessages, newMessages);
    const appended = newMessages.slice(oldMessages.length);
    const toolCalls = oldMessages[oldMessages.length - 1].tool_calls ?? [];
    const merged = this.mergeKwargs(kwargs);
    if (this.family.suffixRender === "real-history") {
      return this.memoized(["history", oldMessages, newMessages, tools, merged], () => this.renderHistoryDiff(oldMessages, newMessages, tools, merged));
    }
    return this.memoized(["appended", appended, tools, merged, toolCalls], () => this.renderAppended(appended, toolCalls, tools, merged));
  }

  /** The uncached body of {@link tokenizeAppended}: prefix render (cached), full render, checked difference, encode. */
  private renderAppended(
    appended: readonly ChatMessage[],
    toolCalls: readonly ToolCall[],
    tools: readonly ToolSpec[] | null,
    merged: ChatTemplateKwargs,
  ): number[] {
    const base = [DUMMY_SYSTEM, dummyAssistant(toolCalls)];
    const prefix = this.prefixRenders.get(tools, merged, toolCalls, () =>
      this.tokenizer.renderChatTemplate(base, { tools, addGenerationPrompt: false, kwargs: merged }),
    );
    const full = this.tokenizer.renderChatTemplate([...base, ...appended], { tools, addGenerationPrompt: true, kwargs: merged });
    if (!full.startsWith(prefix)) {
      const roles = appended.length > 0 ? appended.map((m) => m.role).join(", ") : "generation prompt";
      throw new TitoError(
        `rendered suffix for appended [${roles}] does not extend the rendered prefix: the chat template is not ` +
          `append-only here (prefix ends ${JSON.stringify(prefix.slice(-60))}, render has ` +
          `${JSON.stringify(full.slice(Math.max(0, prefix.length - 60), prefix.length))} there)`,
      );
    }
    return this.tokenizer.encode(full.slice(prefix.length));
  }

  /** The `real-history` suffix (DeepSeek V4's `tokenize_additional_messages`): the real old and new renders diffed. */
  private renderHistoryDiff(
    oldMessages: readonly ChatMessage[],
    newMessages: readonly ChatMessage[],
    tools: readonly ToolSpec[] | null,
    merged: ChatTemplateKwargs,
  ): number[] {
    const tail = this.historySuffix?.(oldMessages, newMessages, tools, merged);
    if (tail !== undefined && tail !== null) return this.tokenizer.encode(tail);
    const before = this.tokenizer.renderChatTemplate(oldMessages, { tools, addGenerationPrompt: false, kwargs: merged });
    const after = this.tokenizer.renderChatTemplate(newMessages, { tools, addGenerationPrompt: true, kwargs: merged });
    if (!after.startsWith(before)) {
      throw new TitoError(`${this.family.name} render is not append-only for the appended messages (the render of the stored history changed)`);
    }
    return this.tokenizer.encode(after.slice(before.length));
  }

  /**
   * The ids {@link mergeTokens} appends after `storedIds`: the family's boundary ids (Qwen3: "\n" (198) when they
   * end in `<|im_end|>`), then {@link tokenizeAppended}. Its cost never depends on the length of the stored history.
   * For a family that drops the last stored id (GLM), use {@link mergeTokens}.
   */
  mergedTailIds(
    oldMessages: readonly ChatMessage[],
    newMessages: readonly ChatMessage[],
    storedIds: readonly number[],
    tools: readonly ToolSpec[] | null,
    kwargs?: ChatTemplateKwargs,
  ): number[] {
    const suffix = this.tokenizeAppended(oldMessages, newMessages, tools, kwargs);
    const last = storedIds.length > 0 ? storedIds[storedIds.length - 1] : undefined;
    if (last !== undefined && this.appendAfterIds.has(last)) suffix.unshift(...this.appendIds);
    return suffix;
  }

  /** True when the family's boundary drops the last of these stored ids (GLM's `<|user|>` / `<|observation|>`). */
  dropsLastStoredId(storedIds: readonly number[]): boolean {
    return storedIds.length > 0 && this.dropLastIds.has(storedIds[storedIds.length - 1]);
  }

  /**
   * Prompt ids for `newMessages` built on stored ids (the family's `merge_tokens`): stored ids (less the last one
   * when the family drops it, GLM), then the boundary ids (Qwen3: "\n" (198) when they end in `<|im_end|>`: the
   * model stops before the template's newline), then {@link tokenizeAppended}.
   * Returns a fresh array. Its one history-sized cost is that array: concat allocates it once at its final size
   * and block-copies the stored ids; above ~16k ids V8 puts any fresh array in its own large-object pages, whose
   * mapping and first touch dominate the copy (see the tokenizer benchmark's allocation floor).
   */
  mergeTokens(
    oldMessages: readonly ChatMessage[],
    newMessages: readonly ChatMessage[],
    storedIds: readonly number[],
    tools: readonly ToolSpec[] | null,
    kwargs?: ChatTemplateKwargs,
  ): number[] {
    if (this.dropsLastStoredId(storedIds)) {
      return storedIds.slice(0, -1).concat(this.tokenizeAppended(oldMessages, newMessages, tools, kwargs));
    }
    return storedIds.concat(this.mergedTailIds(oldMessages, newMessages, storedIds, tools, kwargs));
  }

  /**
   * Ids of the canonical render of `messages` (no generation prompt): the reference of the mismatch report.
   * `inputsName`, for messages and tools that never change (a session server's committed history): the caller's
   * name for them, which the render memo keys by instead of serializing them; two calls may give the same name only
   * when their messages and tools are the same data as `exactDataKey` tells data apart. Null: they have no
   * exact key (rendered, never remembered). Undefined: the memo keys by the values themselves.
   */
  canonicalIds(messages: readonly ChatMessage[], tools: readonly ToolSpec[] | null, kwargs?: ChatTemplateKwargs, inputsName?: string | null): number[] {
    const merged = this.mergeKwargs(kwargs);
    const render = (): number[] => this.tokenizer.encode(this.tokenizer.renderChatTemplate(messages, { tools, addGenerationPrompt: false, kwargs: merged }));
    if (inputsName === undefined || this.renderedIds === null) return this.memoized(["canonical", messages, tools, merged], render);
    return this.renderedIds.getByKey(inputsName === null ? undefined : namedCanonicalKey(inputsName, merged), render);
  }

  /**
   * The comparison step of the mismatch report, for canonical ids already computed ({@link canonicalIds}).
   * Linear in the ids; decodes only segments whose ids differ.
   */
  compareIds(canonicalIds: readonly number[], tokenIds: readonly number[]): TitoMismatchEntry[] {
    return this.comparator.compare(canonicalIds, tokenIds);
  }

  /**
   * The `tito_session_mismatch` report: renders `messages` canonically (no generation prompt) and compares the
   * ids with `tokenIds` segment by segment. Empty when the accumulated ids are what the template renders.
   * `inputsName`: as for {@link canonicalIds}.
   */
  compareWithCanonical(
    messages: readonly ChatMessage[],
    tokenIds: readonly number[],
    tools: readonly ToolSpec[] | null,
    kwargs?: ChatTemplateKwargs,
    inputsName?: string | null,
  ): TitoMismatchEntry[] {
    return this.compareIds(this.canonicalIds(messages, tools, kwargs, inputsName), tokenIds);
  }
}

/** Qwen3 TITO rules (SPEC §8): {@link FamilyTito} with the qwen3 family. */
export class Qwen3Tito extends FamilyTito {
  /**
   * @param tokenizer a Qwen3 tokenizer (its renderChatTemplate must be append-safe)
   * @param defaultKwargs server default chat-template kwargs, e.g. `{enable_thinking: false}`
   * @param options render memoization (off by default)
   */
  constructor(tokenizer: Tokenizer, defaultKwargs: ChatTemplateKwargs = {}, options: TitoOptions = {}) {
    super(tokenizer, defaultKwargs, options, QWEN3_FAMILY);
  }
}

/** Factory form of `new Qwen3Tito(tokenizer, defaultKwargs, options)`. */
export function createTito(tokenizer: Tokenizer, defaultKwargs?: ChatTemplateKwargs, options?: TitoOptions): Qwen3Tito {
  return new Qwen3Tito(tokenizer, defaultKwargs, options);
}
