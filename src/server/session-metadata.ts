// The metadata GET /sessions/{id} and the samples op share: accumulated ids, max_trim_tokens, mismatch report.
// The mismatch report is best effort: when the canonical render fails it is logged and left out.
import type { ChatMessage, ToolSpec } from "../tokenizer/types";
import type { JsonObject, JsonValue } from "../wire/sample";
import type { PolicyContext } from "./policy";
import type { SessionRecord } from "./types";

/** The `tools` of a record's upstream request, or null. */
export function recordTools(record: SessionRecord | undefined): ToolSpec[] | null {
  const tools = record?.request?.tools;
  return Array.isArray(tools) ? (tools as ToolSpec[]) : null;
}

/**
 * `tito_session_mismatch` for a trajectory: null when it is empty or the comparison could not run (logged).
 * Renders with the server's default kwargs, as the original does.
 */
export function computeSessionMismatch(
  ctx: PolicyContext,
  messages: readonly ChatMessage[],
  tokenIds: readonly number[],
  tools: readonly ToolSpec[] | null,
): JsonObject[] | null {
  if (tokenIds.length === 0) return null;
  try {
    return ctx.tito.compareWithCanonical(messages, tokenIds, tools, ctx.defaultChatTemplateKwargs);
  } catch (error) {
    ctx.logger.warn(`failed to compute tito_session_mismatch: ${(error as Error)?.message ?? String(error)}`);
    return null;
  }
}

/** `{tito_session_mismatch?, accumulated_token_ids, max_trim_tokens}` in that key order. */
export function trajectoryMetadata(ctx: PolicyContext, messages: readonly ChatMessage[], tokenIds: readonly number[], tools: readonly ToolSpec[] | null): JsonObject {
  const metadata: JsonObject = {};
  const mismatch = computeSessionMismatch(ctx, messages, tokenIds, tools);
  if (mismatch !== null) metadata.tito_session_mismatch = mismatch as JsonValue;
  metadata.accumulated_token_ids = [...tokenIds];
  metadata.max_trim_tokens = ctx.tito.maxTrimTokens;
  return metadata;
}
