// The mock backend's JSON writer: JSON.stringify's compact text, except that a negative zero is written `-0.0`
// as SGLang's Python JSON writes it (JSON.stringify would write `0` and lose the sign before any client sees it).
import { randomBytes } from "node:crypto";

/**
 * Stand-in for `-0` during the native stringify: a string no reply holds (a per-process random nonce between NUL
 * characters), whose quoted JSON form is then replaced by `-0.0`. Keeps the native writer's speed.
 */
const NEGATIVE_ZERO_MARK = `\u0000-0.0:${randomBytes(12).toString("hex")}\u0000`;
const QUOTED_MARK = JSON.stringify(NEGATIVE_ZERO_MARK);

function markNegativeZero(_key: string, value: unknown): unknown {
  return value === 0 && Object.is(value, -0) ? NEGATIVE_ZERO_MARK : value;
}

/**
 * Serializes a reply body compactly. Same text as `JSON.stringify(value)` (toJSON, undefined members and all),
 * except that every `-0` is written `-0.0`, so a parity run carries the mock's first log-prob (`-0/128`) as the
 * negative zero SGLang would send.
 */
export function stringifyReplyJson(value: unknown): string {
  const text: string | undefined = JSON.stringify(value, markNegativeZero);
  if (text === undefined) return text as unknown as string; // JSON.stringify(undefined), as the native writer answers
  return text.includes(QUOTED_MARK) ? text.split(QUOTED_MARK).join("-0.0") : text;
}
