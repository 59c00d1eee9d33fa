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

/**
 * Whether Jest's `equals` sees `value` the way Node's `isDeepStrictEqual` does: it holds only primitives, arrays,
 * typed arrays (a Buffer too) without own non-index keys, plain Maps and Sets without own properties, and ordinary objects
 * (`[object Object]`, plain or class instances) that are not iterable, own no `constructor` and carry no
 * `asymmetricMatch` or `isEqualNode` method, with no cycle. Functions and every other kind of object (Date, RegExp,
 * Error, URL, boxed primitives, Headers, URLSearchParams, promises, ...) make it false. Own enumerable keys (string
 * and symbol) are walked, as both comparisons read exactly those.
 */
function seenAlikeByJest(value: unknown, ancestors: object[]): boolean {
  if (typeof value !== "object") return typeof value !== "function";
  if (value === null) return true;
  // Node equates two cycles of different lengths that unfold alike; Jest's stack check does not
  if (ancestors.includes(value)) return false;
  const object = value as Record<PropertyKey, unknown>;
  // Jest calls these when present; they may be non-enumerable and so invisible to Node
  if (typeof object.asymmetricMatch === "function" || typeof object.isEqualNode === "function") return false;
  // toStrictEqual's type check compares `a.constructor === b.constructor`: an own one (say `{}` on both) fails it
  if (hasOwn(object, "constructor")) return false;
  const tag = classNameOf(object);
  ancestors.push(object);
  try {
    if (Array.isArray(object)) return tag === "[object Array]" && arrayAlike(object, ancestors);
    if (ArrayBuffer.isView(object)) return typedArrayAlike(object, tag, ancestors);
    const prototype = Object.getPrototypeOf(object) as unknown;
    if (prototype === Map.prototype || prototype === Set.prototype)
      return collectionAlike(object as unknown as Map<unknown, unknown> | Set<unknown>, ancestors);
    if (tag !== "[object Object]" || Symbol.iterator in object) return false;
    for (const key of Object.keys(object)) if (!seenAlikeByJest(object[key], ancestors)) return false;
    return symbolsAlike(object, ancestors);
  } finally {
    ancestors.pop();
  }
}

/**
 * A typed array (DataViews are left to Jest): its tag its own name, none of the views toStrictEqual reads shadowed,
 * and no own key beyond its indexes (the only O(length) step: such keys are never set in practice, so refusing them
 * is simpler than walking them).
 */
function typedArrayAlike(view: ArrayBufferView, tag: string, ancestors: object[]): boolean {
  if (!TYPED_ARRAY_PROTOTYPES.has(Object.getPrototypeOf(view) as object)) return false;
  const name = typedArrayName(view);
  if (typeof name !== "string" || tag !== `[object ${name}]`) return false;
  if (hasOwn(view, "buffer") || hasOwn(view, "byteOffset") || hasOwn(view, "byteLength")) return false;
  return Object.keys(view).length === (view as Uint8Array).length && symbolsAlike(view, ancestors);
}

/** An array's elements (a hole reads as undefined), its own non-index keys (listed after the indexes) and symbols. */
function arrayAlike(array: unknown[], ancestors: object[]): boolean {
  for (let i = 0; i < array.length; i++) if (!seenAlikeByJest(array[i], ancestors)) return false;
  const keys = Object.keys(array);
  for (let j = keys.length - 1; j >= 0 && !isIndexBelow(keys[j], array.length); j--) {
    if (!seenAlikeByJest((array as unknown as Record<string, unknown>)[keys[j]], ancestors)) return false;
  }
  return symbolsAlike(array, ancestors);
}

function isIndexBelow(key: string, length: number): boolean {
  const n = Number(key);
  return Number.isInteger(n) && n >= 0 && n < length && String(n) === key;
}

/**
 * A Map or Set of this realm, not subclassed, with no own property at all (Jest reads `size`, `has`, `get` and the
 * iterator off the value itself, Node its internal entries).
 */
function collectionAlike(collection: Map<unknown, unknown> | Set<unknown>, ancestors: object[]): boolean {
  if (Reflect.ownKeys(collection).length > 0) return false;
  if (collection instanceof Map) {
    for (const [key, entry] of collection) {
      if (!seenAlikeByJest(key, ancestors) || !seenAlikeByJest(entry, ancestors)) return false;
    }
    return true;
  }
  for (const member of collection) if (!seenAlikeByJest(member, ancestors)) return false;
  return true;
}

function symbolsAlike(object: object, ancestors: object[]): boolean {
  for (const symbol of Object.getOwnPropertySymbols(object)) {
    if (isEnumerable(object, symbol) && !seenAlikeByJest((object as Record<symbol, unknown>)[symbol], ancestors)) return false;
  }
  return true;
}

/**
 * Whether `actual` and `expected` are provably equal under Jest's `toEqual` and `toStrictEqual` without running
 * them: Node's `isDeepStrictEqual` holds and both values are made only of kinds Jest compares the same way.
 *
 * Why that suffices: Node's strict deep equality requires the same prototype and `Object.prototype.toString` tag on
 * both sides, the same own enumerable string and symbol keys with strictly deep-equal values, SameValue for
 * primitives (so -0 differs from +0, NaN equals NaN), the same holes in arrays, the same bytes in typed arrays (so the
 * same elements by SameValue), and Maps and Sets whose entries pair up by strict deep equality. Jest's `equals` on
 * such values: primitives by `Object.is`; arrays and ordinary objects by their own enumerable keys (toEqual adds
 * keys whose value is undefined on one side only, which cannot occur when the key sets already match); typed arrays
 * by their index keys under toEqual and by their bytes under toStrictEqual; Maps and Sets by finding each entry's
 * equal in the other (by the same argument one level down); toStrictEqual's extra checks (the same constructor, the
 * same length and holes) follow from the same prototype, no own `constructor` and the same keys. What Jest does
 * beyond that is ruled out by {@link seenAlikeByJest}: iterating any other iterable (whose contents Node does not
 * read), calling `asymmetricMatch` or `isEqualNode`, its own rules for Dates, RegExps, Errors, URLs and boxed
 * values, and its stack rule for cycles. No custom equality tester is registered in this suite
 * (`expect.addEqualityTesters`); one would have to be added here.
 */
export function provablyEqual(actual: unknown, expected: unknown): boolean {
  return isDeepStrictEqual(actual, expected) && seenAlikeByJest(actual, []) && seenAlikeByJest(expected, []);
}

/** What a passing matcher records: the assertion counted (for `expect.assertions(n)`) and passed. */
function countPassingAssertion(): void {
  const state = expect.getState();
  state.assertionCalls++;
  state.numPassingAsserts++;
}

/** Jest's own failure, its stack starting at the caller of `helper` (the line a failure report shows). */
function rethrowFrom(helper: (...args: never[]) => void, error: unknown): never {
  if (error instanceof Error) Error.captureStackTrace(error, helper);
  throw error;
}

/**
 * `expect(actual).toEqual(expected)`, settled without Jest when {@link provablyEqual} holds (then toEqual would pass:
 * no failure is hidden) and otherwise decided by Jest itself, which may still pass (undefined properties, holes,
 * asymmetric matchers, other prototypes) or throws its own error with its own message.
 */
export function expectEqual(actual: unknown, expected: unknown): void {
  if (provablyEqual(actual, expected)) return countPassingAssertion();
  try {
    expect(actual).toEqual(expected);
  } catch (error) {
    rethrowFrom(expectEqual, error);
  }
}

/** `expect(actual).toStrictEqual(expected)`, settled like {@link expectEqual}. */
export function expectStrictEqual(actual: unknown, expected: unknown): void {
  if (provablyEqual(actual, expected)) return countPassingAssertion();
  try {
    expect(actual).toStrictEqual(expected);
  } catch (error) {
    rethrowFrom(expectStrictEqual, error);
  }
}

/** `expect(actual).toBe(expected)`: passes exactly when `Object.is` holds, so Jest is asked only for the failure. */
export function expectSame(actual: unknown, expected: unknown): void {
  if (Object.is(actual, expected)) return countPassingAssertion();
  try {
    expect(actual).toBe(expected);
  } catch (error) {
    rethrowFrom(expectSame, error);
  }
}

/** `expect(actual).not.toBe(expected)`: passes exactly when `Object.is` fails. */
export function expectNotSame(actual: unknown, expected: unknown): void {
  if (!Object.is(actual, expected)) return countPassingAssertion();
  try {
    expect(actual).not.toBe(expected);
  } catch (error) {
    rethrowFrom(expectNotSame, error);
  }
}
