// The session budget's charge for one chat turn: the upstream body sized once when the turn is reserved, and the
// committed record charged from that size (and its reply's size from the parse, else a walk of its tree).
import { RETAINED_SLOT_BYTES, retainedBytes, retainedBytesWithout, retainedTreeBytes } from "./retained-size";
import type { CompletedTurn } from "./types";

/** The retained size of a chat turn's upstream body when it was reserved, before positioning added its prompt ids. */
export interface SizedBody {
  body: Record<string, unknown>;
  bytes: number;
  /** Its key count then, and whether `input_ids` was one of them. */
  keys: number;
  hadIds: boolean;
}

export function sizeUpstreamBody(body: Record<string, unknown>): SizedBody {
  return { body, bytes: retainedBytes([body]), keys: Object.keys(body).length, hadIds: "input_ids" in body };
}

/**
 * A committed record's charge: the record and its assistant message, as {@link retainedBytes} counts them. The
 * upstream body (the client's messages and tools: the bulk of a long conversation) was sized when the turn was
 * reserved; when positioning only added `input_ids` since, that size plus the ids' array is its size now, so the
 * messages are not walked a second time. Any other change to the body (additional-R3 offsets) walks it again.
 * `responseBytes`, when the parse knew it (`ExtractedCompletion.responseBytes`), is the reply's own size.
 */
export function recordBytes(committed: CompletedTurn, sizedBody: SizedBody | undefined, responseBytes?: number): number {
  const { record } = committed;
  const body = record.request;
  const onlyIdsAdded =
    sizedBody !== undefined &&
    sizedBody.body === body &&
    !sizedBody.hadIds &&
    "input_ids" in body &&
    Object.keys(body).length === sizedBody.keys + 1 &&
    !("routed_experts_start_len" in body);
  if (!onlyIdsAdded) return retainedBytes([record, committed.assistantMessage]);
  // The body's own slot for the new key, then the ids; the body itself is charged as reserved (seen: not walked).
  const bodyBytes = sizedBody.bytes + RETAINED_SLOT_BYTES + retainedBytes([body.input_ids]);
  return (
    bodyBytes +
    (isOwnReplyMessage(committed)
      ? recordShellBytes(record) + (responseBytes ?? retainedTreeBytes([record.response]))
      : retainedBytes([record, committed.assistantMessage], new Set<object>([body])))
  );
}

/** True when the assistant message is the reply's own `choices[0].message` (extractCompletion's), not a copy. */
function isOwnReplyMessage(committed: CompletedTurn): boolean {
  const choices = committed.record.response.choices;
  return (
    Array.isArray(choices) &&
    typeof choices[0] === "object" &&
    choices[0] !== null &&
    (choices[0] as { message?: unknown }).message === committed.assistantMessage
  );
}

const RECORD_TREES = ["request", "response"] as const;

/** The record object's own fields: everything but its request and response, which are sized apart. */
function recordShellBytes(record: CompletedTurn["record"]): number {
  // The record's two tree slots still cost a slot each.
  return retainedBytesWithout(record as unknown as Record<string, unknown>, RECORD_TREES) + 2 * RETAINED_SLOT_BYTES;
}
