// The history rules a request must satisfy before its new messages are TITO-merged onto a stored prefix:
// how far it repeats the stored messages, that it extends them, and that every appended role is allowed.
import type { ChatMessage } from "../tokenizer/types";
import { jsonEqual } from "./json-equal";
import { TEMPLATE_RELEVANT_KEYS } from "./message-matchers";
import type { MessageMatcher } from "./policy";
import { pyFrozensetRepr, pyRepr, pyStr, pyStrRepr } from "../wire/py-json";
import { SessionHttpError } from "./types";

/**
 * Number of leading request messages that match the stored messages one by one. `knownMatched` leading pairs are
 * taken as already compared and matching (a count an earlier comparison of the same arrays under `matcher`, or under
 * a matcher it implies, returned), so a caller never compares the same pair twice.
 */
export function matchedPrefixLength(stored: readonly ChatMessage[], incoming: readonly ChatMessage[], matcher: MessageMatcher, knownMatched = 0): number {
  const n = Math.min(stored.length, incoming.length);
  for (let i = Math.min(knownMatched, n); i < n; i += 1) {
    if (!matcher(stored[i], incoming[i])) return i;
  }
  return n;
}

/** Python `text[:200]` (code points, not UTF-16 units). */
function head200(text: string): string {
  const chars = Array.from(text);
  return chars.length > 200 ? chars.slice(0, 200).join("") : text;
}

/** The suffix Python appends to every append-only refusal of v1 and to v2's disallowed-role refusal. */
const ROLE_REFUSAL_SUFFIX = "; the selected TITO fixed template does not support appending this role";

/**
 * v2's role check on the suffix beyond the attach point, with the Python v2 text
 * (`appended message role='x' not allowed (allowed=[...sorted]); ...`).
 * @throws SessionHttpError(400) for the first message whose role the TITO template cannot append
 */
export function assertAllowedSuffixRoles(incoming: readonly ChatMessage[], firstIndex: number, allowedRoles: ReadonlySet<string>): void {
  for (let j = firstIndex; j < incoming.length; j += 1) {
    const role = incoming[j].role;
    if (!allowedRoles.has(role)) {
      throw new SessionHttpError(400, `appended message role=${pyRepr(role)} not allowed (allowed=${pyRepr([...allowedRoles].sort())})${ROLE_REFUSAL_SUFFIX}`);
    }
  }
}

/**
 * v1's append-only check, Python's texts included: `incoming` extends `stored` message by message and every
 * appended role is allowed. `knownMatched` (at most `incoming.length`) leading pairs are taken as already compared
 * and matching under `matcher` (the rollback search compared them), so only the rest is compared again.
 * @throws SessionHttpError(400) naming the first offending index
 */
export function assertAppendOnly(
  stored: readonly ChatMessage[],
  incoming: readonly ChatMessage[],
  allowedRoles: ReadonlySet<string>,
  matcher: MessageMatcher,
  knownMatched = 0,
): void {
  if (stored.length === 0) return;
  if (incoming.length < stored.length) {
    // Python raises ValueError(text, new, stored), so its str() is the repr of that 3-tuple.
    const text = `new messages (${incoming.length}) are fewer than stored messages (${stored.length})`;
    throw new SessionHttpError(400, `(${pyStrRepr(text)}, ${pyRepr(incoming)}, ${pyRepr(stored)})${ROLE_REFUSAL_SUFFIX}`);
  }
  for (let i = Math.min(knownMatched, stored.length); i < stored.length; i += 1) {
    if (!matcher(stored[i], incoming[i])) {
      const diffs: Record<string, { stored: string; new: string }> = {};
      for (const key of TEMPLATE_RELEVANT_KEYS) {
        if (!jsonEqual(stored[i][key], incoming[i][key])) diffs[key] = { stored: head200(pyRepr(stored[i][key])), new: head200(pyRepr(incoming[i][key])) };
      }
      throw new SessionHttpError(
        400,
        `message mismatch at index ${i} (role: stored=${pyStr(stored[i].role)}, new=${pyStr(incoming[i].role)}). Diffs: ${pyRepr(diffs)}${ROLE_REFUSAL_SUFFIX}`,
      );
    }
  }
  for (let j = stored.length; j < incoming.length; j += 1) {
    const role = incoming[j].role;
    if (!allowedRoles.has(role)) {
      // v1's Python text: the index, the role's repr and the allowed frozenset (whose order Python leaves to the hash seed).
      throw new SessionHttpError(
        400,
        `appended message at index ${j} has role=${pyRepr(role)}, allowed=${pyFrozensetRepr(allowedRoles)}${ROLE_REFUSAL_SUFFIX}`,
      );
    }
  }
}
