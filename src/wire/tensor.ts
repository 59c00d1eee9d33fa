// A dense, C-contiguous n-dimensional array tagged with its safetensors dtype.
// Replay tensors (routed experts, indexer top-k) travel in this form between server, wire and matchers.

/** Safetensors dtype names supported by the package. */
export type Dtype = "BOOL" | "U8" | "I8" | "U16" | "I16" | "U32" | "I32" | "U64" | "I64" | "F16" | "BF16" | "F32" | "F64";

/** The typed array that holds each dtype's elements (F16/BF16 are raw 16-bit patterns). */
export interface DtypeArrayMap {
  BOOL: Uint8Array;
  U8: Uint8Array;
  I8: Int8Array;
  U16: Uint16Array;
  I16: Int16Array;
  U32: Uint32Array;
  I32: Int32Array;
  U64: BigUint64Array;
  I64: BigInt64Array;
  F16: Uint16Array;
  BF16: Uint16Array;
  F32: Float32Array;
  F64: Float64Array;
}

/** Any typed array a {@link Tensor} may hold. */
export type TensorData = DtypeArrayMap[Dtype];

/** Bytes per element of each dtype. */
export const DTYPE_BYTES: Readonly<Record<Dtype, number>> = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  U16: 2,
  I16: 2,
  U32: 4,
  I32: 4,
  U64: 8,
  I64: 8,
  F16: 2,
  BF16: 2,
  F32: 4,
  F64: 8,
};

/** Constructors of the typed array backing each dtype. */
export const DTYPE_ARRAY: {
  readonly [D in Dtype]: {
    new (buffer: ArrayBufferLike, byteOffset: number, length: number): DtypeArrayMap[D];
    new (length: number): DtypeArrayMap[D];
    BYTES_PER_ELEMENT: number;
  };
} = {
  BOOL: Uint8Array,
  U8: Uint8Array,
  I8: Int8Array,
  U16: Uint16Array,
  I16: Int16Array,
  U32: Uint32Array,
  I32: Int32Array,
  U64: BigUint64Array,
  I64: BigInt64Array,
  F16: Uint16Array,
  BF16: Uint16Array,
  F32: Float32Array,
  F64: Float64Array,
};

/** True for a dtype name this package knows. */
export function isDtype(value: unknown): value is Dtype {
  return typeof value === "string" && Object.prototype.hasOwnProperty.call(DTYPE_BYTES, value);
}

/**
 * A C-contiguous tensor: `data` holds exactly `product(shape)` elements of `dtype`, row-major.
 * The constructor checks the element count and the typed-array kind against the dtype.
 */
export class Tensor<D extends Dtype = Dtype> {
  /** The declared field list (used by the bitwise comparator). */
  static readonly FIELDS = ["dtype", "shape", "data"] as const;

  readonly dtype: D;
  readonly shape: readonly number[];
  readonly data: DtypeArrayMap[D];

  constructor(dtype: D, shape: readonly number[], data: DtypeArrayMap[D]) {
    if (!isDtype(dtype)) throw new TypeError(`Tensor: unknown dtype ${JSON.stringify(dtype)}`);
    for (const dim of shape) {
      if (!Number.isSafeInteger(dim) || dim < 0) throw new TypeError(`Tensor: invalid dimension ${dim} in shape [${shape.join(", ")}]`);
    }
    const expected = shape.reduce((a, b) => a * b, 1);
    if (!(data instanceof DTYPE_ARRAY[dtype])) {
      throw new TypeError(`Tensor: dtype ${dtype} needs a ${DTYPE_ARRAY[dtype].name}, got ${Object.prototype.toString.call(data)}`);
    }
    if (data.length !== expected) {
      throw new TypeError(`Tensor: shape [${shape.join(", ")}] needs ${expected} elements, data has ${data.length}`);
    }
    this.dtype = dtype;
    this.shape = Object.freeze([...shape]);
    this.data = data;
  }

  /** Number of elements. */
  get size(): number {
    return this.data.length;
  }

  /** Byte view on the tensor's memory (no copy). */
  bytes(): Uint8Array {
    return new Uint8Array(this.data.buffer, this.data.byteOffset, this.data.byteLength);
  }

  /** Keeps the first `rows` entries of the leading dimension (a view, no copy). */
  sliceRows(rows: number): Tensor<D> {
    if (this.shape.length === 0) throw new TypeError("Tensor.sliceRows: scalar tensor has no rows");
    const kept = Math.max(0, Math.min(rows, this.shape[0]));
    const rowSize = this.shape.slice(1).reduce((a, b) => a * b, 1);
    const view = this.data.subarray(0, kept * rowSize) as DtypeArrayMap[D];
    return new Tensor(this.dtype, [kept, ...this.shape.slice(1)], view);
  }

  /** A deep copy that owns its memory. */
  clone(): Tensor<D> {
    return new Tensor(this.dtype, this.shape, this.data.slice() as DtypeArrayMap[D]);
  }
}
