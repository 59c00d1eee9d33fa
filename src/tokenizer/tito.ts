// Token-in/token-out (TITO) prompt construction for Qwen3: reuse stored ids, tokenize only the appended messages.
// Also merges request chat_template_kwargs over server defaults and produces the tito_session_mismatch report.
import { MismatchComparator, type TitoMismatchEntry } from "./mismatch";
import { RenderedIdsMemo } from "./rendered-ids-memo";
import { TitoPrefixCache } from "./tito-prefix-cache";
import type { ChatMessage, ChatTemplateKwargs, Tokenizer, ToolCall, ToolSpec } from "./types";
import { pyEquals } from "../wire/py-equals";
import { pyRepr } from "../wire/py-json";

/** A TITO rule was broken: disallowed role, conflicting pinned kwarg, non-append-only render, ... */
export class TitoError extends Error {
  override readonly name = "TitoError";
}

/** Roles that may follow the stored history, in the order they are listed in messages. */
export const QWEN3_TITO_APPEND_ROLES: readonly string[] = ["tool", "user", "system", "assistant"];

/** Kwargs the Qwen3 family fixes for TITO; a request may repeat them but never change them. */
export const QWEN3_PINNED_KWARGS: Readonly<ChatTemplateKwargs> = Object.freeze({ clear_thinking: false });

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

/** The Python class whose registered kwargs the pinned ones are (named in miles' conflict message). */
const PINNED_KWARGS_OWNER = "Qwen3TITOTokenizer";

/** Options of {@link Qwen3Tito}. */
export interface TitoOptions {
  /**
   * Remember the ids of prompt, canonical and appended-suffix renders by their exact inputs (bounded, least
   * recently used), so a conversation seen again is not rendered again. Off by default: the results are the same
   * either way, only repeated renders get cheaper. Session servers turn it on.
   */
  memoizeRenders?: boolean;
}

/** Qwen3 TITO rules (SPEC §8). Stateless apart from the tokenizer, the default kwargs and optional render memos. */
export class Qwen3Tito {
  /** Stored completion tokens that may be trimmed before merging; Qwen3 never trims. */
  readonly maxTrimTokens = 0;
  /** Roles a request may append after the stored history. */
  readonly allowedAppendRoles: ReadonlySet<string> = new Set(QWEN3_TITO_APPEND_ROLES);
  /** Server default kwargs with the pinned ones applied. */
  readonly defaultKwargs: Readonly<ChatTemplateKwargs>;
  private readonly comparator: MismatchComparator;
  /** Renders of `[dummySystem, dummyAssistant]` per tools, kwargs and stored tool calls. */
  private readonly prefixRenders = new TitoPrefixCache();
  /** Ids of whole renders by exact inputs; null unless {@link TitoOptions.memoizeRenders}. */
  private readonly renderedIds: RenderedIdsMemo | null;
  private readonly imEndId: number;
  private readonly newlineId: number;

  /**
   * @param tokenizer a Qwen3 tokenizer (its renderChatTemplate must be append-safe)
   * @param defaultKwargs server default chat-template kwargs, e.g. `{enable_thinking: false}`
   * @param options render memoization (off by default)
   * @throws TitoError when the defaults contradict a pinned kwarg, or the vocabulary lacks `<|im_end|>`
   */
  constructor(
    readonly tokenizer: Tokenizer,
    defaultKwargs: ChatTemplateKwargs = {},
    options: TitoOptions = {},
  ) {
    this.renderedIds = options.memoizeRenders === true ? new RenderedIdsMemo() : null;
    this.defaultKwargs = Object.freeze(this.applyPinned({ ...defaultKwargs }, "default"));
    const imEnd = tokenizer.tokenToId("<|im_end|>");
    if (imEnd === undefined) throw new TitoError(`tokenizer ${tokenizer.source} has no <|im_end|> token`);
    const newline = tokenizer.encode("\n");
    if (newline.length !== 1) throw new TitoError(`tokenizer ${tokenizer.source} does not encode "\\n" as one token`);
    this.imEndId = imEnd;
    this.newlineId = newline[0]!;
    this.comparator = new MismatchComparator({
      specialIds: tokenizer.specialIds,
      trailingIds: new Set([this.newlineId]),
      assistantStart: "<|im_start|>assistant",
      decode: (ids) => tokenizer.decode(ids, { skipSpecialTokens: false }),
    });
  }

  private applyPinned(kwargs: ChatTemplateKwargs, layer: string): ChatTemplateKwargs {
    for (const [key, value] of Object.entries(QWEN3_PINNED_KWARGS)) {
      // Python's `provided_kwargs[key] != value`: 0 and 0.0 equal False; the text is miles' ValueError
      if (key in kwargs && kwargs[key] !== undefined && !pyEquals(kwargs[key], value)) {
        throw new TitoError(
          `chat template kwarg ${key}=${pyRepr(kwargs[key])} conflicts with the value registered for ` +
            `${PINNED_KWARGS_OWNER}: ${pyRepr(value)}${layer === "default" ? " (server default)" : ""}`,
        );
      }
      kwargs[key] = value;
    }
    return kwargs;
  }

  /**
   * Request kwargs layered over the defaults. Pinned kwargs (`clear_thinking: false`) always win; a request that
   * asks for a different value is rejected. Idempotent: merging already-merged kwargs returns the same values.
   * @throws TitoError when the kwargs are not an object or contradict a pinned kwarg
   */
  mergeKwargs(requestKwargs?: ChatTemplateKwargs | null): ChatTemplateKwargs {
    if (requestKwargs === undefined || requestKwargs === null) return { ...this.defaultKwargs };
    if (!isPlainObject(requestKwargs)) throw new TitoError("chat_template_kwargs must be an object");
    return this.applyPinned({ ...this.defaultKwargs, ...requestKwargs }, "request");
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
          `appended message ${index} has role ${JSON.stringify(role)}, which the qwen3 TITO template cannot ` +
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

  /**
   * The ids {@link mergeTokens} appends after `storedIds`: "\n" (198) when they end in `<|im_end|>`, then
   * {@link tokenizeAppended}. Its cost never depends on the length of the stored history.
   */
  mergedTailIds(
    oldMessages: readonly ChatMessage[],
    newMessages: readonly ChatMessage[],
    storedIds: readonly number[],
    tools: readonly ToolSpec[] | null,
    kwargs?: ChatTemplateKwargs,
  ): number[] {
    const suffix = this.tokenizeAppended(oldMessages, newMessages, tools, kwargs);
    const addNewline = storedIds.length > 0 && storedIds[storedIds.length - 1] === this.imEndId;
    if (addNewline) suffix.unshift(this.newlineId);
    return suffix;
  }

  /**
   * Prompt ids for `newMessages` built on stored ids: stored ids, then "\n" (198) when they end in `<|im_end|>`
   * (the model stops before the template's newline), then {@link tokenizeAppended}. Never trims stored ids.
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
    return storedIds.concat(this.mergedTailIds(oldMessages, newMessages, storedIds, tools, kwargs));
  }

  /** Ids of the canonical render of `messages` (no generation prompt): the reference of the mismatch report. */
  canonicalIds(messages: readonly ChatMessage[], tools: readonly ToolSpec[] | null, kwargs?: ChatTemplateKwargs): number[] {
    const merged = this.mergeKwargs(kwargs);
    return this.memoized(["canonical", messages, tools, merged], () =>
      this.tokenizer.encode(this.tokenizer.renderChatTemplate(messages, { tools, addGenerationPrompt: false, kwargs: merged })),
    );
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
   */
  compareWithCanonical(
    messages: readonly ChatMessage[],
    tokenIds: readonly number[],
    tools: readonly ToolSpec[] | null,
    kwargs?: ChatTemplateKwargs,
  ): TitoMismatchEntry[] {
    return this.compareIds(this.canonicalIds(messages, tools, kwargs), tokenIds);
  }
}

/** Factory form of `new Qwen3Tito(tokenizer, defaultKwargs, options)`. */
export function createTito(tokenizer: Tokenizer, defaultKwargs?: ChatTemplateKwargs, options?: TitoOptions): Qwen3Tito {
  return new Qwen3Tito(tokenizer, defaultKwargs, options);
}
