// The comparator's leaf rules: Python number kinds, what kind of value a node is, typed-array bytes, declared
// fields, and how an unsupported value or a map key is named. Pure helpers of the bit-tree walker.
import { PY_KEY_ORDER, PyBigInt, PyFloat } from "../wire/py-json-values";
import { Sample, type JsonObject } from "../wire/sample";
import { Tensor } from "../wire/tensor";
import { isPlainObject } from "../wire/wire-json";
import { renderPath, type PathNode } from "./bitwise-path";
import { BitwiseUsageError, type MetadataProjection } from "./bitwise-types";
import { sameFloat64Bits } from "./float-bits";

/** A number as the comparator meets it: a plain JS number, or one marked with Python's kind. */
export type PyNumber = number | PyFloat | PyBigInt;

/**
 * Python's bit tree of a number: `(int, n)` for a PyBigInt or a plain integral number other than -0, `("float64",
 * bytes)` for a PyFloat or any other plain number. True when both sides hold the same; else `type` when the kinds
 * differ (`1.0` vs `1`), `value` when only the value does. Only reached when a side is a PyFloat or PyBigInt.
 */
export function samePyNumber(left: PyNumber, right: PyNumber): true | "type" | "value" {
  const leftFloat = isFloatKind(left);
  if (leftFloat !== isFloatKind(right)) return "type";
  if (leftFloat) return sameFloat64Bits(numberOf(left), numberOf(right)) ? true : "value";
  return intOf(left) === intOf(right) ? true : "value";
}

function isFloatKind(value: PyNumber): boolean {
  if (typeof value === "number") return !Number.isInteger(value) || Object.is(value, -0);
  return value instanceof PyFloat;
}

function numberOf(value: PyNumber): number {
  return typeof value === "number" ? value : Number(value.value);
}

function intOf(value: PyNumber): bigint {
  return typeof value === "number" ? BigInt(value) : (value.value as bigint);
}

/** How a value takes part in the bit tree. */
export type Kind =
  "number" | "string" | "boolean" | "bigint" | "undefined" | "null" | "array" | "typed" | "tensor" | "map" | "plain" | "declared" | "unsupported";

export type Side = "left" | "right";

export const hasOwn = (object: object, key: string | symbol): boolean => Object.prototype.hasOwnProperty.call(object, key);
const declaredFieldSets = new WeakMap<object, ReadonlySet<string>>();

/**
 * Index of the first element in [from, end) that is not a pair of numbers with equal bits (end if none).
 * Small and free of escaping values so the optimizer keeps doubles unboxed: comparing two number arrays
 * allocates nothing per element. Used for arrays that start with a number; it must only ever see
 * V8's number element kinds (small-integer and double arrays), because once an array of objects flows
 * through the same load sites, every double read gets boxed (16 bytes per element).
 */
export function skipEqualNumbersInNumberArrays(left: readonly unknown[], right: readonly unknown[], from: number, end: number): number {
  for (let i = from; i < end; i++) {
    const a = left[i];
    const b = right[i];
    if (typeof a !== "number" || typeof b !== "number" || a !== b || (a === 0 && 1 / a !== 1 / b)) return i;
  }
  return end;
}

/** The same loop as {@link skipEqualNumbersInNumberArrays}, kept as a separate function (separate type
 * feedback) for arrays of strings, objects and mixed values. */
export function skipEqualNumbersInOtherArrays(left: readonly unknown[], right: readonly unknown[], from: number, end: number): number {
  for (let i = from; i < end; i++) {
    const a = left[i];
    const b = right[i];
    if (typeof a !== "number" || typeof b !== "number" || a !== b || (a === 0 && 1 / a !== 1 / b)) return i;
  }
  return end;
}

export type TypedArray = Exclude<ArrayBufferView, DataView> & { readonly length: number; readonly [index: number]: number | bigint };

export function classify(value: unknown): Kind {
  switch (typeof value) {
    case "number":
      return "number";
    case "string":
      return "string";
    case "boolean":
      return "boolean";
    case "bigint":
      return "bigint";
    case "undefined":
      return "undefined";
    case "symbol":
    case "function":
      return "unsupported";
    default:
      break;
  }
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (value instanceof PyFloat || value instanceof PyBigInt) return "number";
  if (ArrayBuffer.isView(value)) return typedArrayKind(value) === "DataView" ? "unsupported" : "typed";
  if (value instanceof Tensor) return "tensor";
  if (isPlainObject(value as object)) return "plain";
  const proto: unknown = Object.getPrototypeOf(value);
  const ctor = (proto as { constructor?: unknown }).constructor;
  if (typeof ctor === "function" && Array.isArray((ctor as { FIELDS?: unknown }).FIELDS)) return "declared";
  if (Object.prototype.toString.call(value) === "[object Map]") return "map";
  return "unsupported";
}

export function typedArrayKind(view: ArrayBufferView): string {
  return Object.prototype.toString.call(view).slice(8, -1);
}

/** memcmp of the two views' memory; no copy (the Buffers are views on the same ArrayBuffers). */
export function sameBytes(left: ArrayBufferView, right: ArrayBufferView): boolean {
  if (left.byteLength !== right.byteLength) return false;
  if (left.byteLength === 0) return true;
  return Buffer.compare(Buffer.from(left.buffer, left.byteOffset, left.byteLength), Buffer.from(right.buffer, right.byteOffset, right.byteLength)) === 0;
}

export function declaredFields(value: object, path: PathNode): ReadonlySet<string> {
  const ctor = value.constructor as { FIELDS?: unknown; name: string };
  const cached = declaredFieldSets.get(ctor);
  if (cached !== undefined) return cached;
  const fields = ctor.FIELDS;
  if (!Array.isArray(fields) || !fields.every((field): field is string => typeof field === "string")) {
    throw new BitwiseUsageError(renderPath(path), `${ctor.name}.FIELDS must be an array of field names`);
  }
  const set = new Set(fields);
  declaredFieldSets.set(ctor, set);
  return set;
}

export function rejectSymbolKeys(object: object, path: PathNode, side: Side): void {
  // PY_KEY_ORDER is the reader's record of Python's key order, which the bit tree ignores (a dict compares unordered)
  if (Object.getOwnPropertySymbols(object).some((symbol) => symbol !== PY_KEY_ORDER && Object.prototype.propertyIsEnumerable.call(object, symbol))) {
    throw new BitwiseUsageError(renderPath(path), `object with symbol-keyed properties on the ${side}; symbol keys cannot be compared bitwise`);
  }
}

export function unsupported(path: PathNode, value: unknown, side: Side): BitwiseUsageError {
  return new BitwiseUsageError(
    renderPath(path),
    `${describeUnsupported(value)} on the ${side} cannot be compared bitwise (only numbers, strings, booleans, bigints, null, undefined, arrays, typed arrays, Tensors, plain objects, Maps and classes with static FIELDS can)`,
  );
}

function describeUnsupported(value: unknown): string {
  if (typeof value === "function") return `a function${value.name ? ` (${value.name})` : ""}`;
  if (typeof value === "symbol") return `a symbol (${value.toString()})`;
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  const ctorName = (value as { constructor?: { name?: string } }).constructor?.name;
  if (tag !== "Object") return `a ${tag}`;
  return ctorName ? `an instance of ${ctorName}, a class without static FIELDS,` : "an object of unknown kind";
}

export function renderMapKey(key: unknown): string {
  if (typeof key === "string") return JSON.stringify(key);
  if (typeof key === "bigint") return `${key}n`;
  if (typeof key === "number" || typeof key === "boolean" || key === null || key === undefined) return String(key);
  if (typeof key === "symbol") return key.toString();
  return `<${Object.prototype.toString.call(key).slice(8, -1)} key>`;
}

export function unravel(flat: number, shape: readonly number[]): number[] {
  const coords = new Array<number>(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    coords[d] = flat % shape[d];
    flat = Math.floor(flat / shape[d]);
  }
  return coords;
}

export function runProjection(projection: MetadataProjection, metadata: unknown): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: projection(metadata as JsonObject) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

export function defaultRootName(value: unknown): string {
  if (value instanceof Sample) return "sample";
  if (typeof value === "object" && value !== null && classify(value) === "declared") {
    const name = value.constructor.name;
    if (name) return name[0].toLowerCase() + name.slice(1);
  }
  if (value instanceof Tensor) return "tensor";
  return "value";
}
