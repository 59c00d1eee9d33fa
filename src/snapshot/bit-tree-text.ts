// Writes a value's bit tree as snapshot text: one leaf per line, numbers as float64 bits with the value beside them.
// Pure: large arrays and tensors become one digest line, and their bytes are handed back for optional storage.
import { bitwiseRootName } from "./root-name";
import { ArrayDigest, LARGE_ARRAY_THRESHOLD, digestTensor, numberArraySha256, sha256Hex, viewSha256 } from "./array-digest";
import { BitwiseUsageError, type MetadataProjection } from "../matchers/bitwise-types";
import { indexPath, mapKeyPath, propPath, renderPath, rootPath, type PathNode } from "../matchers/bitwise-path";
import { decodeBfloat16, decodeFloat16, float64Hex, float64HexFromWords, hex16, hex32 } from "../matchers/float-bits";
import { Sample, type JsonObject } from "../wire/sample";
import { Tensor } from "../wire/tensor";
import { isPlainObject } from "../wire/wire-json";
import { PY_KEY_ORDER, PyBigInt, PyFloat, pyNumberKind } from "../wire/py-json-values";
import { pythonFloatRepr } from "../wire/py-repr";

/** How large arrays and tensors are kept: as a SHA-256 line only, or also in full in a `.safetensors` file. */
export type LargeArrayStorage = "digest" | "safetensors";

/** Options of {@link serializeBitTree}. */
export interface BitTreeTextOptions {
  /** Applied to the `metadata` of every {@link Sample} before it is written (none by default here). */
  metadataProjection?: MetadataProjection;
  /** `digest` (default): a large value is one line with its SHA-256; `safetensors`: the line says its bytes are stored too. */
  largeArrays?: LargeArrayStorage;
  /** Name of the root in usage-error paths (default `sample` for a Sample, else `value`). */
  rootPath?: string;
}

/** The snapshot text of a value and the large values it digested (by SHA-256), for storage beside the snapshot. */
export interface BitTreeText {
  /** The text: no trailing newline, no carriage return, no tab. */
  text: string;
  /** The full tensor behind every digest line, keyed by its SHA-256 (views, not copies). */
  largeValues: Map<string, Tensor>;
}

const INDENT = "  ";

/**
 * Writes `value` as bit-tree text (the format is described in the README's snapshot section). Throws
 * {@link BitwiseUsageError} naming the path of a value that has no bit tree (function, symbol, Date, RegExp, Set,
 * Promise, an instance of a class without static FIELDS, a cycle, a symbol-keyed property, an undeclared field).
 */
export function serializeBitTree(value: unknown, options: BitTreeTextOptions = {}): BitTreeText {
  const writer = new BitTreeWriter(options);
  const root = rootPath(options.rootPath ?? bitwiseRootName(value));
  writer.value(value, root, "", "");
  return { text: writer.lines.join("\n"), largeValues: writer.largeValues };
}

class BitTreeWriter {
  readonly lines: string[] = [];
  readonly largeValues = new Map<string, Tensor>();
  private readonly ancestors = new Set<object>();

  constructor(private readonly options: BitTreeTextOptions) {}

  /** Writes `value` on a line starting with `indent + prefix`, then any nested lines. */
  value(value: unknown, path: PathNode, indent: string, prefix: string): void {
    const leaf = leafText(value);
    if (leaf !== null) {
      this.lines.push(indent + prefix + leaf);
      return;
    }
    if (typeof value === "function" || typeof value === "symbol") throw unsupported(path, value);
    const object = value as object;
    if (ArrayBuffer.isView(object)) {
      this.typedArray(object, path, indent, prefix);
      return;
    }
    if (object instanceof Tensor) {
      this.tensor(object as Tensor, path, indent, prefix);
      return;
    }
    if (object instanceof ArrayDigest) {
      this.lines.push(indent + prefix + digestLine(object)); // a tree read back from a snapshot
      return;
    }
    if (this.ancestors.has(object))
      throw new BitwiseUsageError(renderPath(path), "cyclic reference (the value contains itself); a cycle has no bit tree to snapshot");
    this.ancestors.add(object);
    try {
      if (Array.isArray(object)) this.array(object, path, indent, prefix);
      else if (isPlainObject(object)) this.plain(object as Record<string, unknown>, path, indent, prefix);
      else if (Object.prototype.toString.call(object) === "[object Map]" && !hasDeclaredFields(object))
        this.map(object as ReadonlyMap<unknown, unknown>, path, indent, prefix);
      else if (hasDeclaredFields(object)) this.declared(object, path, indent, prefix);
      else throw unsupported(path, object);
    } finally {
      this.ancestors.delete(object);
    }
  }

  private array(array: readonly unknown[], path: PathNode, indent: string, prefix: string): void {
    if (array.length > LARGE_ARRAY_THRESHOLD) {
      if (this.options.largeArrays === "safetensors") {
        if (isDenseNumberArray(array)) {
          this.digest(array, "Array", [array.length], indent, prefix);
          return;
        }
      } else {
        // One pass both checks that every element is a number and hashes the float64 bytes.
        const sha256 = numberArraySha256(array);
        if (sha256 !== null) {
          this.lines.push(indent + prefix + digestLine(new ArrayDigest("Array", [array.length], array.length, sha256, false)));
          return;
        }
      }
    }
    if (array.length === 0) {
      this.lines.push(`${indent}${prefix}Array(0) []`);
      return;
    }
    this.lines.push(`${indent}${prefix}Array(${array.length}) [`);
    const inner = indent + INDENT;
    for (let i = 0; i < array.length; i++) {
      if (!(i in array)) this.lines.push(`${inner}<hole>`);
      else this.value(array[i], indexPath(path, i), inner, "");
    }
    this.lines.push(`${indent}]`);
  }

  private plain(object: Record<string, unknown>, path: PathNode, indent: string, prefix: string): void {
    // PY_KEY_ORDER only records Python's key order, which a bit tree ignores
    if (Object.getOwnPropertySymbols(object).some((symbol) => symbol !== PY_KEY_ORDER && Object.prototype.propertyIsEnumerable.call(object, symbol))) {
      throw new BitwiseUsageError(renderPath(path), "object with symbol-keyed properties; symbol keys have no bit tree to snapshot");
    }
    const keys = Object.keys(object);
    if (keys.length === 0) {
      this.lines.push(`${indent}${prefix}Object {}`);
      return;
    }
    this.lines.push(`${indent}${prefix}Object {`);
    for (const key of keys) this.value(object[key], propPath(path, key), indent + INDENT, `${JSON.stringify(key)}: `);
    this.lines.push(`${indent}}`);
  }

  private map(map: ReadonlyMap<unknown, unknown>, path: PathNode, indent: string, prefix: string): void {
    if (map.size === 0) {
      this.lines.push(`${indent}${prefix}Map(0) {}`);
      return;
    }
    this.lines.push(`${indent}${prefix}Map(${map.size}) {`);
    for (const [key, item] of map) {
      const keyText = leafText(key);
      if (keyText === null)
        throw new BitwiseUsageError(renderPath(path), `a Map key of kind ${kindOf(key)}; only primitive Map keys have a bit tree to snapshot`);
      this.value(item, mapKeyPath(path, keyText), indent + INDENT, `${keyText} => `);
    }
    this.lines.push(`${indent}}`);
  }

  private declared(object: object, path: PathNode, indent: string, prefix: string): void {
    const ctor = object.constructor as unknown as { name: string; FIELDS: readonly string[] };
    const name = ctor.name;
    if (!/^[A-Za-z_$][\w$]*$/.test(name) || RESERVED_NAMES.has(name)) {
      throw new BitwiseUsageError(
        renderPath(path),
        `a class named ${JSON.stringify(name)}; a snapshotted class needs an identifier name other than ${[...RESERVED_NAMES].join(", ")}`,
      );
    }
    const fields = ctor.FIELDS;
    if (!fields.every((field) => typeof field === "string" && /^[A-Za-z_$][\w$]*$/.test(field))) {
      throw new BitwiseUsageError(renderPath(path), `${name}.FIELDS must be an array of identifier field names`);
    }
    const declared = new Set(fields);
    for (const key of Reflect.ownKeys(object)) {
      if (typeof key === "symbol" || !declared.has(key)) {
        throw new BitwiseUsageError(
          renderPath(propPath(path, String(key))),
          `undeclared field: ${name} declares no field ${typeof key === "symbol" ? key.toString() : JSON.stringify(key)}`,
        );
      }
    }
    if (fields.length === 0) {
      this.lines.push(`${indent}${prefix}${name} {}`);
      return;
    }
    this.lines.push(`${indent}${prefix}${name} {`);
    const record = object as Record<string, unknown>;
    for (const field of fields) {
      let item = record[field];
      if (field === "metadata" && object instanceof Sample && this.options.metadataProjection !== undefined) {
        try {
          item = this.options.metadataProjection(item as JsonObject);
        } catch (error) {
          throw new BitwiseUsageError(renderPath(propPath(path, field)), `metadataProjection threw: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
      this.value(item, propPath(path, field), indent + INDENT, `${field}: `);
    }
    this.lines.push(`${indent}}`);
  }

  private typedArray(view: ArrayBufferView, path: PathNode, indent: string, prefix: string): void {
    const kind = Object.prototype.toString.call(view).slice(8, -1);
    if (kind === "DataView") throw unsupported(path, view);
    const length = (view as unknown as { length: number }).length;
    if (length > LARGE_ARRAY_THRESHOLD) {
      this.digest(view, kind, [length], indent, prefix);
      return;
    }
    if (length === 0) {
      this.lines.push(`${indent}${prefix}${kind}(0) []`);
      return;
    }
    this.lines.push(`${indent}${prefix}${kind}(${length}) [`);
    this.elements(view, kind, indent + INDENT);
    this.lines.push(`${indent}]`);
  }

  private tensor(tensor: Tensor, path: PathNode, indent: string, prefix: string): void {
    for (const key of Reflect.ownKeys(tensor)) {
      if (typeof key === "symbol" || !(Tensor.FIELDS as readonly string[]).includes(key)) {
        throw new BitwiseUsageError(renderPath(propPath(path, String(key))), `undeclared field: Tensor declares no field ${String(key)}`);
      }
    }
    const head = `Tensor ${tensor.dtype} [${tensor.shape.join(", ")}]`;
    if (tensor.size > LARGE_ARRAY_THRESHOLD) {
      this.digest(tensor, `Tensor<${tensor.dtype}>`, tensor.shape, indent, prefix);
      return;
    }
    if (tensor.size === 0) {
      this.lines.push(`${indent}${prefix}${head} []`);
      return;
    }
    this.lines.push(`${indent}${prefix}${head} [`);
    this.elements(
      tensor.data,
      tensor.dtype === "F16" || tensor.dtype === "BF16" ? tensor.dtype : Object.prototype.toString.call(tensor.data).slice(8, -1),
      indent + INDENT,
    );
    this.lines.push(`${indent}]`);
  }

  /** One line per element: floats as their own-width bits plus value, integers in decimal. */
  private elements(view: ArrayBufferView, kind: string, indent: string): void {
    const length = (view as unknown as { length: number }).length;
    if (kind === "Float64Array") {
      const words = new Uint32Array(view.buffer, view.byteOffset, length * 2);
      const values = view as Float64Array;
      for (let i = 0; i < length; i++) this.lines.push(`${indent}0x${float64HexFromWords(words[2 * i], words[2 * i + 1])} (${readable(values[i])})`);
    } else if (kind === "Float32Array") {
      const words = new Uint32Array(view.buffer, view.byteOffset, length);
      const values = view as Float32Array;
      for (let i = 0; i < length; i++) this.lines.push(`${indent}0x${hex32(words[i])} (${readable(values[i])})`);
    } else if (kind === "F16" || kind === "BF16") {
      const halves = view as Uint16Array;
      const decode = kind === "F16" ? decodeFloat16 : decodeBfloat16;
      for (let i = 0; i < length; i++) this.lines.push(`${indent}0x${hex16(halves[i])} (${readable(decode(halves[i]))})`);
    } else {
      const values = view as unknown as ArrayLike<number | bigint>;
      for (let i = 0; i < length; i++) this.lines.push(`${indent}${String(values[i])}`);
    }
  }

  private digest(value: readonly unknown[] | ArrayBufferView | Tensor, kind: string, shape: readonly number[], indent: string, prefix: string): void {
    const stored = this.options.largeArrays === "safetensors";
    if (stored) {
      // The full bytes are kept, so build them once (a copy only for a number array) and hash those.
      const tensor = digestTensor(value as readonly number[] | ArrayBufferView | Tensor);
      const sha256 = sha256Hex(tensor);
      this.largeValues.set(sha256, tensor);
      this.lines.push(indent + prefix + digestLine(new ArrayDigest(kind, shape, tensor.size, sha256, true)));
      return;
    }
    // Digest only: hash a typed array or tensor straight from its memory.
    const view = value as ArrayBufferView | Tensor;
    const size = view instanceof Tensor ? view.size : (view as unknown as { length: number }).length;
    this.lines.push(indent + prefix + digestLine(new ArrayDigest(kind, shape, size, viewSha256(view), false)));
  }
}

/** The one-line form of a digest: `Tensor I32 [65536, 48, 8] length 25165824 sha256 <hex>` (plus ` stored` when kept in full). */
function digestLine(digest: ArrayDigest): string {
  const head = digest.kind.startsWith("Tensor<") ? `Tensor ${digest.kind.slice(7, -1)} [${digest.shape.join(", ")}]` : `${digest.kind}(${digest.length})`;
  return `${head} length ${digest.length} sha256 ${digest.sha256}${digest.stored ? " stored" : ""}`;
}

/** Class names the text format uses for itself. */
const RESERVED_NAMES = new Set(["Object", "Array", "Map", "Tensor", "ArrayDigest"]);

/**
 * The one-line text of a primitive or a kinded number, or null for other objects, functions and symbols. A plain
 * number's kind follows from its value (integral: int); a Python float with an integral value is written
 * `float 0x3ff0000000000000 (1.0)`, an int past 2^53 `int 9007199254740993`; other kinded numbers as plain ones.
 */
function leafText(value: unknown): string | null {
  if (value instanceof PyFloat) {
    const number = value.value;
    return pyNumberKind(number) === "float" ? leafText(number) : `float 0x${float64Hex(number)} (${pythonFloatRepr(number)})`;
  }
  if (value instanceof PyBigInt) return Number.isSafeInteger(Number(value.value)) ? leafText(Number(value.value)) : `int ${value.value}`;
  switch (typeof value) {
    case "number":
      return `0x${float64Hex(value)} (${readable(value)})`;
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return String(value);
    case "bigint":
      return `${value}n`;
    case "undefined":
      return "undefined";
    default:
      return value === null ? "null" : null;
  }
}

/** The decimal beside the bits: `-0` spelled, everything else as JavaScript prints it. */
export function readable(value: number): string {
  return Object.is(value, -0) ? "-0" : String(value);
}

function isDenseNumberArray(array: readonly unknown[]): boolean {
  for (let i = 0; i < array.length; i++) if (typeof array[i] !== "number") return false;
  return true;
}

function hasDeclaredFields(object: object): boolean {
  const ctor = (Object.getPrototypeOf(object) as { constructor?: unknown } | null)?.constructor;
  return typeof ctor === "function" && Array.isArray((ctor as { FIELDS?: unknown }).FIELDS);
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  return Object.prototype.toString.call(value).slice(8, -1);
}

function unsupported(path: PathNode, value: unknown): BitwiseUsageError {
  let what: string;
  if (typeof value === "function") what = `a function${value.name ? ` (${value.name})` : ""}`;
  else if (typeof value === "symbol") what = `a symbol (${value.toString()})`;
  else {
    const tag = kindOf(value);
    const ctorName = (value as { constructor?: { name?: string } }).constructor?.name;
    what = tag !== "Object" ? `a ${tag}` : ctorName ? `an instance of ${ctorName}, a class without static FIELDS,` : "an object of unknown kind";
  }
  return new BitwiseUsageError(
    renderPath(path),
    `${what} has no bit tree to snapshot (only numbers, strings, booleans, bigints, null, undefined, arrays, typed arrays, Tensors, plain objects, Maps and classes with static FIELDS have)`,
  );
}
