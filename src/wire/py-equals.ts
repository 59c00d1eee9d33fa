// Python's `==` over JSON values in their JS form (bool is an int, 1 == 1.0, big ints exact, key order ignored).
// Shared by the servers' message matching and sample merging and by the pinned chat-template kwargs check.
import { PyBigInt, PyFloat } from "./py-json-values";

/** The numeric value Python's `==` sees for a bool, int or float in JS form; undefined for anything else. */
function numericValue(value: unknown): number | bigint | undefined {
  switch (typeof value) {
    case "number":
      return value;
    case "boolean":
      return value ? 1 : 0;
    case "object":
      if (value instanceof PyFloat) return value.value;
      if (value instanceof PyBigInt) return value.value;
      return undefined;
    default:
      return undefined;
  }
}

function numbersEqual(a: number | bigint, b: number | bigint): boolean {
  if (typeof a === "number" && typeof b === "number") return a === b || (Number.isNaN(a) && Number.isNaN(b));
  if (typeof a === "bigint" && typeof b === "bigint") return a === b;
  const [big, num] = typeof a === "bigint" ? [a, b as number] : [b as bigint, a];
  return Number.isInteger(num) && BigInt(num) === big;
}

/**
 * Structural equality with Python's `==` on the values Python holds: object key order does not matter, `1 == 1.0`
 * and `True == 1` (bool is an int in Python), big integers compare exactly; other types must agree.
 */
export function pyEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const an = numericValue(a);
  if (an !== undefined) {
    const bn = numericValue(b);
    return bn !== undefined && numbersEqual(an, bn);
  }
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((item, i) => pyEquals(item, bb[i]));
  }
  if (numericValue(b) !== undefined) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const aKeys = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bKeys = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((key) => Object.prototype.hasOwnProperty.call(bo, key) && pyEquals(ao[key], bo[key]));
}
