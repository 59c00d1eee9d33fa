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

/** Where a negative zero sits: a container and its key (an array index or an object key). */
type Slot = [container: Record<string | number, unknown>, key: string | number];

/**
 * Collects every -0 of a value made of arrays and objects into `slots`; false when the value holds something this
 * walk cannot stand in for the native writer on (a toJSON method, a -0 in a frozen container, very deep nesting):
 * then the replacer form is used.
 */
function negativeZeroSlots(value: object, slots: Slot[], depth: number): boolean {
  if (depth > 256) return false;
  const isArray = Array.isArray(value);
  if (!isArray && typeof (value as { toJSON?: unknown }).toJSON === "function") return false;
  const frozen = Object.isFrozen(value);
  const container = value as Record<string | number, unknown>;
  if (isArray) {
    for (let i = 0; i < (value as unknown[]).length; i++) if (!visitSlot(container, i, frozen, slots, depth)) return false;
    return true;
  }
  for (const key in container) {
    if (Object.prototype.hasOwnProperty.call(container, key) && !visitSlot(container, key, frozen, slots, depth)) return false;
  }
  return true;
}

/** One member of a container for {@link negativeZeroSlots} (a plain function: no closure per container walked). */
function visitSlot(container: Record<string | number, unknown>, key: string | number, frozen: boolean, slots: Slot[], depth: number): boolean {
  const item = container[key];
  if (typeof item === "number") {
    if (item !== 0 || 1 / item > 0) return true;
    if (frozen) return false;
    slots.push([container, key]);
    return true;
  }
  return item === null || typeof item !== "object" || negativeZeroSlots(item, slots, depth + 1);
}

/**
 * Serializes a reply body compactly. Same text as `JSON.stringify(value)` (toJSON, undefined members and all),
 * except that every `-0` is written `-0.0`, so a parity run carries the mock's first log-prob (`-0/128`) as the
 * negative zero SGLang would send. The common reply (plain objects and arrays) is written by the native writer with
 * each -0 swapped for a marker during the call and put back after; anything else takes a replacer.
 */
export function stringifyReplyJson(value: unknown): string {
  const slots: Slot[] = [];
  if (value === null || typeof value !== "object" || !negativeZeroSlots(value, slots, 0)) return stringifyWithReplacer(value);
  if (slots.length === 0) return JSON.stringify(value);
  let text: string | undefined;
  let swapped = 0;
  try {
    for (; swapped < slots.length; swapped++) slots[swapped][0][slots[swapped][1]] = NEGATIVE_ZERO_MARK;
    text = JSON.stringify(value);
  } catch {
    text = undefined; // a property that would not take the marker (an accessor): the replacer form below
  } finally {
    for (let i = 0; i < swapped; i++) slots[i][0][slots[i][1]] = -0;
  }
  return text === undefined ? stringifyWithReplacer(value) : text.split(QUOTED_MARK).join("-0.0");
}

function stringifyWithReplacer(value: unknown): string {
  const text: string | undefined = JSON.stringify(value, markNegativeZero);
  if (text === undefined) return text; // JSON.stringify(undefined), as the native writer answers
  return text.includes(QUOTED_MARK) ? text.split(QUOTED_MARK).join("-0.0") : text;
}
