// The session budget's charge for one chat turn: the upstream body sized once when the turn is reserved, and the
// committed record charged from that size (and its reply's size from the parse, else a walk of its tree).
import { RETAINED_SLOT_BYTES, retainedBytes, retainedBytesWithout, retainedTreeBytes } from "./retained-size";
import type { SharedHistory } from "./shared-history";
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

/**
 * A committed record's charge when it builds on stored history ({@link shareStoredHistory}): only what it adds, never
 * a walk of the history it shares. `shared` names the request's leading messages (and tools) that are the stored
 * record's objects: they are charged to that record already. Equals {@link retainedBytes} of the record and its
 * assistant message with the shared objects counted as seen. `responseBytes`, when the parse knew it, is the reply's
 * own size.
 */
export function suffixRecordBytes(committed: CompletedTurn, shared: SharedHistory, responseBytes?: number): number {
  const { record } = committed;
  const request = record.request;
  const messages = request.messages;
  if (!Array.isArray(messages) || (shared.messages === 0 && !shared.tools)) return retainedBytes([record, committed.assistantMessage]);
  const seen = new Set<object>();
  for (let i = 0; i < shared.messages; i += 1) if (typeof messages[i] === "object" && messages[i] !== null) seen.add(messages[i] as object);
  if (shared.tools && typeof request.tools === "object" && request.tools !== null) seen.add(request.tools);
  const fresh = retainedBytes(messages.slice(shared.messages), seen);
  // the request without its messages (their list's own slots counted here, the fresh ones above), then the reply
  // and the prompt ids (small integers: a packed list) counted from their number, not walked
  const idsCounted = Array.isArray(request.input_ids) && request.input_ids.length === committed.promptIds.length;
  const omitted = ["messages", ...(shared.tools ? ["tools"] : []), ...(idsCounted ? ["input_ids"] : [])];
  const requestBytes =
    retainedBytesWithout(request, omitted) +
    (omitted.length - 1) * RETAINED_SLOT_BYTES +
    RETAINED_SLOT_BYTES +
    ARRAY_BYTES(messages.length) +
    fresh +
    (idsCounted ? ARRAY_BYTES(committed.promptIds.length) : 0);
  const replyBytes = isOwnReplyMessage(committed)
    ? (responseBytes ?? retainedTreeBytes([record.response]))
    : retainedBytes([record.response, committed.assistantMessage], seen);
  return recordShellBytes(record) + requestBytes + replyBytes;
}

/** A list's own bytes (header and slots) as retained-size.ts counts them. */
const ARRAY_BYTES = (length: number): number => 48 + RETAINED_SLOT_BYTES * length;
