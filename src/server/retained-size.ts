// Estimates the heap bytes a stored value keeps alive, from V8's object layout on 64-bit Node (no pointer compression).
// The session budget charges sessions with it; a test checks the estimate against measured heap growth.
import type { JsonTreeTally } from "../wire/py-json-scan";

/** Bytes of one V8 heap slot (a pointer or an unboxed double). */
const SLOT = 8;
/** {@link SLOT}, for callers that add one field's slot to a size measured before the field existed. */
export const RETAINED_SLOT_BYTES = SLOT;
/** A plain object's header (map, properties, elements). */
const OBJECT_HEADER = 3 * SLOT;
/** A JSArray's header (map, properties, elements, length) plus its backing store's header (map, length). */
const ARRAY_HEADER = 4 * SLOT + 2 * SLOT;
/** A sequential string's header (map, hash, length). */
const STRING_HEADER = 2 * SLOT;
/** A boxed number (HeapNumber) stored in an object field or a mixed array. */
const HEAP_NUMBER = 2 * SLOT;
/** A typed array's JS wrapper and its ArrayBuffer object. */
const TYPED_ARRAY_HEADER = 20 * SLOT;

const roundUp = (bytes: number): number => Math.ceil(bytes / SLOT) * SLOT;

// eslint-disable-next-line no-control-regex -- the Latin-1 range is exactly what is being tested
const BEYOND_LATIN1 = /[^\u0000-\u00ff]/;
/** Up to this many characters a string is checked by a loop (cheaper than a regex call for a short string). */
const SHORT_STRING = 32;

function stringBytes(text: string): number {
  // One byte per character when every code unit fits Latin-1, else two (V8's one- and two-byte strings).
  const length = text.length;
  let oneByte = true;
  if (length <= SHORT_STRING) {
    for (let i = 0; i < length; i++) {
      if (text.charCodeAt(i) > 0xff) {
        oneByte = false;
        break;
      }
    }
  } else {
    oneByte = !BEYOND_LATIN1.test(text);
  }
  return STRING_HEADER + roundUp(length * (oneByte ? 1 : 2));
}

/** True for a number V8 keeps unboxed (a Smi: a 32-bit integer, not -0). */
function isSmallInteger(value: number): boolean {
  return (value | 0) === value && (value !== 0 || 1 / value > 0);
}

/**
 * Heap bytes reachable from `roots`, each object counted once (pass the same `seen` set across calls to charge
 * shared objects once). Counts plain objects, arrays, class instances (own enumerable fields), strings, boxed
 * numbers, big integers and typed arrays; property names are not charged (V8 shares them between objects).
 * Iterative, so a deep value cannot overflow the stack.
 */
export function retainedBytes(roots: readonly unknown[], seen: Set<object> = new Set()): number {
  return walkRetained(roots, seen);
}

/**
 * {@link retainedBytes} for a tree: a value in which no object is reachable twice (what `JSON.parse` returns), so
 * no set of visited objects is kept. A shared object would be counted once per path to it; a cycle would never end,
 * so pass only freshly parsed JSON or values built from it.
 */
export function retainedTreeBytes(roots: readonly unknown[]): number {
  return walkRetained(roots, null);
}

/**
 * {@link retainedTreeBytes} of the tree `JSON.parse` made of a text, from the scan's tally of that text (its strings
 * one-byte): the same figure without the walk.
 */
export function tallyBytes(tally: JsonTreeTally): number {
  return (
    tally.objects * OBJECT_HEADER +
    tally.arrays * ARRAY_HEADER +
    tally.slots * SLOT +
    tally.boxedNumbers * HEAP_NUMBER +
    tally.strings * STRING_HEADER +
    tally.stringWords * SLOT
  );
}

/**
 * {@link retainedBytes} of a copy of `value` without the fields named in `omitted` (as `{a, b, ...rest}` would
 * leave in `rest`), made without the copy: a caller sizes an object's other fields apart.
 */
export function retainedBytesWithout(value: Record<string, unknown>, omitted: readonly string[]): number {
  let total = OBJECT_HEADER;
  const stack: unknown[] = [];
  for (const key of Object.keys(value)) {
    if (omitted.includes(key)) continue;
    total += fieldBytes(value[key], stack);
  }
  return stack.length === 0 ? total : total + walkRetained(stack, new Set());
}

/**
 * The bytes one object field adds in place (its slot, a boxed number, a string's characters); an object or a bigint
 * it holds goes onto `stack` to be walked.
 */
function fieldBytes(field: unknown, stack: unknown[]): number {
  if (typeof field === "number") return isSmallInteger(field) ? SLOT : SLOT + HEAP_NUMBER;
  if (typeof field === "string") return SLOT + stringBytes(field);
  if (typeof field === "object" || typeof field === "bigint") stack.push(field);
  return SLOT;
}

/** True when `Object.prototype` has no enumerable property (nothing added one), so for-in over a plain object lists only its own names. */
function objectPrototypeIsClean(): boolean {
  for (const name in EMPTY) {
    void name;
    return false;
  }
  return true;
}
const EMPTY = {};

function walkRetained(roots: readonly unknown[], seen: Set<object> | null): number {
  const plainKeysByForIn = objectPrototypeIsClean();
  let total = 0;
  const stack: unknown[] = roots.slice();
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "string") {
      total += stringBytes(value);
      continue;
    }
    if (typeof value === "bigint") {
      total += bigintBytes(value);
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (seen !== null) {
      // One lookup instead of has() then add(): the set grows only for an object not seen before.
      const before = seen.size;
      if (seen.add(value).size === before) continue;
    }
    if (ArrayBuffer.isView(value)) {
      total += TYPED_ARRAY_HEADER + value.byteLength;
      continue;
    }
    if (Array.isArray(value)) {
      total += arrayBytes(value as unknown[], stack);
      continue;
    }
    const record = value as Record<string, unknown>;
    if (plainKeysByForIn && Object.getPrototypeOf(record) === Object.prototype) {
      // for-in yields exactly Object.keys' names here (no enumerable inherited name) without allocating their list.
      for (const key in record) {
        total += fieldBytes(record[key], stack);
      }
    } else {
      for (const key of Object.keys(record)) {
        total += fieldBytes(record[key], stack);
      }
    }
    total += OBJECT_HEADER;
  }
  return total;
}

/** An array's own bytes and its strings'; its objects and big integers go on `stack` to be walked. */
function arrayBytes(items: readonly unknown[], stack: unknown[]): number {
  const length = items.length;
  let total = ARRAY_HEADER + SLOT * length;
  // An array of numbers only is a packed double (or small-integer) array: its numbers sit in the slots, so its
  // size is known once every item is seen to be a number (token ids, log-prob pairs, byte lists).
  let i = 0;
  while (i < length && typeof items[i] === "number") i += 1;
  if (i === length) return total;
  // A mixed array: each number that is not a small integer is boxed.
  for (let j = 0; j < i; j += 1) if (!isSmallInteger(items[j] as number)) total += HEAP_NUMBER;
  for (; i < length; i += 1) {
    const item = items[i];
    if (typeof item === "number") {
      if (!isSmallInteger(item)) total += HEAP_NUMBER;
    } else if (typeof item === "string") total += stringBytes(item);
    else if (typeof item === "object" || typeof item === "bigint") stack.push(item);
  }
  return total;
}

function bigintBytes(value: bigint): number {
  return STRING_HEADER + roundUp(Math.ceil(value.toString(16).length / 2));
}
