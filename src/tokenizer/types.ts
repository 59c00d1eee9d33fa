// Shared shapes of chat messages, tools and the tokenizer contract used by servers, backend and agent.
// Kept separate from the implementation so other components can depend on the contract alone.

/** One OpenAI-style tool call as it appears in `message.tool_calls`. */
export interface ToolCall {
  id?: string;
  type?: "function";
  /** Position of the call in a streamed reply; ignored by message matching. */
  index?: number;
  function: {
    name: string;
    /** JSON string on the wire; an object after normalization for rendering. */
    arguments: string | Record<string, unknown>;
  };
}

/** One OpenAI-style chat message. Extra keys sent by clients are preserved. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  reasoning_content?: string | null;
  tool_calls?: ToolCall[] | null;
  tool_call_id?: string;
  name?: string;
  [extra: string]: unknown;
}

/** An OpenAI tool definition (`{type: "function", function: {name, description, parameters}}`). */
export type ToolSpec = Record<string, unknown>;

/** Keyword arguments handed to the chat template (`enable_thinking`, `clear_thinking`, ...). */
export type ChatTemplateKwargs = Record<string, unknown>;

/** Options for {@link Tokenizer.renderChatTemplate}. */
export interface RenderOptions {
  tools?: readonly ToolSpec[] | null;
  addGenerationPrompt?: boolean;
  kwargs?: ChatTemplateKwargs;
}

/** A loaded tokenizer with its chat template. All operations are synchronous once loaded. */
export interface Tokenizer {
  /** Model family name used in metadata (`"qwen3"`). */
  readonly family: string;
  /** Where tokenizer.json was read from. */
  readonly source: string;
  /** Encodes text without adding special tokens. */
  encode(text: string): number[];
  /** Decodes ids; special tokens are kept unless `skipSpecialTokens` is true. */
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string;
  /** Id of a vocabulary token, or undefined. */
  tokenToId(token: string): number | undefined;
  /** Ids of all special (added, special) tokens. */
  readonly specialIds: ReadonlySet<number>;
  /**
   * One past the highest id of the vocabulary (model tokens and added tokens). Servers refuse backend token ids
   * at or above it; when absent, only non-negative integers are required.
   */
  readonly vocabSize?: number;
  /** The checkpoint's `eos_token` text (tokenizer_config.json), when known: the engine's stop token by default. */
  readonly eosToken?: string;
  /** Renders messages with the package's append-safe chat template. */
  renderChatTemplate(messages: readonly ChatMessage[], options?: RenderOptions): string;
}
