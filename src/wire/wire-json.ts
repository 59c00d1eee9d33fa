// Exact JSON for the samples metadata, spelled as miles' codec writes it (json.dumps, compact, non-ASCII kept).
// JSON.stringify silently drops undefined, turns NaN into null and -0 into 0; the wire must not change values.
import { PY_KEY_ORDER, PyBigInt, PyFloat, pyObjectKeys } from "./py-json-values";
import { isNativeSpelledNumber, isNativeSpelledNumberArray, pythonFloatRepr } from "./py-json";

/** Objects nested deeper than this are refused (guards the recursive writer's stack). */
export const MAX_WIRE_JSON_DEPTH = 512;

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Serializes `value` as Python's `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` writes the value
 * Python holds for it: integral numbers as ints, other numbers as repr floats (`-0.0`, `1e-07`, NaN, Infinity),
 * {@link PyFloat} as a float (`1.0`), {@link PyBigInt} exactly, objects in their remembered key order.
 * Refuses, through `fail(path, problem)`, anything JSON cannot carry exactly: undefined, functions,
 * symbols, bigints, strings with lone surrogates (UTF-8 would replace them), non-plain objects (Map, Date, typed arrays, class instances),
 * cycles and nesting beyond {@link MAX_WIRE_JSON_DEPTH}. `fail` must throw.
 */
export function stringifyExactJson(value: unknown, path: string, fail: (path: string, problem: string) => never): string {
  // Data JSON.stringify spells exactly as the writer below does takes it; anything else (and every refusal) the writer.
  if (isNativeExactValue(value, 0)) return JSON.stringify(value);
  const ancestors = new Set<object>();
  /** Keys and indices from `value` down to the node being written; turned into a path string only on failure. */
  const trail: (string | number)[] = [];
  const here = (): string => {
    let at = path;
    for (const step of trail) at += typeof step === "number" ? `[${step}]` : `.${step}`;
    return at;
  };
  const write = (node: unknown): string => {
    switch (typeof node) {
      case "string":
        if (LONE_SURROGATE.test(node)) return fail(here(), "a string holding a lone UTF-16 surrogate has no UTF-8 form");
        return JSON.stringify(node);
      case "boolean":
        return node ? "true" : "false";
      case "number":
        if (Number.isInteger(node) && !Object.is(node, -0)) return Number.isSafeInteger(node) ? String(node) : BigInt(node).toString();
        return pythonFloatRepr(node);
      case "object":
        break;
      default:
        return fail(here(), `a ${typeof node} is not representable in JSON`);
    }
    if (node === null) return "null";
    if (node instanceof PyFloat) return pythonFloatRepr(node.value);
    if (node instanceof PyBigInt) return node.value.toString();
    if (trail.length >= MAX_WIRE_JSON_DEPTH) return fail(here(), `nested deeper than ${MAX_WIRE_JSON_DEPTH} levels`);
    if (ancestors.has(node)) return fail(here(), "circular reference");
    ancestors.add(node);
    let text: string;
    if (Array.isArray(node) && (node as { toJSON?: unknown }).toJSON === undefined && isNativeSpelledNumberArray(node)) {
      text = JSON.stringify(node); // token ids, log-probs: the same text the element-wise writer would produce
    } else if (Array.isArray(node)) {
      text = "[";
      for (let i = 0; i < node.length; i++) {
        trail.push(i);
        text += i === 0 ? write(node[i]) : `,${write(node[i])}`;
        trail.pop();
      }
      text += "]";
    } else {
      if (!isPlainObject(node)) {
        return fail(here(), `${Object.prototype.toString.call(node)} is not a plain JSON object`);
      }
      text = "{";
      let first = true;
      const keys = (node as { [PY_KEY_ORDER]?: unknown })[PY_KEY_ORDER] === undefined ? Object.keys(node) : pyObjectKeys(node);
      for (const key of keys) {
        if (LONE_SURROGATE.test(key)) return fail(here(), "a key holding a lone UTF-16 surrogate has no UTF-8 form");
        trail.push(key);
        text += `${first ? "" : ","}${JSON.stringify(key)}:${write((node as Record<string, unknown>)[key])}`;
        trail.pop();
        first = false;
      }
      text += "}";
    }
    ancestors.delete(node);
    return text;
  };
  return write(value);
}

/**
 * True for a plain object: prototype `null` or the `Object.prototype` of this realm or of another one. Objects
 * parsed by Node's own `fetch`/`Response.json()` inside Jest's vm sandbox carry the outer realm's prototype and
 * are still plain JSON objects.
 */
export function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto === null || proto === Object.prototype) return true;
  if (Object.getPrototypeOf(proto) !== null || Object.prototype.toString.call(value) !== "[object Object]") return false;
  const ctor = (proto as { constructor?: unknown }).constructor;
  return typeof ctor === "function" && ctor.name === "Object";
}

/**
 * True when `JSON.stringify(value)` is the text {@link stringifyExactJson}'s writer produces and the writer would refuse
 * nothing: strings and keys without lone surrogates, booleans, null, safe ints other than -0, finite non-integral
 * numbers with 1e-4 <= |x| < 1e16 (JS and Python print the same shortest digits there), hole-free arrays and plain
 * objects without a remembered key order or an undefined value, nested less than {@link MAX_WIRE_JSON_DEPTH} deep
 * (so a cycle is left to the writer, which names it).
 */
function isNativeExactValue(node: unknown, depth: number): boolean {
  switch (typeof node) {
    case "string":
      return !LONE_SURROGATE.test(node);
    case "boolean":
      return true;
    case "number":
      return isNativeSpelledNumber(node);
    case "object":
      break;
    default:
      return false;
  }
  if (node === null) return true;
  if (depth >= MAX_WIRE_JSON_DEPTH - 1 || node instanceof PyFloat || node instanceof PyBigInt) return false;
  if (Array.isArray(node)) {
    if ((node as { toJSON?: unknown }).toJSON !== undefined) return false;
    for (let i = 0; i < node.length; i++) if (!(i in node) || !isNativeExactValue(node[i], depth + 1)) return false;
    return true;
  }
  if (!isPlainObject(node) || (node as { [PY_KEY_ORDER]?: unknown })[PY_KEY_ORDER] !== undefined) return false;
  for (const key of Object.keys(node)) {
    if (LONE_SURROGATE.test(key) || !isNativeExactValue((node as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/** True for a non-null, non-array object that is not a kinded number ({@link PyFloat}, {@link PyBigInt}): what JSON calls an object. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof PyFloat) && !(value instanceof PyBigInt);
}

/**
 * `Object.assign` for parsed JSON: copies own keys of `source` onto `target` as data properties, so a
 * `"__proto__"` key is stored as an ordinary key instead of replacing the target's prototype.
 */
export function assignJsonKeys(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const key of Object.keys(source)) {
    Object.defineProperty(target, key, { value: source[key], writable: true, enumerable: true, configurable: true });
  }
}
