// The contract between the mock backend and the scripts that decide what the "model" answers.
// A process function sees the rendered prompt text and returns the completion text plus engine metadata.
import type { MockFormats } from "./mock-model";

/** Finish reasons the mock engine can report. */
export type FinishReason = "stop" | "tool_calls" | "length" | "abort";

/** Extra `meta_info` fields the engine reports besides token accounting. */
export interface ProcessMetaInfo {
  weight_version?: string;
  routed_experts?: unknown;
  indexer_topk?: unknown;
  e2e_latency?: number;
  spec_accept_token_num?: number;
  spec_draft_token_num?: number;
  spec_verify_ct?: number;
  [extra: string]: unknown;
}

/** What a process function returns for one request. */
export interface ProcessResult {
  /** Completion text (Qwen2.5 `<tool_call>` blocks become tool calls). */
  text: string;
  /** Defaults to "stop" (or "tool_calls" when the text holds a parsed tool call). */
  finish_reason?: FinishReason;
  /** Reported as `meta_info.cached_tokens` and `usage.prompt_tokens_details.cached_tokens`; default 0. */
  cached_tokens?: number;
  /** Merged into the reply's `meta_info`. */
  meta_info?: ProcessMetaInfo;
  /** When set, the per-token log-probs come from `plannedLogprobs(seed, count)` (one of them `-0`) instead of the default ramp. */
  output_logprobs_seed?: number;
}

/** What the mock knows about a generation request besides its body. */
interface ProcessContext {
  /** The request headers as the backend received them. */
  headers: Headers;
  /** The formats the mock writes the family's tool calls and reasoning in (scripted replies adapt to them). */
  formats?: MockFormats;
}

/** The request body as the backend received it (already parsed JSON). */
export type BackendRequestBody = Record<string, unknown>;

/** Maps a rendered prompt to a scripted completion. May be async. */
export type ProcessFunction = (prompt: string, request: BackendRequestBody, context?: ProcessContext) => ProcessResult | Promise<ProcessResult>;
