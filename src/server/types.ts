// Shapes shared by the session server's HTTP shell and its trajectory policies (v1 linear, v2 tree).
// The shell owns transport; a policy owns positioning, commit, the GET view and the samples op.
import type { ChatMessage, ToolSpec, ChatTemplateKwargs } from "../tokenizer/types";
import type { Sample, JsonObject } from "../wire/sample";

/** Session server protocol version. */
export type SessionServerVersion = "v1" | "v2";

/** One accepted generation, exactly as `GET /sessions/{id}` returns it (SPEC §6). */
export interface SessionRecord {
  /** Seconds since the epoch (float) when the upstream reply arrived. */
  timestamp: number;
  /** Seconds since the epoch (float) when the client request arrived. */
  request_timestamp: number;
  method: string;
  path: "/v1/chat/completions";
  /** The body sent upstream, including `input_ids`. */
  request: Record<string, unknown>;
  /** The full upstream JSON reply (replay tensors included). */
  response: Record<string, unknown>;
  status_code: number;
}

/** Why a samples reply holds no sample. */
export type EmptyReason = "no_records" | "all_truncated";

/** A normalized chat request, ready for positioning by a policy. */
export interface NormalizedChatRequest {
  /** The request messages as the client sent them. */
  messages: ChatMessage[];
  tools: ToolSpec[] | null;
  /** Request kwargs merged over the server defaults. */
  chatTemplateKwargs: ChatTemplateKwargs;
  /** The body to send upstream, without `input_ids` yet. */
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
  finishReason: string | null;
  record: SessionRecord;
}

/** Body of `POST /sessions/{id}/samples`. */
export interface SamplesRequestBody {
  max_seq_len: number | null;
  /** Agent metadata (v2 only). */
  metadata?: JsonObject;
}

/** What a policy's samples op produces before encoding. */
export interface SamplesResult {
  samples: Sample[];
  sessionMetadata: JsonObject;
  emptyReason: EmptyReason | null;
}

/** An error a policy or the shell turns into an HTTP status and `{"error": message}` (or text/plain for 422 samples). */
export class SessionHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "SessionHttpError";
  }
}
