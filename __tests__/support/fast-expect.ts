// Equality assertions for hot property-test loops: every `expect(x)` builds closures for each registered matcher and
// captures a stack even when it passes. These settle a passing comparison cheaply and hand every other one to Jest.
import { expect } from "@jest/globals";
import { isDeepStrictEqual } from "node:util";

/** The `[object Tag]` Jest's `equals` reads as a value's class name. */
const classNameOf = (value: object): string => Object.prototype.toString.call(value);
const hasOwn = (value: object, key: PropertyKey): boolean => Object.prototype.hasOwnProperty.call(value, key);
const isEnumerable = (value: object, key: PropertyKey): boolean => Object.prototype.propertyIsEnumerable.call(value, key);
/** The internal name of a typed array (`Uint8Array`, ...), read past any own or inherited `Symbol.toStringTag`. */
const typedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype) as object;
const typedArrayName = (view: ArrayBufferView): unknown => Reflect.get(typedArrayPrototype, Symbol.toStringTag, view);
/** Direct instances of these only: a subclass could change the getters toStrictEqual reads (`buffer`, `byteLength`). */
const TYPED_ARRAY_PROTOTYPES = new Set<object>([
  Buffer.prototype,
  ...[
    Int8Array,
    Uint8Array,
    Uint8ClampedArray,
    Int16Array,
    Uint16Array,
    Int32Array,
    Uint32Array,
    Float32Array,
    Float64Array,
    BigInt64Array,
    BigUint64Array,
  ].map((kind) => kind.prototype as object),
]);

type Kind = "array" | "typed array" | "map" | "set" | "object";

/**
 * The kinds of object whose comparison by Jest's `equals` follows from Node's (or `undefined`): arrays, typed arrays
 * (a Buffer too; DataViews are left to Jest), Maps and Sets of this realm without own properties, and ordinary
 * objects (`[object Object]`, plain or class instances) that are not iterable and not Errors. Any of them owning a
 * `constructor` or carrying an `asymmetricMatch` or `isEqualNode` method is refused too. Everything else (Date,
 * RegExp, Error, URL, boxed primitives, Headers, URLSearchParams, generators, promises, ...) is refused. The checks
 * read each value itself, non-enumerable properties included, which Node's comparison does not see.
 */
function kindOf(object: object): Kind | undefined {
  const record = object as Record<PropertyKey, unknown>;
  // Jest calls these when present on either side
  if (typeof record.asymmetricMatch === "function" || typeof record.isEqualNode === "function") return undefined;
  // toStrictEqual's type check compares `a.constructor === b.constructor`: an own one (say `{}` on both) fails it
  if (hasOwn(object, "constructor")) return undefined;
  const tag = classNameOf(object);
  if (Array.isArray(object)) return tag === "[object Array]" ? "array" : undefined;
  if (ArrayBuffer.isView(object)) return typedArrayKind(object, tag);
  const prototype = Object.getPrototypeOf(object) as unknown;
  // Jest reads `size`, `has`, `get` and the iterator off the value itself, Node its internal entries
  if (prototype === Map.prototype || prototype === Set.prototype) {
    return Reflect.ownKeys(object).length > 0 ? undefined : prototype === Map.prototype ? "map" : "set";
  }
  // Jest iterates any other iterable (whose contents Node does not read) and compares Errors by message alone
  if (tag !== "[object Object]" || Symbol.iterator in object || object instanceof Error) return undefined;
  return "object";
}

/** A direct instance of a typed array (or Buffer): its tag its own name, none of the views toStrictEqual reads shadowed. */
function typedArrayKind(view: ArrayBufferView, tag: string): Kind | undefined {
  if (!TYPED_ARRAY_PROTOTYPES.has(Object.getPrototypeOf(view) as object)) return undefined;
  const name = typedArrayName(view);
  if (typeof name !== "string" || tag !== `[object ${name}]`) return undefined;
  if (hasOwn(view, "buffer") || hasOwn(view, "byteOffset") || hasOwn(view, "byteLength")) return undefined;
  return "typed array";
}

function isIndexBelow(key: string, length: number): boolean {
  const n = Number(key);
  return Number.isInteger(n) && n >= 0 && n < length && String(n) === key;
}

/** An array's own keys past its indexes (Object.keys lists indexes first), in their order. */
function extraArrayKeys(array: object, length: number): string[] {
  const keys = Object.keys(array);
  let first = keys.length;
  while (first > 0 && !isIndexBelow(keys[first - 1], length)) first -= 1;
  return keys.slice(first);
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

/** Own enumerable symbol keys: both comparisons read them beside the string keys. */
function enumerableSymbols(object: object): symbol[] {
  return Object.getOwnPropertySymbols(object).filter((symbol) => isEnumerable(object, symbol));
}

/**
 * Whether every value inside `value` (through own enumerable keys, Map entries and Set members) is of a kind
 * {@link kindOf} accepts, with no cycle, no function and no typed array carrying keys past its indexes.
 */
function seenAlikeByJest(value: unknown, ancestors: object[]): boolean {
  if (typeof value !== "object") return typeof value !== "function";
  if (value === null) return true;
  if (ancestors.includes(value)) return false;
  const kind = kindOf(value);
  if (kind === undefined) return false;
  const record = value as Record<PropertyKey, unknown>;
  ancestors.push(value);
  try {
    if (kind === "map") {
      for (const [key, entry] of value as Map<unknown, unknown>) if (!seenAlikeByJest(key, ancestors) || !seenAlikeByJest(entry, ancestors)) return false;
      return true;
    }
    if (kind === "set") {
      for (const member of value as Set<unknown>) if (!seenAlikeByJest(member, ancestors)) return false;
      return true;
    }
    if (kind === "typed array") {
      if (Object.keys(value).length !== (value as Uint8Array).length) return false;
    } else if (kind === "array") {
      const array = value as unknown[];
      for (let i = 0; i < array.length; i++) if (!seenAlikeByJest(array[i], ancestors)) return false;
      for (const key of extraArrayKeys(array, array.length)) if (!seenAlikeByJest(record[key], ancestors)) return false;
    } else {
      for (const key of Object.keys(value)) if (!seenAlikeByJest(record[key], ancestors)) return false;
    }
    for (const symbol of enumerableSymbols(value)) if (!seenAlikeByJest(record[symbol], ancestors)) return false;
    return true;
  } finally {
    ancestors.pop();
  }
}

/**
 * Whether Jest compares `a` and `b`, which Node's strict deep equality already holds equal, the same way: walked side
 * by side, so a value both hold by the same reference is settled at once (Jest's `Object.is` step comes before it
 * looks inside, except that it iterates an iterable first: a generator is not equal to itself there).
 */
function pairAlike(a: unknown, b: unknown, ancestors: object[]): boolean {
  if (Object.is(a, b)) {
    if (typeof a !== "object" || a === null || !(Symbol.iterator in a) || Array.isArray(a) || ArrayBuffer.isView(a)) return true;
    return seenAlikeByJest(a, ancestors);
  }
  // Node equates two distinct values only when both are objects (a primitive equals only itself by SameValue)
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return false;
  // Node equates two cycles of different lengths that unfold alike; Jest's stack check does not
  if (ancestors.includes(a) || ancestors.includes(b)) return false;
  const kind = kindOf(a);
  if (kind === undefined || kindOf(b) !== kind) return false;
  if (kind === "map" || kind === "set") return seenAlikeByJest(a, ancestors) && seenAlikeByJest(b, ancestors);
  const left = a as Record<PropertyKey, unknown>;
  const right = b as Record<PropertyKey, unknown>;
  ancestors.push(a, b);
  try {
    if (kind === "typed array") {
      // Node compared the bytes and the same own keys on both sides: refuse keys past the indexes
      if (Object.keys(a).length !== (a as Uint8Array).length) return false;
    } else if (kind === "array") {
      const length = (a as unknown[]).length;
      for (let i = 0; i < length; i++) if (!pairAlike(left[i], right[i], ancestors)) return false;
      // toStrictEqual compares the arrays' Object.keys lists in order; Node compares the key sets
      const extra = extraArrayKeys(a, length);
      if (extra.length > 0 && !sameList(extra, extraArrayKeys(b, length))) return false;
      for (const key of extra) if (!pairAlike(left[key], right[key], ancestors)) return false;
    } else {
      for (const key of Object.keys(a)) if (!pairAlike(left[key], right[key], ancestors)) return false;
    }
    for (const symbol of enumerableSymbols(a)) if (!pairAlike(left[symbol], right[symbol], ancestors)) return false;
    return true;
  } finally {
    ancestors.length -= 2;
  }
}

/**
 * Whether `actual` and `expected` are provably equal under Jest's `toEqual` and `toStrictEqual` without running
 * them: Node's `isDeepStrictEqual` holds and, walked side by side, they are made only of kinds Jest compares the same way.
 *
 * Why that suffices: Node's strict deep equality requires the same prototype and `Object.prototype.toString` tag on
 * both sides, the same own enumerable string and symbol keys with strictly deep-equal values, SameValue for
 * primitives (so -0 differs from +0, NaN equals NaN), the same holes in arrays, the same bytes in typed arrays (so the
 * same elements by SameValue), and Maps and Sets whose entries pair up by strict deep equality. Jest's `equals` on
 * such values: one value on both sides passes its `Object.is` step (only an iterable is looked into before it);
 * primitives by `Object.is`; arrays and ordinary objects by their own enumerable keys (toEqual adds keys whose value
 * is undefined on one side only, which cannot occur when the key sets already match); typed arrays by their index keys
 * under toEqual and by their bytes under toStrictEqual; Maps and Sets by finding each entry's equal in the other (by
 * the same argument one level down); toStrictEqual's extra checks (the same constructor, the same length, the same
 * Object.keys list for arrays) follow from the same prototype, no own `constructor` and the same keys in the same
 * order. What Jest does beyond that is ruled out by {@link kindOf}: iterating any other iterable, calling
 * `asymmetricMatch` or `isEqualNode`, its own rules for Dates, RegExps, Errors, URLs and boxed values, and its stack
 * rule for cycles (refused). Getters are read by both and assumed to answer alike. No custom equality tester is
 * registered in this suite (`expect.addEqualityTesters`); one would have to be added here.
 */
export function provablyEqual(actual: unknown, expected: unknown): boolean {
  return isDeepStrictEqual(actual, expected) && pairAlike(actual, expected, []);
}

/** What a passing matcher records: the assertion counted (for `expect.assertions(n)`) and passed. */
function countPassingAssertion(): void {
  const state = expect.getState();
  state.assertionCalls++;
  state.numPassingAsserts++;
}

/**
 * Passes (counted as an assertion) when `settled`, else lets Jest's matcher decide and rethrows its failure with the
 * stack starting at the caller of `helper` (the line a failure report shows).
 */
function settle(helper: (...args: never[]) => void, settled: boolean, decide: () => void): void {
  if (settled) return countPassingAssertion();
  try {
    decide();
  } catch (error) {
    if (error instanceof Error) Error.captureStackTrace(error, helper);
    throw error;
  }
}

/**
 * `expect(actual).toEqual(expected)`, settled without Jest when {@link provablyEqual} holds (then toEqual would pass:
 * no failure is hidden) and otherwise decided by Jest itself, which may still pass (undefined properties, holes,
 * asymmetric matchers, other prototypes) or throws its own error with its own message.
 */
export function expectEqual(actual: unknown, expected: unknown): void {
  settle(expectEqual, provablyEqual(actual, expected), () => expect(actual).toEqual(expected));
}

/** `expect(actual).toStrictEqual(expected)`, settled like {@link expectEqual}. */
export function expectStrictEqual(actual: unknown, expected: unknown): void {
  settle(expectStrictEqual, provablyEqual(actual, expected), () => expect(actual).toStrictEqual(expected));
}

/** `expect(actual).toBe(expected)`: passes exactly when `Object.is` holds, so Jest is asked only for the failure. */
export function expectSame(actual: unknown, expected: unknown): void {
  settle(expectSame, Object.is(actual, expected), () => expect(actual).toBe(expected));
}

/** `expect(actual).not.toBe(expected)`: passes exactly when `Object.is` fails. */
export function expectNotSame(actual: unknown, expected: unknown): void {
  settle(expectNotSame, !Object.is(actual, expected), () => expect(actual).not.toBe(expected));
}
