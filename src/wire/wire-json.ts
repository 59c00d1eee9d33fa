// Exact JSON for the samples metadata, spelled as miles' codec writes it (json.dumps, compact, non-ASCII kept).
// JSON.stringify silently drops undefined, turns NaN into null and -0 into 0; the wire must not change values.
import { PY_KEY_ORDER, PyBigInt, PyFloat, pyObjectKeys } from "./py-json-values";
import { isNativeSpelledNumber, isNativeSpelledNumberArray, pythonFloatRepr } from "./py-json";
import { IdListTexts, INT_ARRAY_MIN_LENGTH, isSafeIntegerArray } from "./int-array-json";

/** Objects nested deeper than this are refused (guards the recursive writer's stack). */
export const MAX_WIRE_JSON_DEPTH = 512;

const LONE_SURROGATE = /\p{Cs}/u;
const IS_WELL_FORMED = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

/**
 * True when `text` holds a UTF-16 surrogate without its pair (what `/\p{Cs}/u` finds): `!isWellFormed()`, several
 * times faster than the regex on a long response text, where the runtime has it.
 */
export function hasLoneSurrogate(text: string): boolean {
  return IS_WELL_FORMED === undefined ? LONE_SURROGATE.test(text) : !IS_WELL_FORMED.call(text);
}

/**
 * Serializes `value` as Python's `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` writes the value
 * Python holds for it: integral numbers as ints, other numbers as repr floats (`-0.0`, `1e-07`, NaN, Infinity),
 * {@link PyFloat} as a float (`1.0`), {@link PyBigInt} exactly, objects in their remembered key order.
 * Refuses, through `fail(path, problem)`, anything JSON cannot carry exactly: undefined, functions,
 * symbols, bigints, strings with lone surrogates (UTF-8 would replace them), non-plain objects (Map, Date, typed arrays, class instances),
 * cycles and nesting beyond {@link MAX_WIRE_JSON_DEPTH}. `fail` must throw. Long id lists are written through
 * `idLists` (one per payload shares the text of a list written twice).
 */
export function stringifyExactJson(
  value: unknown,
  path: string,
  fail: (path: string, problem: string) => never,
  idLists: IdListTexts = new IdListTexts(),
): string {
  // Data JSON.stringify spells exactly as the writer below does takes it (long id lists by hand, same text);
  // anything else, and every refusal, the writer.
  const marks = new Map<object, boolean>();
  const native = nativeExactKind(value, 0, marks);
  if (native === NATIVE) return JSON.stringify(value);
  if (native === NATIVE_WITH_ID_LISTS) return writeNativeWithIdLists(value, marks, idLists);
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
        if (hasLoneSurrogate(node)) return fail(here(), "a string holding a lone UTF-16 surrogate has no UTF-8 form");
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
      // token ids, log-probs: the same text the element-wise writer would produce
      text = node.length >= INT_ARRAY_MIN_LENGTH && isSafeIntegerArray(node) ? idLists.text(node as number[]) : JSON.stringify(node);
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
        if (hasLoneSurrogate(key)) return fail(here(), "a key holding a lone UTF-16 surrogate has no UTF-8 form");
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

/** {@link nativeExactKind}: the writer must take the value. */
const NOT_NATIVE = 0;
/** {@link nativeExactKind}: JSON.stringify writes the value's exact text. */
const NATIVE = 1;
/** {@link nativeExactKind}: as NATIVE, and the value is or holds a long safe-integer list (see the marks). */
const NATIVE_WITH_ID_LISTS = 2;
type NativeKind = typeof NOT_NATIVE | typeof NATIVE | typeof NATIVE_WITH_ID_LISTS;

/**
 * Whether `JSON.stringify(value)` is the text {@link stringifyExactJson}'s writer produces and the writer would refuse
 * nothing: strings and keys without lone surrogates, booleans, null, safe ints other than -0, finite non-integral
 * numbers with 1e-4 <= |x| < 1e16 (JS and Python print the same shortest digits there), hole-free arrays and plain
 * objects without a remembered key order or an undefined value, nested less than {@link MAX_WIRE_JSON_DEPTH} deep
 * (so a cycle is left to the writer, which names it). Arrays of at least {@link INT_ARRAY_MIN_LENGTH} safe integers
 * are marked `true` in `idLists`, and the containers above them `false` (the kind is then NATIVE_WITH_ID_LISTS).
 */
function nativeExactKind(node: unknown, depth: number, idLists: Map<object, boolean>): NativeKind {
  switch (typeof node) {
    case "string":
      return hasLoneSurrogate(node) ? NOT_NATIVE : NATIVE;
    case "boolean":
      return NATIVE;
    case "number":
      return isNativeSpelledNumber(node) ? NATIVE : NOT_NATIVE;
    case "object":
      break;
    default:
      return NOT_NATIVE;
  }
  if (node === null) return NATIVE;
  if (depth >= MAX_WIRE_JSON_DEPTH - 1 || node instanceof PyFloat || node instanceof PyBigInt) return NOT_NATIVE;
  let kind: NativeKind = NATIVE;
  if (Array.isArray(node)) {
    if ((node as { toJSON?: unknown }).toJSON !== undefined) return NOT_NATIVE;
    if (node.length >= INT_ARRAY_MIN_LENGTH && isSafeIntegerArray(node)) {
      idLists.set(node, true);
      return NATIVE_WITH_ID_LISTS;
    }
    // a number list (log-probs, short id lists) in one loop; a hole reads undefined and fails it
    if (typeof node[0] === "number" && isNativeSpelledNumberArray(node)) return NATIVE;
    for (let i = 0; i < node.length; i++) {
      const item = i in node ? nativeExactKind(node[i], depth + 1, idLists) : NOT_NATIVE;
      if (item === NOT_NATIVE) return NOT_NATIVE;
      if (item === NATIVE_WITH_ID_LISTS) kind = item;
    }
  } else {
    if (!isPlainObject(node) || (node as { [PY_KEY_ORDER]?: unknown })[PY_KEY_ORDER] !== undefined) return NOT_NATIVE;
    for (const key of Object.keys(node)) {
      if (hasLoneSurrogate(key)) return NOT_NATIVE;
      const item = nativeExactKind((node as Record<string, unknown>)[key], depth + 1, idLists);
      if (item === NOT_NATIVE) return NOT_NATIVE;
      if (item === NATIVE_WITH_ID_LISTS) kind = item;
    }
  }
  if (kind === NATIVE_WITH_ID_LISTS) idLists.set(node, false);
  return kind;
}

/**
 * `JSON.stringify(value)` for a NATIVE_WITH_ID_LISTS value: the marked id lists by the digit writer, the containers
 * holding them key by key in JSON.stringify's order (`Object.keys`), everything else by JSON.stringify.
 */
function writeNativeWithIdLists(node: unknown, marks: ReadonlyMap<object, boolean>, idLists: IdListTexts): string {
  const mark = node !== null && typeof node === "object" ? marks.get(node) : undefined;
  if (mark === undefined) return JSON.stringify(node);
  if (mark) return idLists.text(node as number[]);
  let text: string;
  if (Array.isArray(node)) {
    text = "[";
    for (let i = 0; i < node.length; i++) text += (i === 0 ? "" : ",") + writeNativeWithIdLists(node[i], marks, idLists);
    return `${text}]`;
  }
  text = "{";
  let first = true;
  for (const key of Object.keys(node as object)) {
    text += `${first ? "" : ","}${JSON.stringify(key)}:${writeNativeWithIdLists((node as Record<string, unknown>)[key], marks, idLists)}`;
    first = false;
  }
  return `${text}}`;
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
