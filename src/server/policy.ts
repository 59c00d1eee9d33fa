// The seam between the shared HTTP shell and a trajectory policy: v1 (linear) and v2 (tree) implement it.
// The shell calls prepare under the session lock, the upstream call without it, then commit under the lock.
import type { ChatMessage, ChatTemplateKwargs, Tokenizer, ToolSpec } from "../tokenizer/types";
import type { ReplayAssemblyOptions } from "./samples/replay";
import type { SampleExtras } from "./samples/turn-samples";
import type { JsonObject } from "../wire/sample";
import type { CompletedTurn, NormalizedChatRequest, SamplesFootprint, SamplesRequestBody, SamplesResult, SessionRecord, SessionServerVersion } from "./types";

/** Decides whether a stored message and a request message are the same history entry. */
export type MessageMatcher = (stored: ChatMessage, incoming: ChatMessage) => boolean;

/** Everything a policy may use besides its own state. Built once per server. */
export interface PolicyContext {
  /** The Qwen3 tokenizer (decoding sample responses). */
  tokenizer: Tokenizer;
  /** The TITO tokenizer of src/tokenizer (Qwen3 rules), typed structurally. */
  tito: TitoLike;
  /** The server's default chat-template kwargs (used for the canonical mismatch render, as the original does). */
  defaultChatTemplateKwargs: ChatTemplateKwargs;
  /** Decides whether a stored message and a request message are the same (strict by default). */
  messagesMatch: MessageMatcher;
  /** Warnings and notes (rollbacks, skipped updates, picker notes); the user can silence it. */
  logger: PolicyLogger;
  /** How the samples op reads routing-replay payloads (default: no layer count, full R3). */
  replay?: ReplayAssemblyOptions;
  /** Debug messages and speculative counters the samples op adds (default: neither, as miles' defaults). */
  sampleExtras?: SampleExtras;
}

/** Minimal logger used by the server, its policies and hooks. */
export interface PolicyLogger {
  /** Something the user should see (skipped updates, picker decisions, failed mismatch reports). */
  warn(message: string): void;
  /** Optional notes (rollbacks, branching); left out by default. */
  info?(message: string): void;
}

/** The TITO operations a policy needs (implemented in src/tokenizer). */
export interface TitoLike {
  /** Trailing completion tokens a later turn may legitimately re-render differently (0 for Qwen3). */
  readonly maxTrimTokens: number;
  /** Roles a request may append after the stored history. */
  readonly allowedAppendRoles: ReadonlySet<string>;
  /** Prompt ids for a conversation rendered from scratch with the generation prompt. */
  renderPromptIds(messages: readonly ChatMessage[], tools: readonly ToolSpec[] | null, kwargs: ChatTemplateKwargs): number[];
  /** Prompt ids = stored ids (+ "\n" after <|im_end|>) + the suffix for newMessages beyond oldMessages. */
  mergeTokens(
    oldMessages: readonly ChatMessage[],
    newMessages: readonly ChatMessage[],
    storedIds: readonly number[],
    tools: readonly ToolSpec[] | null,
    kwargs: ChatTemplateKwargs,
  ): number[];
  /**
   * Mismatch report between the canonical render of messages and the accumulated ids. `inputsName`: the caller's
   * name for messages and tools that never change, which the render memo keys by (see FamilyTito.canonicalIds).
   */
  compareWithCanonical(
    messages: readonly ChatMessage[],
    tokenIds: readonly number[],
    tools: readonly ToolSpec[] | null,
    kwargs: ChatTemplateKwargs,
    inputsName?: string | null,
  ): JsonObject[];
}

/** The result of positioning a request: the prompt to send plus policy-private data for commit. */
export interface PreparedTurn<Plan> {
  /** The TITO prompt ids sent upstream as `input_ids`. */
  promptIds: number[];
  /** What commit needs to place the generation (v1: the turn count; v2: the captured parent). */
  plan: Plan;
  /**
   * The stored token ids this request builds on (v1: the checkpoint after any rollback; v2: the attach node's
   * snapshot, empty for a new root). Needed for additional R3 (`routed_experts_start_len`).
   */
  checkpointIds?: readonly number[];
  /**
   * The stored record whose prompt ids this prompt most likely extends (v1: the last turn kept; v2: the attach node's),
   * or null for none (a new root). A hint for spelling the upstream body: the shell copies that record's spelled ids
   * only after checking them id by id. Left out, the shell tries the newest stored record.
   */
  baseRecord?: SessionRecord | null;
}

/** What `GET /sessions/{id}` shows for a session. */
export interface SessionView {
  /** The records of the current trajectory (v2: the active path). */
  records: SessionRecord[];
  /** `accumulated_token_ids`, `max_trim_tokens`, `tito_session_mismatch` when computable (v2: plus `tree`). */
  metadata: JsonObject;
}

/**
 * A trajectory policy: one per server version. `State` is one session's trajectory data.
 * All four operations are synchronous; the shell serializes prepare/commit per session with a lock
 * and never holds it across the upstream call.
 */
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
  view(state: State, ctx: PolicyContext): SessionView;
  /** The samples op before encoding. Throws SessionHttpError(422, ..., plainText=true) when assembly or a hook fails. */
  collectSamples(state: State, body: SamplesRequestBody, ctx: PolicyContext): SamplesResult;
  /**
   * Every record the state holds (v1: the trajectory's, v2: every node's), for the session budget's byte charge: a
   * rollback then frees what it discards. Optional: without it a session's charge only grows until DELETE.
   */
  storedRecords?(state: State): readonly SessionRecord[];
  /**
   * What {@link collectSamples} would assemble from `state`, counted without assembling anything (a walk over the
   * stored nodes at most): the shell sizes the reply from it and refuses one the session budget cannot hold (413 when
   * no budget could, 503 when the server is full) before any work. Optional: without it the shell counts every stored
   * record as a sample of its own tokens.
   */
  samplesFootprint?(state: State): SamplesFootprint;
}

/** A policy of unknown state/plan types, as the shell holds it (methods are bivariant, so any policy fits). */
export type AnyTrajectoryPolicy = TrajectoryPolicy<unknown, unknown>;
