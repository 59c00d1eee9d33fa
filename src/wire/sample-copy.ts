// Deep copy of a Sample, so decoding a reply never shares mutable state with the driver's input sample.
// Tensors, SpecInfo and PrefixCacheInfo keep their classes; plain objects and arrays are rebuilt in this realm.
import { PrefixCacheInfo, Sample, SpecInfo } from "./sample";
import { Tensor } from "./tensor";
import { PyBigInt, PyFloat } from "./py-json-values";
import { isPlainObject } from "./wire-json";

/** A deep copy of `sample`: no array, object or tensor memory is shared with the original. */
export function deepCopySample(sample: Sample): Sample {
  // a default Sample with each copied field assigned (an undefined one keeps its default, as the constructor's
  // init does): every key is a declared field, so the constructor's check of an init object has nothing to refuse
  const copy = new Sample();
  const fields = copy as unknown as Record<string, unknown>;
  for (const field of Sample.FIELDS) {
    const value = deepCopyValue(sample[field]);
    if (value !== undefined) fields[field] = value;
  }
  return copy;
}

function deepCopyValue(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Tensor) return value.clone();
  if (value instanceof PyFloat || value instanceof PyBigInt) return value; // immutable
  if (value instanceof SpecInfo) return new SpecInfo(value.toDict());
  if (value instanceof PrefixCacheInfo) return new PrefixCacheInfo(value.toDict());
  if (Array.isArray(value)) return value.map(deepCopyValue);
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return (value as unknown as { slice(): unknown }).slice();
  if (isPlainObject(value)) {
    // Built key by key in this realm (not structuredClone, whose objects come from another realm under Jest's
    // vm sandbox); a plain object of another realm is copied into this one.
    const copy: Record<string, unknown> = Object.getPrototypeOf(value) === null ? (Object.create(null) as Record<string, unknown>) : {};
    for (const key of Object.keys(value)) {
      Object.defineProperty(copy, key, { value: deepCopyValue((value as Record<string, unknown>)[key]), writable: true, enumerable: true, configurable: true });
    }
    return copy;
  }
  return structuredClone(value);
}
