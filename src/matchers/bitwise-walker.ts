// The bit-tree walker: compares two values node by node (numbers by float64 bits and Python kind, typed arrays and
// tensors by bytes, arrays in order, objects by key set) and records every differing leaf with its path.
import { Sample } from "../wire/sample";
import { Tensor } from "../wire/tensor";
import {
  classify,
  declaredFields,
  hasOwn,
  rejectSymbolKeys,
  renderMapKey,
  runProjection,
  sameBytes,
  samePyNumber,
  skipEqualNumbersInNumberArrays,
  skipEqualNumbersInOtherArrays,
  typedArrayKind,
  unravel,
  unsupported,
  type PyNumber,
  type Side,
  type TypedArray,
} from "./bitwise-leaves";
import { coordsPath, indexPath, mapKeyPath, propPath, renderPath, type PathNode } from "./bitwise-path";
import { BitwiseUsageError, MISSING, type BitwiseDifference, type BitwiseReason, type MetadataProjection } from "./bitwise-types";
import { decodeBfloat16, decodeFloat16, float64HexFromWords, hex16, hex32, sameFloat64Bits } from "./float-bits";

export class BitTreeWalker {
  readonly differences: BitwiseDifference[] = [];
  total = 0;
  private readonly ancestors: Record<Side, Set<object>> = { left: new Set(), right: new Set() };

  constructor(
    private readonly limit: number,
    private readonly projection: MetadataProjection | undefined,
  ) {}

  /** True while new differences are still recorded (so their paths are worth building). */
  private get recording(): boolean {
    return this.differences.length < this.limit;
  }

  private record(path: PathNode, reason: BitwiseReason, left: unknown, right: unknown, extra?: Partial<BitwiseDifference>): void {
    this.total += 1;
    if (this.differences.length < this.limit) this.differences.push({ path: renderPath(path), reason, left, right, ...extra });
  }

  walk(left: unknown, right: unknown, path: PathNode): void {
    const leftKind = classify(left);
    const rightKind = classify(right);
    if (leftKind === "unsupported") throw unsupported(path, left, "left");
    if (rightKind === "unsupported") throw unsupported(path, right, "right");
    if (leftKind !== rightKind) {
      this.assertSupported(left, path, "left");
      this.assertSupported(right, path, "right");
      this.record(path, "type", left, right);
      return;
    }
    switch (leftKind) {
      case "number":
        if (typeof left === "number" && typeof right === "number") {
          if (!sameFloat64Bits(left, right)) this.record(path, "value", left, right);
        } else {
          const same = samePyNumber(left as PyNumber, right as PyNumber);
          if (same !== true) this.record(path, same, left, right);
        }
        return;
      case "string":
      case "boolean":
      case "bigint":
        if (left !== right) this.record(path, "value", left, right);
        return;
      case "undefined":
      case "null":
        return;
      case "typed":
        this.walkTypedArray(left as TypedArray, right as TypedArray, path);
        return;
      case "tensor":
        this.walkTensor(left as Tensor, right as Tensor, path);
        return;
      default:
        break;
    }
    const l = left as object;
    const r = right as object;
    if (leftKind === "declared" && Object.getPrototypeOf(l) !== Object.getPrototypeOf(r)) {
      this.assertSupported(l, path, "left");
      this.assertSupported(r, path, "right");
      this.record(path, "type", l, r);
      return;
    }
    this.enter(l, path, "left");
    this.enter(r, path, "right");
    try {
      if (leftKind === "array") this.walkArray(l as readonly unknown[], r as readonly unknown[], path);
      else if (leftKind === "plain") this.walkPlain(l as Record<string, unknown>, r as Record<string, unknown>, path);
      else if (leftKind === "map") this.walkMap(l as ReadonlyMap<unknown, unknown>, r as ReadonlyMap<unknown, unknown>, path);
      else this.walkDeclared(l, r, path);
    } finally {
      this.ancestors.left.delete(l);
      this.ancestors.right.delete(r);
    }
  }

  private enter(value: object, path: PathNode, side: Side): void {
    const seen = this.ancestors[side];
    if (seen.has(value)) {
      throw new BitwiseUsageError(renderPath(path), `cyclic reference on the ${side} (the value contains itself); cycles cannot be compared bitwise`);
    }
    seen.add(value);
  }

  private walkArray(left: readonly unknown[], right: readonly unknown[], path: PathNode): void {
    const common = Math.min(left.length, right.length);
    if (left.length !== right.length) this.record(path, "length", left, right);
    const skipEqualNumbers = typeof left[0] === "number" ? skipEqualNumbersInNumberArrays : skipEqualNumbersInOtherArrays;
    for (let i = skipEqualNumbers(left, right, 0, common); i < common; i = skipEqualNumbers(left, right, i + 1, common)) {
      const a = left[i];
      const b = right[i];
      if (typeof a === "number" && typeof b === "number") {
        if (sameFloat64Bits(a, b)) continue; // NaNs with the same payload
        this.record(this.recording ? indexPath(path, i) : path, "value", a, b);
        continue;
      }
      if (a === b && (typeof a === "string" || typeof a === "boolean" || typeof a === "bigint")) continue;
      if (a === undefined && b === undefined) {
        // A hole of a sparse array is a missing index, not an undefined element.
        const onLeft = i in left;
        if (onLeft !== i in right) this.recordMissing(indexPath(path, i), undefined, onLeft ? "right" : "left");
        continue;
      }
      this.walk(a, b, indexPath(path, i));
    }
    for (let i = common; i < left.length; i++) this.assertSupported(left[i], indexPath(path, i), "left");
    for (let i = common; i < right.length; i++) this.assertSupported(right[i], indexPath(path, i), "right");
  }

  private walkPlain(left: Record<string, unknown>, right: Record<string, unknown>, path: PathNode): void {
    rejectSymbolKeys(left, path, "left");
    rejectSymbolKeys(right, path, "right");
    for (const key of Object.keys(left)) {
      const keyPath = propPath(path, key);
      if (hasOwn(right, key)) this.walk(left[key], right[key], keyPath);
      else this.recordMissing(keyPath, left[key], "right");
    }
    for (const key of Object.keys(right)) {
      if (!hasOwn(left, key)) this.recordMissing(propPath(path, key), right[key], "left");
    }
  }

  private walkMap(left: ReadonlyMap<unknown, unknown>, right: ReadonlyMap<unknown, unknown>, path: PathNode): void {
    for (const [key, value] of left) {
      const keyPath = mapKeyPath(path, renderMapKey(key));
      if (right.has(key)) this.walk(value, right.get(key), keyPath);
      else this.recordMissing(keyPath, value, "right");
    }
    for (const [key, value] of right) {
      if (!left.has(key)) this.recordMissing(mapKeyPath(path, renderMapKey(key)), value, "left");
    }
  }

  private recordMissing(path: PathNode, present: unknown, missingOn: Side): void {
    this.assertSupported(present, path, missingOn === "left" ? "right" : "left");
    if (missingOn === "right") this.record(path, "missing", present, MISSING);
    else this.record(path, "missing", MISSING, present);
  }

  /** Both sides share a prototype (checked by the caller). */
  private walkDeclared(left: object, right: object, path: PathNode): void {
    const fields = declaredFields(left, path);
    this.checkUndeclared(left, right, fields, path);
    const l = left as Record<string, unknown>;
    const r = right as Record<string, unknown>;
    for (const field of fields) {
      const fieldPath = propPath(path, field);
      if (field === "metadata" && this.projection !== undefined && left instanceof Sample) {
        this.walkProjectedMetadata(l[field], r[field], fieldPath, this.projection);
      } else {
        this.walk(l[field], r[field], fieldPath);
      }
    }
  }

  /**
   * Every own property outside the declaration is a difference naming it: string or symbol keys, enumerable or
   * not (`Object.defineProperty`), since the declared field list is the whole contract of the class.
   */
  private checkUndeclared(left: object, right: object, fields: ReadonlySet<string>, path: PathNode): void {
    const className = left.constructor.name || "the class";
    const undeclared = (key: string | symbol): boolean => typeof key === "symbol" || !fields.has(key);
    const read = (object: object, key: string | symbol): unknown => (object as Record<string | symbol, unknown>)[key];
    const describeKey = (key: string | symbol): string => (typeof key === "symbol" ? key.toString() : JSON.stringify(key));
    for (const key of Reflect.ownKeys(left)) {
      if (!undeclared(key)) continue;
      const onRight = hasOwn(right, key);
      this.record(propPath(path, String(key)), "undeclared", read(left, key), onRight ? read(right, key) : MISSING, {
        detail: `undeclared field on the ${onRight ? "left and the right" : "left"}: ${className} declares no field ${describeKey(key)}`,
      });
    }
    for (const key of Reflect.ownKeys(right)) {
      if (!undeclared(key) || hasOwn(left, key)) continue;
      this.record(propPath(path, String(key)), "undeclared", MISSING, read(right, key), {
        detail: `undeclared field on the right: ${className} declares no field ${describeKey(key)}`,
      });
    }
  }

  private walkProjectedMetadata(left: unknown, right: unknown, path: PathNode, projection: MetadataProjection): void {
    const projectedLeft = runProjection(projection, left);
    const projectedRight = runProjection(projection, right);
    if (projectedLeft.ok && projectedRight.ok) {
      this.walk(projectedLeft.value, projectedRight.value, path);
      return;
    }
    const failures: string[] = [];
    if (!projectedLeft.ok) failures.push(`on the left: ${projectedLeft.error}`);
    if (!projectedRight.ok) failures.push(`on the right: ${projectedRight.error}`);
    this.record(path, "projection", left, right, { detail: `metadataProjection threw ${failures.join("; ")}` });
  }

  private walkTypedArray(left: TypedArray, right: TypedArray, path: PathNode): void {
    const kind = typedArrayKind(left);
    if (kind !== typedArrayKind(right)) {
      this.record(path, "type", left, right);
      return;
    }
    if (left.length !== right.length) {
      this.record(path, "length", left, right);
      return;
    }
    if (sameBytes(left, right)) return;
    this.scanElements(left, right, kind, null, path);
  }

  private walkTensor(left: Tensor, right: Tensor, path: PathNode): void {
    if (Object.getPrototypeOf(left) !== Object.getPrototypeOf(right)) {
      this.record(path, "type", left, right);
      return;
    }
    this.checkUndeclared(left, right, declaredFields(left, path), path);
    if (left.dtype !== right.dtype) {
      this.record(path, "dtype", left.dtype, right.dtype);
      return;
    }
    if (left.shape.length !== right.shape.length || left.shape.some((dim, i) => dim !== right.shape[i])) {
      this.record(path, "shape", left.shape, right.shape);
      return;
    }
    if (sameBytes(left.data, right.data)) return;
    this.scanElements(left.data, right.data, left.dtype === "F16" || left.dtype === "BF16" ? left.dtype : typedArrayKind(left.data), left.shape, path);
  }

  /** Locates (and counts) the differing elements of two same-kind, same-length typed arrays. */
  private scanElements(left: TypedArray, right: TypedArray, kind: string, shape: readonly number[] | null, path: PathNode): void {
    const at = (i: number): PathNode => {
      if (!this.recording) return path;
      return shape === null || shape.length === 1 ? indexPath(path, i) : coordsPath(path, unravel(i, shape));
    };
    const n = left.length;
    if (kind === "Float64Array") {
      const lw = new Uint32Array(left.buffer, left.byteOffset, n * 2);
      const rw = new Uint32Array(right.buffer, right.byteOffset, n * 2);
      for (let i = 0, w = 0; i < n; i++, w += 2) {
        if (lw[w] === rw[w] && lw[w + 1] === rw[w + 1]) continue;
        this.record(at(i), "value", left[i], right[i], {
          elementKind: kind,
          leftBits: float64HexFromWords(lw[w], lw[w + 1]),
          rightBits: float64HexFromWords(rw[w], rw[w + 1]),
        });
      }
      return;
    }
    if (kind === "Float32Array") {
      const lw = new Uint32Array(left.buffer, left.byteOffset, n);
      const rw = new Uint32Array(right.buffer, right.byteOffset, n);
      for (let i = 0; i < n; i++) {
        if (lw[i] === rw[i]) continue;
        this.record(at(i), "value", left[i], right[i], { elementKind: kind, leftBits: hex32(lw[i]), rightBits: hex32(rw[i]) });
      }
      return;
    }
    if (kind === "F16" || kind === "BF16") {
      const decode = kind === "F16" ? decodeFloat16 : decodeBfloat16;
      for (let i = 0; i < n; i++) {
        const a = left[i] as number;
        const b = right[i] as number;
        if (a === b) continue;
        this.record(at(i), "value", decode(a), decode(b), { elementKind: kind, leftBits: hex16(a), rightBits: hex16(b) });
      }
      return;
    }
    for (let i = 0; i < n; i++) {
      if (left[i] !== right[i]) this.record(at(i), "value", left[i], right[i], { elementKind: kind });
    }
  }

  /** Checks that a value met on one side only could have been compared (no functions, cycles, ...). */
  private assertSupported(value: unknown, path: PathNode, side: Side): void {
    const kind = classify(value);
    if (kind === "unsupported") throw unsupported(path, value, side);
    if (kind !== "array" && kind !== "plain" && kind !== "map" && kind !== "declared") return;
    const object = value as object;
    this.enter(object, path, side);
    try {
      if (kind === "array") {
        const array = value as readonly unknown[];
        for (let i = 0; i < array.length; i++) {
          const item = array[i];
          if (typeof item !== "number" && typeof item !== "string") this.assertSupported(item, indexPath(path, i), side);
        }
      } else if (kind === "plain") {
        rejectSymbolKeys(object, path, side);
        for (const [key, item] of Object.entries(object)) this.assertSupported(item, propPath(path, key), side);
      } else if (kind === "map") {
        for (const [key, item] of value as ReadonlyMap<unknown, unknown>) this.assertSupported(item, mapKeyPath(path, renderMapKey(key)), side);
      } else {
        for (const field of declaredFields(object, path)) this.assertSupported((object as Record<string, unknown>)[field], propPath(path, field), side);
      }
    } finally {
      this.ancestors[side].delete(object);
    }
  }
}
