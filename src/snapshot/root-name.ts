// The name a bit tree's root takes in rendered paths, the same rule toBeBitwiseEqual's reports follow.
// Shared by the snapshot writer (usage errors) and the snapshot matcher (differing leaves).
import { Sample } from "../wire/sample";
import { Tensor } from "../wire/tensor";

/** `sample` for a Sample, `tensor` for a Tensor, the lower-cased class name for other declared classes, else `value`. */
export function bitwiseRootName(value: unknown): string {
  if (value instanceof Sample) return "sample";
  if (value instanceof Tensor) return "tensor";
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const ctor = (Object.getPrototypeOf(value) as { constructor?: { name?: string; FIELDS?: unknown } } | null)?.constructor;
    if (ctor !== undefined && Array.isArray(ctor.FIELDS) && ctor.name) return ctor.name[0].toLowerCase() + ctor.name.slice(1);
  }
  return "value";
}
