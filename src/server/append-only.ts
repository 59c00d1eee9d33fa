// The history rules a request must satisfy before its new messages are TITO-merged onto a stored prefix:
// how far it repeats the stored messages, that it extends them, and that every appended role is allowed.
import type { ChatMessage } from "../tokenizer/types";
import { jsonEqual } from "./json-equal";
import { TEMPLATE_RELEVANT_KEYS } from "./message-matchers";
import type { MessageMatcher } from "./policy";
import { SessionHttpError } from "./types";

/** Number of leading request messages that match the stored messages one by one. */
export function matchedPrefixLength(stored: readonly ChatMessage[], incoming: readonly ChatMessage[], matcher: MessageMatcher): number {
  const n = Math.min(stored.length, incoming.length);
  for (let i = 0; i < n; i += 1) {
    if (!matcher(stored[i], incoming[i])) return i;
  }
  return n;
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/**
 * Checks that every message of `incoming` from `firstIndex` on has a role the TITO template can append.
 * Used by v1 after its append-only check and by v2 on the suffix beyond the attach point.
 * @throws SessionHttpError(400) naming the first offending index, its role and the allowed roles
 */
export function assertAllowedAppendRoles(incoming: readonly ChatMessage[], firstIndex: number, allowedRoles: ReadonlySet<string>): void {
  for (let j = firstIndex; j < incoming.length; j += 1) {
    const role = incoming[j].role;
    if (!allowedRoles.has(role)) {
      throw new SessionHttpError(
        400,
        `appended message at index ${j}: role ${JSON.stringify(role)} is not allowed (allowed: ${[...allowedRoles].sort().join(", ")}); ` +
          `the TITO template cannot append this role after the stored history`,
      );
    }
  }
}

/**
 * Checks `incoming` extends `stored` message by message and that every appended role is allowed.
 * @throws SessionHttpError(400) naming the first offending index
 */
export function assertAppendOnly(
  stored: readonly ChatMessage[],
  incoming: readonly ChatMessage[],
  allowedRoles: ReadonlySet<string>,
  matcher: MessageMatcher,
): void {
  if (stored.length === 0) return;
  if (incoming.length < stored.length) {
    throw new SessionHttpError(400, `request has ${incoming.length} messages, fewer than the ${stored.length} stored messages`);
  }
  for (let i = 0; i < stored.length; i += 1) {
    if (!matcher(stored[i], incoming[i])) {
      const diffs = TEMPLATE_RELEVANT_KEYS.filter((key) => !jsonEqual(stored[i][key], incoming[i][key]))
        .map((key) => `${key}: stored=${preview(stored[i][key])} new=${preview(incoming[i][key])}`)
        .join("; ");
      throw new SessionHttpError(400, `message mismatch at index ${i} (role: stored=${stored[i].role}, new=${incoming[i].role}); ${diffs}`);
    }
  }
  assertAllowedAppendRoles(incoming, stored.length, allowedRoles);
}
