// Shapes shared by the session server's HTTP shell and its trajectory policies (v1 linear, v2 tree).
// The shell owns transport; a policy owns positioning, commit, the GET view and the samples op.
import type { ChatMessage, ToolSpec, ChatTemplateKwargs } from "../tokenizer/types";
import type { Sample, JsonObject } from "../wire/sample";

/** Session server protocol version. */
export type SessionServerVersion = "v1" | "v2";

/**
 * Which miles revision the refusal rules follow (docs/PROTOCOL.md, "Which miles revision"):
 * - `"3311"` (default): miles with PR #3311 (a v1 retry is validated and rendered before its rollback is applied, so a
 *   refused retry keeps the history) and PR #3258 (the v2 view follows the last committed node, never the position
 *   a refused or pending request moved to).
 * - `"31f1ca96"`: the snapshot the servers were first written against (the rollback / view move is applied first and
 *   a refusal afterwards keeps it).
 */
export type MilesRevision = "3311" | "31f1ca96";

/** All {@link MilesRevision} values, the default first. */
export const MILES_REVISIONS: readonly MilesRevision[] = ["3311", "31f1ca96"];

/** One accepted generation, exactly as `GET /sessions/{id}` returns it (SPEC §6). */
export interface SessionRecord {
  /** Seconds since the epoch (float) when the upstream reply was accepted. */
  timestamp: number;
  /** Seconds since the epoch (float) when the client request arrived. */
  request_timestamp: number;
  /** The client's HTTP method (always `POST` for chat). */
  method: string;
  /** The upstream route the generation went through. */
  path: "/v1/chat/completions";
  /** The body sent upstream, including `input_ids`. */
  request: Record<string, unknown>;
  /** The full upstream JSON reply (replay tensors included). */
  response: Record<string, unknown>;
  /** The upstream status (only 200 replies are recorded). */
  status_code: number;
}

/** Why a samples reply holds no sample (the wire codec's type, re-exported for policies). */
export type { EmptyReason } from "../wire/samples-codec";
import type { EmptyReason } from "../wire/samples-codec";

/** A normalized chat request, ready for positioning by a policy. */
export interface NormalizedChatRequest {
  /** The request messages as the client sent them (each an object with a string `role`). */
  messages: ChatMessage[];
  /** The request's `tools`, or null when absent. */
  tools: ToolSpec[] | null;
  /** Request kwargs merged over the server defaults (what the template renders with). */
  chatTemplateKwargs: ChatTemplateKwargs;
  /** The body to send upstream, without `input_ids` yet (the shell appends them after `prepare`). */
  upstreamBody: Record<string, unknown>;
  /** Whether the client asked for `stream: true`. */
  clientStream: boolean;
}

/** The validated outcome of one upstream call. */
export interface CompletedTurn {
  /** Prompt token ids sent upstream as `input_ids`. */
  promptIds: number[];
  /** Completion token ids (second elements of `output_token_logprobs`). */
  completionIds: number[];
  /** `choices[0].message` as the backend returned it. */
  assistantMessage: ChatMessage;
  /** `choices[0].finish_reason` (null when absent). */
  finishReason: string | null;
  /** `response.id` of the upstream reply (null when absent). */
  responseId: string | null;
  /** The record to store when the policy commits the turn. */
  record: SessionRecord;
}

/** Body of `POST /sessions/{id}/samples`, validated by the shell. */
export interface SamplesRequestBody {
  /** Token budget per sample, or null for no truncation. */
  max_seq_len: number | null;
  /** Agent metadata (v2 only; v1 ignores it). */
  metadata?: JsonObject;
}

/**
 * What a samples op would assemble, counted before any work so the session budget can admit or refuse the reply
 * (see `TrajectoryPolicy.samplesFootprint`).
 */
export interface SamplesFootprint {
  /** Samples the op writes at most (v1: one; v2: one per leaf). */
  samples: number;
  /** Token ids over all of them (v2: each leaf's whole path). */
  sampleTokens: number;
  /** Token ids the session metadata repeats (`accumulated_token_ids` of the view). */
  viewTokens: number;
  /** Whether each sample's metadata carries the request's `metadata` (v2's default post-processor merges it in). */
  carriesRequestMetadata: boolean;
}

/** What a policy's samples op produces before encoding. */
export interface SamplesResult {
  /** The samples to encode (v1: at most one; v2: the post-processor's output). */
  samples: Sample[];
  /** The payload's `session_metadata` (the GET metadata, plus `agent` in v2). */
  sessionMetadata: JsonObject;
  /** Why `samples` is empty, or null when it is not. */
  emptyReason: EmptyReason | null;
}

/**
 * An error a policy or the shell turns into an HTTP status and `{"error": message}`.
 * Set `plainText` for samples-op failures (422 `text/plain`).
 */
export class SessionHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly plainText = false,
  ) {
    super(message);
    this.name = "SessionHttpError";
  }
}
