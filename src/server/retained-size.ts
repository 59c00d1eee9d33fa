// Estimates the heap bytes a stored value keeps alive, from V8's object layout on 64-bit Node (no pointer compression).
// The session budget charges sessions with it; a test checks the estimate against measured heap growth.

/** Bytes of one V8 heap slot (a pointer or an unboxed double). */
const SLOT = 8;
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

function stringBytes(text: string): number {
  // One byte per character when every code unit fits Latin-1, else two (V8's one- and two-byte strings).
  // eslint-disable-next-line no-control-regex -- the Latin-1 range is exactly what is being tested
  const oneByte = !/[^\u0000-\u00ff]/.test(text);
  return STRING_HEADER + roundUp(text.length * (oneByte ? 1 : 2));
}

function isSmallInteger(value: number): boolean {
  return Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31 && !Object.is(value, -0);
}

/**
 * Heap bytes reachable from `roots`, each object counted once (pass the same `seen` set across calls to charge
 * shared objects once). Counts plain objects, arrays, class instances (own enumerable fields), strings, boxed
 * numbers, big integers and typed arrays; property names are not charged (V8 shares them between objects).
 * Iterative, so a deep value cannot overflow the stack.
 */
export function retainedBytes(roots: readonly unknown[], seen: Set<object> = new Set()): number {
  let total = 0;
  const stack: unknown[] = [...roots];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "string") {
      total += stringBytes(value);
      continue;
    }
    if (typeof value === "bigint") {
      total += STRING_HEADER + roundUp(Math.ceil(value.toString(16).length / 2));
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (seen.has(value)) continue;
    seen.add(value);
    if (ArrayBuffer.isView(value)) {
      total += TYPED_ARRAY_HEADER + value.byteLength;
      continue;
    }
    if (Array.isArray(value)) {
      const items = value as unknown[];
      total += ARRAY_HEADER + SLOT * items.length;
      // An array of numbers only is a packed double (or small-integer) array: its numbers sit in the slots.
      const numeric = items.every((item) => typeof item === "number");
      for (const item of items) {
        if (typeof item === "number") {
          if (!numeric && !isSmallInteger(item)) total += HEAP_NUMBER;
        } else stack.push(item);
      }
      continue;
    }
    const keys = Object.keys(value);
    total += OBJECT_HEADER + SLOT * keys.length;
    for (const key of keys) {
      const field = (value as Record<string, unknown>)[key];
      if (typeof field === "number") {
        if (!isSmallInteger(field)) total += HEAP_NUMBER;
      } else stack.push(field);
    }
  }
  return total;
}
