// Reads and writes safetensors containers (8-byte little-endian header size, JSON header, contiguous tensor data).
// The samples payload travels in this format so a Python `safetensors` reader opens it unchanged, and vice versa.
import { countOccurrences, type DecodeWork } from "./decode-limits";
import { SafetensorsFormatError } from "./errors";
import { cannotNestPast, describeJsonDepthExcess, findJsonDepthExcess } from "./json-depth";
import { scanJsonShape } from "./json-shape";
import { DTYPE_ARRAY, DTYPE_BYTES, Tensor, isDtype, type Dtype, type TensorData } from "./tensor";

/** Largest header the reader accepts, in bytes (the reference implementation's limit). Checked before any allocation. */
export const MAX_SAFETENSORS_HEADER_BYTES = 100_000_000;

/** Header key that holds the free-form string map instead of a tensor. */
export const SAFETENSORS_METADATA_KEY = "__metadata__";

/** Options of {@link readSafetensors}. */
export interface ReadSafetensorsOptions {
  /**
   * Most tensors the header may declare (default: no cap besides the header size). Counted on the raw header before
   * it is decoded or parsed, and again exactly after parsing; a header over it throws naming the cap.
   */
  maxTensors?: number;
  /** How a refusal names the cap (default `maxTensors`). */
  maxTensorsLabel?: string;
  /** Work counters to add to (see {@link DecodeWork}). */
  work?: DecodeWork;
}

const DATA_OFFSETS_KEY = new TextEncoder().encode('"data_offsets"');

/** What {@link readSafetensors} returns. */
export interface SafetensorsContents {
  /** Tensors by name, in data-offset order. */
  tensors: Map<string, Tensor>;
  /** The `__metadata__` string map, or null when the header has none. */
  metadata: Record<string, string> | null;
}

/**
 * Serialization order of dtypes, lowest first, as the reference writer declares them (by alignment).
 * The writer lays tensors out by descending rank, then by name, which keeps every tensor aligned.
 */
const DTYPE_RANK: Readonly<Record<Dtype, number>> = {
  BOOL: 0,
  U8: 1,
  I8: 2,
  I16: 3,
  U16: 4,
  F16: 5,
  BF16: 6,
  I32: 7,
  U32: 8,
  F32: 9,
  F64: 10,
  I64: 11,
  U64: 12,
};

const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const UTF8_STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const UTF8_ENCODER = new TextEncoder();
const LONE_SURROGATE = /\p{Cs}/u;

interface HeaderEntry {
  name: string;
  dtype: Dtype;
  shape: number[];
  begin: number;
  end: number;
  count: number;
}

/**
 * Parses a safetensors container.
 *
 * Every rule of the format is checked and a violation throws {@link SafetensorsFormatError} naming it:
 * at least 8 bytes; header size within the payload and at most {@link MAX_SAFETENSORS_HEADER_BYTES}
 * (checked before anything is allocated); header nested at most `MAX_JSON_DEPTH` (128) deep (checked before it
 * is decoded); header valid UTF-8 JSON object; `__metadata__` a string map;
 * each tensor a known dtype, a shape of non-negative integers and `data_offsets` `[begin, end]` with
 * `begin <= end <= data length` and `end - begin = element size × product(shape)`; tensors (in any header
 * order) tile the data section exactly, without gap, overlap or trailing bytes.
 *
 * Memory: a tensor whose data starts at an address aligned to its element size is a **view** on
 * `bytes` (no copy; it changes if `bytes` changes and keeps `bytes` alive); a misaligned tensor (only
 * possible when `bytes` itself sits at an odd offset of its buffer, or when another writer produced an
 * unaligned layout) is **copied** into fresh memory.
 */
export function readSafetensors(bytes: Uint8Array, options: ReadSafetensorsOptions = {}): SafetensorsContents {
  assertLittleEndianHost();
  // A tag check, not instanceof: Buffers and arrays from another realm (Jest's vm sandbox) must pass.
  if (Object.prototype.toString.call(bytes) !== "[object Uint8Array]") throw new SafetensorsFormatError("safetensors: expected a Uint8Array payload");
  if (bytes.length < 8) {
    throw new SafetensorsFormatError(`safetensors: payload has ${bytes.length} bytes, fewer than the 8-byte header size field`);
  }
  const sizeView = new DataView(bytes.buffer, bytes.byteOffset, 8);
  const low = sizeView.getUint32(0, true);
  const high = sizeView.getUint32(4, true);
  const headerSize = high * 0x1_0000_0000 + low;
  if (headerSize > MAX_SAFETENSORS_HEADER_BYTES) {
    throw new SafetensorsFormatError(`safetensors: header size ${sizeView.getBigUint64(0, true)} exceeds the ${MAX_SAFETENSORS_HEADER_BYTES}-byte limit`);
  }
  if (headerSize > bytes.length - 8) {
    throw new SafetensorsFormatError(`safetensors: header size ${headerSize} runs past the payload (${bytes.length - 8} bytes after the size field)`);
  }
  const dataStart = 8 + headerSize;
  const dataLength = bytes.length - dataStart;
  const headerBytes = bytes.subarray(8, dataStart);
  const maxTensors = options.maxTensors ?? Number.MAX_SAFE_INTEGER;
  const tooMany = (count: string): SafetensorsFormatError =>
    new SafetensorsFormatError(`safetensors: header declares ${count} tensors; the limit is ${maxTensors} (${options.maxTensorsLabel ?? "maxTensors"})`);
  // The tensor cap by structure, whatever the spelling (an escaped "data_offsets"): the header's members (tensors plus
  // `__metadata__`), counted on the bytes; a member takes at least 5 bytes (`"":0,`), so a short header needs no scan.
  if (options.maxTensors !== undefined && headerBytes.length > 5 * maxTensors) {
    const shape = scanJsonShape(headerBytes, { depth: 1, kind: "object", maxItems: maxTensors + 1, maxContainers: Number.MAX_SAFE_INTEGER });
    if (options.work) options.work.scannedBytes += shape.scanned;
    if (shape.items > maxTensors + 1) throw tooMany(`more than ${maxTensors}`);
  }
  // Every tensor entry carries a "data_offsets" key: counted by the native search, a second reading of the cap that
  // also holds for a header too short for the scan.
  if (options.maxTensors !== undefined && countOccurrences(headerBytes, DATA_OFFSETS_KEY, maxTensors + 1, options.work) > maxTensors) {
    throw tooMany(`more than ${maxTensors}`);
  }
  if (options.work) options.work.scannedBytes += 3 * headerBytes.length; // nesting scan, UTF-8 decoding, JSON parsing
  const header = parseHeader(headerBytes);
  const declared = Object.keys(header).length - (Object.prototype.hasOwnProperty.call(header, SAFETENSORS_METADATA_KEY) ? 1 : 0);
  if (declared > maxTensors) throw tooMany(String(declared));

  let metadata: Record<string, string> | null = null;
  const entries: HeaderEntry[] = [];
  for (const [name, info] of Object.entries(header)) {
    if (name === SAFETENSORS_METADATA_KEY) {
      metadata = checkMetadata(info);
      continue;
    }
    entries.push(checkEntry(name, info, dataLength));
  }
  checkTiling(entries, dataLength);

  const tensors = new Map<string, Tensor>();
  for (const entry of entries) {
    const tensor = materialize(bytes, dataStart, entry);
    if (options.work && tensor.data.buffer !== bytes.buffer) options.work.copiedBytes += entry.end - entry.begin;
    tensors.set(entry.name, tensor);
  }
  return { tensors, metadata };
}

/**
 * Serializes tensors into one safetensors container, byte-compatible with the reference writer:
 * tensors ordered by descending dtype alignment then by name (code-point order), compact JSON header
 * (`__metadata__` first, keys sorted, when given) padded with spaces to a multiple of 8, data contiguous.
 * Each tensor contributes exactly its own bytes (`Tensor.bytes()`), so a tensor that is a view on a
 * larger buffer is written correctly. Throws {@link SafetensorsFormatError} for an invalid name,
 * a non-Tensor value or non-string metadata. The result owns its memory (everything is copied).
 */
export function writeSafetensors(
  tensors: ReadonlyMap<string, Tensor> | Readonly<Record<string, Tensor>>,
  metadata?: Readonly<Record<string, string>>,
): Uint8Array {
  return concatChunks(writeSafetensorsChunks(tensors, metadata));
}

/**
 * The same container as {@link writeSafetensors}, as a list of chunks whose concatenation is
 * byte-identical to it: first the 8-byte size plus padded header (fresh memory), then each tensor's
 * bytes in layout order as a **view** on that tensor's memory (no copy). Suited to streaming a large
 * payload (`res.write` per chunk) without a second copy; do not mutate the tensors until written.
 */
export function writeSafetensorsChunks(
  tensors: ReadonlyMap<string, Tensor> | Readonly<Record<string, Tensor>>,
  metadata?: Readonly<Record<string, string>>,
): Uint8Array[] {
  assertLittleEndianHost();
  const items: Array<[string, Tensor]> =
    tensors instanceof Map ? [...(tensors as ReadonlyMap<string, Tensor>).entries()] : Object.entries(tensors as Record<string, Tensor>);
  for (const [name, tensor] of items) assertWritableTensor(name, tensor);
  const entries = items.map(([name, tensor]) => ({ name, dtype: tensor.dtype, shape: tensor.shape, byteLength: tensor.data.byteLength, tensor }));
  const head = safetensorsHead(entries, metadata);
  return [head, ...entries.map((entry) => entry.tensor.bytes())];
}

/** One tensor as a container's header describes it: name, dtype, shape and the byte length of its data. */
export interface SafetensorsEntry {
  readonly name: string;
  readonly dtype: Dtype;
  readonly shape: readonly number[];
  readonly byteLength: number;
}

/**
 * For a writer that places the tensor bytes itself: sorts `entries` in place into the layout order of
 * {@link writeSafetensorsChunks} (descending dtype alignment, then name by code point) and returns the bytes before
 * the data: the 8-byte little-endian header size, then the compact JSON header (`__metadata__` first, keys sorted,
 * when given) padded with spaces to a multiple of 8. Entries are taken as valid (see {@link assertWritableTensor}).
 */
export function safetensorsHead(entries: SafetensorsEntry[], metadata?: Readonly<Record<string, string>>): Uint8Array {
  assertLittleEndianHost();
  entries.sort((a, b) => DTYPE_RANK[b.dtype] - DTYPE_RANK[a.dtype] || compareCodePoints(a.name, b.name));
  const parts: string[] = [];
  if (metadata !== undefined) parts.push(`${JSON.stringify(SAFETENSORS_METADATA_KEY)}:${metadataJson(metadata)}`);
  let offset = 0;
  for (const { name, dtype, shape, byteLength } of entries) {
    parts.push(`${JSON.stringify(name)}:{"dtype":"${dtype}","shape":[${shape.join(",")}],"data_offsets":[${offset},${offset + byteLength}]}`);
    offset += byteLength;
  }
  const headerText = `{${parts.join(",")}}`;
  const headerBytes = Buffer.byteLength(headerText, "utf8");
  const headerSize = Math.ceil(headerBytes / 8) * 8;

  const head = new Uint8Array(8 + headerSize);
  const sizeView = new DataView(head.buffer, 0, 8);
  sizeView.setUint32(0, headerSize % 0x1_0000_0000, true);
  sizeView.setUint32(4, Math.floor(headerSize / 0x1_0000_0000), true);
  UTF8_ENCODER.encodeInto(headerText, head.subarray(8)); // the names hold no lone surrogate (checked), so the UTF-8 length is exact
  head.fill(0x20, 8 + headerBytes);
  return head;
}

/** Concatenates byte chunks into one fresh Uint8Array. */
export function concatChunks(chunks: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const chunk of chunks) total += chunk.length;
  const out = new Uint8Array(total);
  let cursor = 0;
  for (const chunk of chunks) {
    out.set(chunk, cursor);
    cursor += chunk.length;
  }
  return out;
}

function parseHeader(headerBytes: Uint8Array): Record<string, unknown> {
  // The nesting cap is checked on the raw bytes first: a header of nested brackets is refused after reading
  // 129 of them, before the whole header is decoded or parsed.
  const excess = cannotNestPast(headerBytes) ? null : findJsonDepthExcess(headerBytes);
  if (excess !== null) throw new SafetensorsFormatError(`safetensors: header ${describeJsonDepthExcess(excess)}`);
  let text: string;
  try {
    text = UTF8_STRICT.decode(headerBytes);
  } catch {
    throw new SafetensorsFormatError("safetensors: header is not valid UTF-8");
  }
  if (!text.startsWith("{")) {
    throw new SafetensorsFormatError(`safetensors: header must be a JSON object starting with "{", got ${JSON.stringify(text.slice(0, 16))}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new SafetensorsFormatError(`safetensors: header is not valid JSON (${(error as Error).message})`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new SafetensorsFormatError(`safetensors: header must be a JSON object, got ${describe(parsed)}`);
  }
  return parsed as Record<string, unknown>;
}

function checkMetadata(info: unknown): Record<string, string> | null {
  if (info === null) return null;
  if (typeof info !== "object" || Array.isArray(info)) {
    throw new SafetensorsFormatError(`safetensors: ${SAFETENSORS_METADATA_KEY} must be an object of strings, got ${describe(info)}`);
  }
  for (const [key, value] of Object.entries(info)) {
    if (typeof value !== "string") {
      throw new SafetensorsFormatError(`safetensors: ${SAFETENSORS_METADATA_KEY}.${key} must be a string, got ${describe(value)}`);
    }
  }
  return info as Record<string, string>;
}

function checkEntry(name: string, info: unknown, dataLength: number): HeaderEntry {
  const where = `safetensors: tensor ${JSON.stringify(name)}`;
  if (info === null || typeof info !== "object" || Array.isArray(info)) {
    throw new SafetensorsFormatError(`${where}: entry must be an object with dtype, shape and data_offsets, got ${describe(info)}`);
  }
  const { dtype, shape, data_offsets: offsets } = info as Record<string, unknown>;
  if (!isDtype(dtype)) throw new SafetensorsFormatError(`${where}: unknown dtype ${JSON.stringify(dtype) ?? "undefined"}`);
  if (!Array.isArray(shape) || !shape.every(isNonNegativeSafeInteger)) {
    throw new SafetensorsFormatError(`${where}: shape must be an array of non-negative integers, got ${describe(shape)}`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isNonNegativeSafeInteger)) {
    throw new SafetensorsFormatError(`${where}: data_offsets must be [begin, end] non-negative integers, got ${describe(offsets)}`);
  }
  const [begin, end] = offsets as [number, number];
  if (end < begin) throw new SafetensorsFormatError(`${where}: data_offsets [${begin}, ${end}] are reversed (end before begin)`);
  if (end > dataLength) {
    throw new SafetensorsFormatError(`${where}: data_offsets [${begin}, ${end}] out of range of the ${dataLength}-byte data section`);
  }
  const count = elementCount(shape);
  const expected = count === null ? null : count * DTYPE_BYTES[dtype];
  if (expected === null || expected !== end - begin) {
    throw new SafetensorsFormatError(
      `${where}: byte length ${end - begin} does not match dtype ${dtype} (${DTYPE_BYTES[dtype]} bytes) × shape [${shape.join(", ")}]`,
    );
  }
  return { name, dtype, shape: shape, begin, end, count: count as number };
}

/** Product of the dimensions, or null when it exceeds the safe-integer range. */
function elementCount(shape: readonly number[]): number | null {
  if (shape.includes(0)) return 0;
  let count = 1;
  for (const dim of shape) {
    count *= dim;
    if (count > Number.MAX_SAFE_INTEGER) return null;
  }
  return count;
}

function checkTiling(entries: HeaderEntry[], dataLength: number): void {
  entries.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let cursor = 0;
  let previous: HeaderEntry | null = null;
  for (const entry of entries) {
    if (entry.begin < cursor && previous !== null) {
      throw new SafetensorsFormatError(
        `safetensors: tensor ${JSON.stringify(entry.name)} [${entry.begin}, ${entry.end}] overlaps tensor ${JSON.stringify(previous.name)} [${previous.begin}, ${previous.end}]`,
      );
    }
    if (entry.begin > cursor) {
      throw new SafetensorsFormatError(`safetensors: ${entry.begin - cursor}-byte gap in the data section before tensor ${JSON.stringify(entry.name)}`);
    }
    cursor = entry.end;
    previous = entry;
  }
  if (cursor !== dataLength) {
    throw new SafetensorsFormatError(`safetensors: ${dataLength - cursor} trailing bytes in the data section are not covered by any tensor`);
  }
}

function materialize(bytes: Uint8Array, dataStart: number, entry: HeaderEntry): Tensor {
  const Ctor = DTYPE_ARRAY[entry.dtype];
  const absolute = bytes.byteOffset + dataStart + entry.begin;
  let data: TensorData;
  if (absolute % Ctor.BYTES_PER_ELEMENT === 0) {
    data = new Ctor(bytes.buffer, absolute, entry.count);
  } else {
    data = new Ctor(entry.count);
    new Uint8Array(data.buffer).set(bytes.subarray(dataStart + entry.begin, dataStart + entry.end));
  }
  try {
    return new Tensor(entry.dtype, entry.shape, data);
  } catch (error) {
    throw new SafetensorsFormatError(`safetensors: tensor ${JSON.stringify(entry.name)}: ${(error as Error).message}`);
  }
}

/**
 * Refuses what {@link writeSafetensorsChunks} cannot write: an invalid tensor name (not a string, `__metadata__`, a
 * lone surrogate), a value that is not a {@link Tensor}, data not matching the dtype or the shape.
 * @throws SafetensorsFormatError naming the tensor
 */
export function assertWritableTensor(name: string, tensor: Tensor): void {
  if (typeof name !== "string" || name === SAFETENSORS_METADATA_KEY || LONE_SURROGATE.test(name)) {
    throw new SafetensorsFormatError(`safetensors: invalid tensor name ${JSON.stringify(name)}`);
  }
  if (!(tensor instanceof Tensor)) throw new SafetensorsFormatError(`safetensors: ${JSON.stringify(name)} is not a Tensor (${describe(tensor)})`);
  if (!(tensor.data instanceof DTYPE_ARRAY[tensor.dtype]) || tensor.data.length !== elementCount(tensor.shape)) {
    throw new SafetensorsFormatError(
      `safetensors: tensor ${JSON.stringify(name)} data does not match dtype ${tensor.dtype} and shape [${tensor.shape.join(", ")}]`,
    );
  }
}

function metadataJson(metadata: Readonly<Record<string, string>>): string {
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) {
    throw new SafetensorsFormatError(`safetensors: metadata must be an object of strings, got ${describe(metadata)}`);
  }
  const keys = Object.keys(metadata).sort(compareCodePoints);
  const parts = keys.map((key) => {
    const value = metadata[key];
    if (typeof value !== "string") throw new SafetensorsFormatError(`safetensors: metadata ${JSON.stringify(key)} must be a string, got ${describe(value)}`);
    if (LONE_SURROGATE.test(key) || LONE_SURROGATE.test(value)) {
      throw new SafetensorsFormatError(`safetensors: metadata ${JSON.stringify(key)} holds a lone UTF-16 surrogate`);
    }
    return `${JSON.stringify(key)}:${JSON.stringify(value)}`;
  });
  return `{${parts.join(",")}}`;
}

/** Orders strings by Unicode code point, which is the byte order of their UTF-8 encodings. */
function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

function isNonNegativeSafeInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (ArrayBuffer.isView(value)) return Object.prototype.toString.call(value);
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value).slice(0, 40)}`;
}

function assertLittleEndianHost(): void {
  if (!HOST_IS_LITTLE_ENDIAN) throw new SafetensorsFormatError("safetensors: big-endian hosts are not supported");
}
