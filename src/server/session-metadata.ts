// The metadata GET /sessions/{id} and the samples op share: accumulated ids, max_trim_tokens, mismatch report.
// The mismatch report is best effort (a failed render is logged and left out) and memoized per trajectory state.
import type { ChatMessage, ToolSpec } from "../tokenizer/types";
import type { JsonObject } from "../wire/sample";
import type { PolicyContext } from "./policy";
import type { SessionRecord } from "./types";

/** The `tools` of a record's upstream request, or null. */
export function recordTools(record: SessionRecord | undefined): ToolSpec[] | null {
  const tools = record?.request?.tools;
  return Array.isArray(tools) ? (tools as ToolSpec[]) : null;
}

/**
 * `tito_session_mismatch` for a trajectory: null when it is empty or the comparison could not run (logged).
 * Renders with the server's default kwargs, as the original does. `inputsName`: the caller's name for messages and
 * tools that never change, which the render memo keys by (see FamilyTito.canonicalIds).
 */
export function computeSessionMismatch(
  ctx: PolicyContext,
  messages: readonly ChatMessage[],
  tokenIds: readonly number[],
  tools: readonly ToolSpec[] | null,
  inputsName?: string | null,
): JsonObject[] | null {
  if (tokenIds.length === 0) return null;
  try {
    return ctx.tito.compareWithCanonical(messages, tokenIds, tools, ctx.defaultChatTemplateKwargs, inputsName);
  } catch (error) {
    ctx.logger.warn(`failed to compute tito_session_mismatch: ${(error as Error)?.message ?? String(error)}`);
    return null;
  }
}

/** A fresh copy of a mismatch report (its entries are flat), so no caller can alter a memoized one. */
function copyMismatchReport(report: JsonObject[] | null): JsonObject[] | null {
  return report === null ? null : report.map((entry) => ({ ...entry }));
}

interface MemoEntry {
  inputs: readonly unknown[];
  report: JsonObject[] | null;
}

/**
 * Remembers one mismatch report per key (a session state, a tree node) together with the inputs it was
 * computed from, compared by identity: a changed input recomputes, so a report is never stale. The canonical
 * render behind a report costs a full history render + encode; a session's GET and its samples op share it.
 * Reports are handed out as copies. Entries die with their key (weak map).
 */
export class MismatchMemo<Key extends object> {
  private readonly entries = new WeakMap<Key, MemoEntry>();

  /** The report for `key` if `inputs` are identical to those it was computed from, else `compute()`'s (stored). */
  report(key: Key, inputs: readonly unknown[], compute: () => JsonObject[] | null): JsonObject[] | null {
    const known = this.entries.get(key);
    if (known !== undefined && known.inputs.length === inputs.length && known.inputs.every((input, i) => Object.is(input, inputs[i]))) {
      return copyMismatchReport(known.report);
    }
    const report = compute();
    this.entries.set(key, { inputs: [...inputs], report });
    return copyMismatchReport(report);
  }
}

/** `{tito_session_mismatch?, accumulated_token_ids, max_trim_tokens}` in that key order (a null report is left out). */
export function trajectoryMetadataWithReport(ctx: PolicyContext, mismatch: JsonObject[] | null, tokenIds: readonly number[]): JsonObject {
  const metadata: JsonObject = {};
  if (mismatch !== null) metadata.tito_session_mismatch = mismatch;
  metadata.accumulated_token_ids = [...tokenIds];
  metadata.max_trim_tokens = ctx.tito.maxTrimTokens;
  return metadata;
}
