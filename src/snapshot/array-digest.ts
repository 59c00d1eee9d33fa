// A large array or tensor stands in a bit-tree snapshot as its kind, shape, length and the SHA-256 of its bytes.
// The digest is a declared-field class, so the bitwise comparator reports a changed one as a differing leaf.
import { createHash } from "node:crypto";
import { Tensor, type Dtype } from "../wire/tensor";

/**
 * Arrays, typed arrays and tensors with more elements than this are written as an {@link ArrayDigest} line
 * (kind, shape, length, SHA-256 of the bytes) instead of one line per element.
 */
export const LARGE_ARRAY_THRESHOLD = 4096;

/** The leaf that replaces a large array, typed array or tensor in a bit tree read back from a snapshot. */
export class ArrayDigest {
  /** The declared field list (the bitwise comparator walks these in this order). */
  static readonly FIELDS = ["kind", "shape", "length", "sha256", "stored"] as const;

  constructor(
    /** `Array` (float64 bits of each number), a typed-array name (`Float32Array`, ...) or `Tensor<I32>`. */
    readonly kind: string,
    /** The tensor's shape; `[length]` for arrays and typed arrays. */
    readonly shape: readonly number[],
    /** Number of elements. */
    readonly length: number,
    /** Lower-case hex SHA-256 of the element bytes (little-endian; numbers of a plain array as float64). */
    readonly sha256: string,
    /** True when the full bytes are kept in a `.safetensors` file beside the snapshot. */
    readonly stored: boolean,
  ) {}
}

/** The bytes a digest covers, as the tensor the `.safetensors` file stores (a view when possible, else a copy). */
export function digestTensor(value: readonly number[] | ArrayBufferView | Tensor): Tensor {
  if (value instanceof Tensor) return value;
  if (Array.isArray(value)) return new Tensor("F64", [value.length], toFloat64Array(value as readonly number[]));
  const view = value as ArrayBufferView;
  const dtype = TYPED_ARRAY_DTYPES[Object.prototype.toString.call(view).slice(8, -1)];
  if (dtype === undefined) throw new TypeError(`no safetensors dtype for ${Object.prototype.toString.call(view)}`);
  const length = (view as unknown as { length: number }).length;
  const data = Object.prototype.toString.call(view) === "[object Uint8ClampedArray]" ? new Uint8Array(view.buffer, view.byteOffset, length) : view;
  return new Tensor(dtype, [length], data as never);
}

/** A plain loop: faster than `Float64Array.from` (iterator protocol) on a million-element array. */
function toFloat64Array(values: readonly number[]): Float64Array {
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = values[i];
  return out;
}

/** SHA-256 (hex) of a tensor's bytes. */
export function sha256Hex(tensor: Tensor): string {
  return createHash("sha256").update(tensor.bytes()).digest("hex");
}

/** Elements of a number array converted to float64 per hash update (128 KiB: stays in cache, no big buffer). */
const NUMBER_CHUNK = 16_384;
let numberChunk: Float64Array | null = null;

/**
 * SHA-256 (hex) of the bytes {@link digestTensor} would give, without building them: typed arrays and tensors are
 * hashed straight from their memory (no copy).
 */
export function viewSha256(value: ArrayBufferView | Tensor): string {
  if (value instanceof Tensor) return sha256Hex(value);
  return createHash("sha256")
    .update(new Uint8Array(value.buffer, value.byteOffset, value.byteLength))
    .digest("hex");
}

/**
 * SHA-256 (hex) of a number array's float64 bytes (what {@link digestTensor} would copy out), converted through
 * one reusable chunk instead of a full copy; null as soon as an element is not a number (no digest applies).
 */
export function numberArraySha256(values: readonly unknown[]): string | null {
  const chunk = (numberChunk ??= new Float64Array(NUMBER_CHUNK));
  const chunkBytes = new Uint8Array(chunk.buffer);
  const hash = createHash("sha256");
  for (let from = 0; from < values.length; from += NUMBER_CHUNK) {
    const count = Math.min(NUMBER_CHUNK, values.length - from);
    for (let i = 0; i < count; i++) {
      const element = values[from + i];
      if (typeof element !== "number") return null;
      chunk[i] = element;
    }
    hash.update(count === NUMBER_CHUNK ? chunkBytes : chunkBytes.subarray(0, count * 8));
  }
  return hash.digest("hex");
}

/** The safetensors dtype that stores each typed-array kind's bytes unchanged. */
export const TYPED_ARRAY_DTYPES: Readonly<Record<string, Dtype>> = {
  Int8Array: "I8",
  Uint8Array: "U8",
  Uint8ClampedArray: "U8",
  Int16Array: "I16",
  Uint16Array: "U16",
  Int32Array: "I32",
  Uint32Array: "U32",
  Float32Array: "F32",
  Float64Array: "F64",
  BigInt64Array: "I64",
  BigUint64Array: "U64",
};
