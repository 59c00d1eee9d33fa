// The seam between the shared HTTP shell and a trajectory policy: v1 (linear) and v2 (tree) implement it.
// The shell calls prepare under the session lock, the upstream call without it, then commit under the lock.
import type { Tokenizer } from "../tokenizer/types";
import type { JsonObject } from "../wire/sample";
import type {
  CompletedTurn,
  NormalizedChatRequest,
  SamplesRequestBody,
  SamplesResult,
  SessionRecord,
  SessionServerVersion,
} from "./types";

/** Everything a policy may use besides its own state. Built once per server. */
export interface PolicyContext {
  tokenizer: Tokenizer;
  /**
   * The TITO tokenizer of src/tokenizer (Qwen3 rules). Typed structurally here so this contract does not
   * depend on the implementation module; see src/tokenizer for the concrete class.
   */
  tito: TitoLike;
  /** Decides whether a stored message and a request message are the same (strict by default). */
  messagesMatch: (stored: import("../tokenizer/types").ChatMessage, incoming: import("../tokenizer/types").ChatMessage) => boolean;
  /** Warnings (e.g. picker notes); the user can silence it. */
  logger: PolicyLogger;
}

/** Minimal logger used by policies and hooks. */
export interface PolicyLogger {
  warn(message: string): void;
}

/** The TITO operations a policy needs (implemented in src/tokenizer). */
export interface TitoLike {
  readonly maxTrimTokens: number;
  readonly allowedAppendRoles: ReadonlySet<string>;
  /** Prompt ids for a conversation rendered from scratch with the generation prompt. */
  renderPromptIds(
    messages: readonly import("../tokenizer/types").ChatMessage[],
    tools: readonly import("../tokenizer/types").ToolSpec[] | null,
    kwargs: import("../tokenizer/types").ChatTemplateKwargs,
  ): number[];
  /** Prompt ids = stored ids (+ "\n" after <|im_end|>) + the suffix for newMessages beyond oldMessages. */
  mergeTokens(
    oldMessages: readonly import("../tokenizer/types").ChatMessage[],
    newMessages: readonly import("../tokenizer/types").ChatMessage[],
    storedIds: readonly number[],
    tools: readonly import("../tokenizer/types").ToolSpec[] | null,
    kwargs: import("../tokenizer/types").ChatTemplateKwargs,
  ): number[];
  /** Mismatch report between the canonical render of messages and the accumulated ids. */
  compareWithCanonical(
    messages: readonly import("../tokenizer/types").ChatMessage[],
    tokenIds: readonly number[],
    tools: readonly import("../tokenizer/types").ToolSpec[] | null,
    kwargs: import("../tokenizer/types").ChatTemplateKwargs,
  ): JsonObject[];
}

/** The result of positioning a request: the prompt to send plus policy-private data for commit. */
export interface PreparedTurn<Plan> {
  promptIds: number[];
  plan: Plan;
}

/** A trajectory policy: one per server version. `State` is one session's trajectory data. */
export interface TrajectoryPolicy<State, Plan> {
  readonly version: SessionServerVersion;
  /** The samples-payload json field list of this version (SPEC §7.4). */
  readonly wireFields: readonly string[];
  /** A new, empty per-session state. */
  createState(): State;
  /** Positions a request (may roll back / choose an attach node). Throws SessionHttpError (400/409/422). */
  prepare(state: State, request: NormalizedChatRequest, ctx: PolicyContext): PreparedTurn<Plan>;
  /**
   * Commits a validated upstream turn. Returns false when the update is skipped (e.g. v1: the number of
   * generated turns changed during the call). Throws SessionHttpError (500 when the stored prefix is not a
   * prefix of the new prompt + completion).
   */
  commit(state: State, plan: Plan, request: NormalizedChatRequest, turn: CompletedTurn, ctx: PolicyContext): boolean;
  /** The `GET /sessions/{id}` view: records and metadata. */
  view(state: State, ctx: PolicyContext): { records: SessionRecord[]; metadata: JsonObject };
  /** The samples op before encoding. Throws SessionHttpError(422) when assembly or a hook fails. */
  collectSamples(state: State, body: SamplesRequestBody, ctx: PolicyContext): SamplesResult;
}
