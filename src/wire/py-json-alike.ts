// Whether two parsed JSON values are spelled alike by `dumpsPy` under any settings: a cheaper question than spelling
// them, asked before a text written for one value is copied for another (a chat history re-sent every turn).
import { PY_KEY_ORDER, PyBigInt, PyFloat, pyObjectKeys } from "./py-json-values";

/**
 * True only when `dumpsPy(a, options)` and `dumpsPy(b, options)` are the same text for every `options` (or both
 * throw alike), for plain data as the JSON readers build it (no getters): the same shape, the same keys in the order
 * the writer takes them, equal strings, numbers equal as `Object.is` sees them (so `-0` is not `0`), {@link PyFloat}s
 * and {@link PyBigInt}s of equal value. Any other class answers false (never a wrong true).
 */
export function spelledAlike(a: unknown, b: unknown): boolean {
  if (a === b) return a !== 0 || Object.is(a, b); // 0 === -0, but -0 is spelled as the float -0.0
  const kind = typeof a;
  if (kind !== typeof b) return false;
  if (kind === "number") return Object.is(a, b);
  if (kind !== "object" || a === null || b === null) return false; // strings, booleans, bigints: `===` said no
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!spelledAlike(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const prototype: unknown = Object.getPrototypeOf(a);
  if (prototype !== Object.getPrototypeOf(b)) return false;
  if (prototype === PyFloat.prototype) return Object.is((a as PyFloat).value, (b as PyFloat).value);
  if (prototype === PyBigInt.prototype) return (a as PyBigInt).value === (b as PyBigInt).value;
  if (prototype !== Object.prototype && prototype !== null) return false;
  const ra = a as Record<string | typeof PY_KEY_ORDER, unknown>;
  const rb = b as Record<string | typeof PY_KEY_ORDER, unknown>;
  const ka = ra[PY_KEY_ORDER] === undefined ? Object.keys(ra) : pyObjectKeys(ra);
  const kb = rb[PY_KEY_ORDER] === undefined ? Object.keys(rb) : pyObjectKeys(rb);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const key = ka[i];
    if (key !== kb[i] || !spelledAlike(ra[key], rb[key])) return false;
  }
  return true;
}
