// Caches the `[dummySystem, dummyAssistant]` render that TITO subtracts from every appended-suffix render.
// It depends only on the tools, the merged kwargs and the stored assistant's tool calls, which rarely change.
import { heapScaledBound } from "./heap-scaled";
import type { ChatTemplateKwargs, ToolCall, ToolSpec } from "./types";

/** Default bound of {@link TitoPrefixCache}: total characters of its keys and renders (less on a small heap). */
const DEFAULT_PREFIX_CACHE_CHARS = 4_000_000;

/** Default bound of {@link TitoPrefixCache}: number of cached renders. */
const DEFAULT_PREFIX_CACHE_ENTRIES = 512;

const MAX_KEY_DEPTH = 64;

/** A plain object of this realm or another one (a vm context's `Object.prototype` is not this realm's). */
function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto === Object.prototype || proto === null) return true;
  return (
    Object.getPrototypeOf(proto) === null &&
    Object.prototype.hasOwnProperty.call(proto, "isPrototypeOf") &&
    Object.prototype.toString.call(value) === "[object Object]"
  );
}

function writeKey(value: unknown, depth: number, out: string[]): boolean {
  switch (typeof value) {
    case "string":
      out.push(JSON.stringify(value));
      return true;
    case "number":
      out.push(Object.is(value, -0) ? "-0" : String(value)); // NaN and Infinity stay distinct from strings (those are quoted)
      return true;
    case "boolean":
      out.push(value ? "true" : "false");
      return true;
    case "undefined":
      out.push("undefined");
      return true;
    case "object":
      break;
    default:
      return false;
  }
  if (value === null) {
    out.push("null");
    return true;
  }
  if (depth >= MAX_KEY_DEPTH) return false;
  if (Array.isArray(value)) {
    out.push("[");
    for (let i = 0; i < value.length; i += 1) {
      if (!(i in value)) return false;
      if (i > 0) out.push(",");
      if (!writeKey(value[i], depth + 1, out)) return false;
    }
    out.push("]");
    return true;
  }
  if (!isPlainObject(value)) return false;
  out.push("{");
  let first = true;
  for (const key of Object.keys(value)) {
    if (!first) out.push(",");
    first = false;
    out.push(JSON.stringify(key), ":");
    if (!writeKey((value as Record<string, unknown>)[key], depth + 1, out)) return false;
  }
  out.push("}");
  return true;
}

/**
 * A string that two values share only when they are the same plain data: strings, finite and non-finite numbers
 * (`-0` apart from `0`), booleans, null, undefined, arrays without holes and plain objects (key order counts, so
 * equal data in another order is merely a different key). Undefined for anything else (functions, class
 * instances, sparse arrays, nesting deeper than 64): such input is not cached.
 */
export function exactDataKey(value: unknown): string | undefined {
  return exactDataKeyAt(value, 0);
}

/**
 * The text {@link exactDataKey} writes for `value` where it sits `depth` containers deep inside a larger value (the
 * nesting bound counts from the outermost one). Writing a container's items at `depth + 1`, joined by `,` inside `[]`,
 * gives its key: a caller holding the keys of parts that never change can put a whole key together without
 * serializing those parts again.
 */
export function exactDataKeyAt(value: unknown, depth: number): string | undefined {
  // Data JSON.stringify writes exactly as writeKey would (no -0, NaN, infinities or undefined) takes the native writer.
  if (isNativeKeyData(value, depth)) return JSON.stringify(value);
  const out: string[] = [];
  return writeKey(value, depth, out) ? out.join("") : undefined;
}

/**
 * True when `JSON.stringify(value)` is the very text {@link writeKey} writes: strings, finite numbers other than
 * -0, booleans, null, hole-free arrays and plain objects, no undefined anywhere, within the depth bound.
 */
function isNativeKeyData(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value) && !Object.is(value, -0);
    case "object":
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth >= MAX_KEY_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      if (!(i in value) || !isNativeKeyData(value[i], depth + 1)) return false;
    }
    return true;
  }
  if (!isPlainObject(value)) return false;
  for (const key of Object.keys(value)) {
    if (!isNativeKeyData((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/**
 * Bounded map from (tools, merged kwargs, stored tool calls) to the rendered `[dummySystem, dummyAssistant]`
 * prefix. Least recently used entries go first once the entry or character bound is exceeded.
 */
export class TitoPrefixCache {
  private readonly renders = new Map<string, string>();
  private chars = 0;

  /**
   * @param maxEntries bound on the number of cached renders
   * @param maxChars bound on the total characters of keys plus renders
   */
  constructor(
    /** Bound on the number of cached renders. */
    readonly maxEntries: number = DEFAULT_PREFIX_CACHE_ENTRIES,
    /** Bound on the total characters of keys plus renders. */
    readonly maxChars: number = heapScaledBound(DEFAULT_PREFIX_CACHE_CHARS, 2), // two-byte strings at worst
  ) {}

  /** Number of cached renders. */
  get size(): number {
    return this.renders.size;
  }

  /** Total characters of the cached keys and renders. */
  get cachedChars(): number {
    return this.chars;
  }

  /**
   * The prefix render for these inputs: the cached one, or `render()`'s result, cached when the inputs have an
   * {@link exactDataKey}. Errors from `render` propagate and nothing is cached.
   */
  get(tools: readonly ToolSpec[] | null, kwargs: Readonly<ChatTemplateKwargs>, toolCalls: readonly ToolCall[], render: () => string): string {
    const key = exactDataKey([tools, kwargs, toolCalls]);
    if (key === undefined) return render();
    const cached = this.renders.get(key);
    if (cached !== undefined) {
      this.renders.delete(key);
      this.renders.set(key, cached);
      return cached;
    }
    const text = render();
    const size = key.length + text.length;
    if (size > this.maxChars || this.maxEntries < 1) return text;
    this.renders.set(key, text);
    this.chars += size;
    for (const [oldest, oldText] of this.renders) {
      if (this.renders.size <= this.maxEntries && this.chars <= this.maxChars) break;
      this.renders.delete(oldest);
      this.chars -= oldest.length + oldText.length;
    }
    return text;
  }
}
