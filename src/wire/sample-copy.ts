// Deep copy of a Sample, so decoding a reply never shares mutable state with the driver's input sample.
// Tensors, SpecInfo and PrefixCacheInfo keep their classes; JSON-like values are structured-cloned.
import { PrefixCacheInfo, Sample, SpecInfo, type SampleInit } from "./sample";
import { Tensor } from "./tensor";

/** A deep copy of `sample`: no array, object or tensor memory is shared with the original. */
export function deepCopySample(sample: Sample): Sample {
  const init: Record<string, unknown> = {};
  for (const field of Sample.FIELDS) init[field] = deepCopyValue(sample[field]);
  return new Sample(init as SampleInit);
}

function deepCopyValue(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Tensor) return value.clone();
  if (value instanceof SpecInfo) return new SpecInfo(value.toDict());
  if (value instanceof PrefixCacheInfo) return new PrefixCacheInfo(value.toDict());
  return structuredClone(value);
}
