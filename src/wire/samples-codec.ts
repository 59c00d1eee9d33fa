// The samples-op payload (SPEC §7.4): the server packs assembled Samples into one safetensors container,
// the driver overlays each wire sample onto a deep copy of its input sample. Pure; no I/O.
import { InputSampleDefaultsError, SamplesCodecError } from "./errors";
import { PrefixCacheInfo, SAMPLE_STATUSES, Sample, SpecInfo, type JsonObject, type JsonValue, type SampleStatus } from "./sample";
import { deepCopySample } from "./sample-copy";
import { assertWritableTensor, concatChunks, readSafetensors, safetensorsHead, type SafetensorsEntry } from "./safetensors";
import { countOccurrences, DecodeWork, resolveDecodeLimits, type SamplesDecodeLimits } from "./decode-limits";
import { cannotNestPast, describeJsonDepthExcess, findJsonDepthExcess } from "./json-depth";
import { scanJsonShape } from "./json-shape";
import { DTYPE_BYTES, Tensor, type Dtype } from "./tensor";
import { checkWireNumbers, numbersFromInt64, numbersFromTyped, writeInt64Words } from "./wire-arrays";
import { parsePyJson, pyNumberValue } from "./py-json";
import { assignJsonKeys, isJsonObject, stringifyExactJson } from "./wire-json";
import { IdListTexts } from "./int-array-json";

/** Why a samples reply holds no sample. */
export type EmptyReason = "no_records" | "all_truncated";

/** All valid {@link EmptyReason} values. */
export const EMPTY_REASONS: readonly EmptyReason[] = ["no_records", "all_truncated"];

/** Sample fields that travel as tensors named `"<field>.<sample index>"`; always on the wire (null ones listed in `nulls`). */
export const WIRE_TENSOR_FIELDS = ["tokens", "loss_mask", "rollout_log_probs", "rollout_routed_experts", "rollout_indexer_topk"] as const;

/** A tensor-carried wire field. */
export type WireTensorField = (typeof WIRE_TENSOR_FIELDS)[number];

/** A JSON-carried wire field. */
export type WireJsonField = "response" | "response_length" | "status" | "weight_versions" | "prefix_cache_info" | "metadata" | "reward";

/** JSON fields of the v1 server's samples reply. */
export const WIRE_FIELDS_V1: readonly WireJsonField[] = Object.freeze([
  "response",
  "response_length",
  "status",
  "weight_versions",
  "prefix_cache_info",
  "metadata",
] as const);

/** JSON fields of the v2 server's samples reply: the v1 list plus `reward`. */
export const WIRE_FIELDS_V2: readonly WireJsonField[] = Object.freeze([...WIRE_FIELDS_V1, "reward"] as const);

/** Name of the rank-1 uint8 tensor holding the UTF-8 JSON sample metadata. */
export const SAMPLES_META_TENSOR = "_samples_meta";

/** Input-sample metadata key the overlay refuses (its per-turn semantics do not survive merged samples). */
const OPD_STUDENT_TOP_LOGPROBS_KEY = "opd_student_top_logprobs";

/** Wire dtype of each tensor field, and whether it decodes to a plain number list (else it stays a Tensor). */
const TENSOR_SPECS: Readonly<Record<WireTensorField, { dtype: Dtype; list: boolean }>> = {
  tokens: { dtype: "I64", list: true },
  loss_mask: { dtype: "U8", list: true },
  rollout_log_probs: { dtype: "F64", list: true },
  rollout_routed_experts: { dtype: "I32", list: false },
  rollout_indexer_topk: { dtype: "I32", list: false },
};

/** Options of {@link encodeSamples}. */
export interface EncodeSamplesOptions {
  /** Why the reply is empty (`null`/absent for a reply with samples). */
  emptyReason?: EmptyReason | null;
  /** JSON fields to carry: {@link WIRE_FIELDS_V1} or {@link WIRE_FIELDS_V2}. Tensor field names are accepted and ignored (tensors always travel). */
  fields: readonly string[];
}

/** What a {@link DecodeSamplesOptions.checkSample} check reports (a `ParityVerdict` fits). */
export interface SampleCheckResult {
  /** True when the sample passes. */
  pass: boolean;
  /** The failing parts, each named with a one-line message. */
  failures: ReadonlyArray<{ part: string; message: string }>;
}

/** Options of {@link decodeSamplesReply}. */
export interface DecodeSamplesOptions {
  /** JSON fields to overlay; must match the server's list (extra wire keys are ignored, so v1 decoding of a v2 reply keeps v1 semantics). */
  fields: readonly string[];
  /**
   * Caps on the sample count, the tensor count and one tensor's elements (defaults:
   * {@link DEFAULT_SAMPLES_DECODE_LIMITS}), each checked before the work it bounds; a reply over one is refused with
   * a {@link SamplesCodecError} naming the cap.
   */
  limits?: Partial<SamplesDecodeLimits>;
  /**
   * A check every decoded sample must pass, e.g. `checkTrainingSampleInvariants` (from the package root or
   * `jest-session-parity/matchers`): a failing sample is refused with a {@link SamplesCodecError} naming the sample,
   * the part and the offending entries (negative token ids, a loss-mask value of 7, NaN log-probs, ...). Default: none.
   */
  checkSample?: (sample: Sample) => SampleCheckResult;
  /** Counters the decoder adds its work to (see {@link DecodeWork}); for tests and benchmarks. */
  work?: DecodeWork;
}

/** A decoded `POST /sessions/{id}/samples` reply. */
export interface SamplesReply {
  /** One Sample per wire sample: the input sample's deep copy with the wire fields overlaid. */
  samples: Sample[];
  /** The server's session metadata, as sent. */
  session_metadata: JsonObject;
  /** Why the reply is empty, or null. */
  empty_reason: EmptyReason | null;
}

const UTF8_STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const UTF8_ENCODER = new TextEncoder();

/**
 * Server side: packs samples into one safetensors container (SPEC §7.4).
 *
 * Tensor fields become `"<field>.<index>"` tensors with pinned dtypes (tokens I64, loss_mask U8,
 * rollout_log_probs F64, replay tensors I32); a null one is listed in that sample's `nulls`. The JSON
 * fields named by `options.fields`, the session metadata and the empty reason go into `_samples_meta`.
 *
 * Throws {@link SamplesCodecError} naming field and sample for anything the wire would change: a
 * token that is not a safe integer, a loss-mask entry outside 0..255 or fractional, a non-number
 * log-prob, a replay tensor that is not already an I32 {@link Tensor}, a JSON value JSON cannot carry
 * exactly (NaN, undefined, class instances, lone surrogates), or an unknown field / empty reason.
 */
export function encodeSamples(samples: readonly Sample[], sessionMetadata: JsonObject, options: EncodeSamplesOptions): Uint8Array {
  return concatChunks(encodeSamplesChunks(samples, sessionMetadata, options));
}

/**
 * {@link encodeSamples} as chunks whose concatenation is byte-identical to its result, for streaming a
 * large reply (`res.write` per chunk). Replay tensors are not copied: their chunks are views on the
 * samples' tensor memory, so leave the samples untouched until the chunks are written. Everything else
 * (the header, the per-token lists, the metadata) is written into fresh chunks, one per run between replay
 * tensors: a reply without replay tensors is a single chunk, unless its metadata text is long (past 4 Mi
 * characters it goes out as UTF-8 pieces of its own, never as one string).
 */
export function encodeSamplesChunks(samples: readonly Sample[], sessionMetadata: JsonObject, options: EncodeSamplesOptions): Uint8Array[] {
  const jsonFields = knownJsonFields(options.fields) ?? resolveJsonFields(options.fields);
  const emptyReason = options.emptyReason ?? null;
  if (emptyReason !== null && !EMPTY_REASONS.includes(emptyReason)) {
    throw new SamplesCodecError(`encodeSamples: unknown empty reason ${JSON.stringify(emptyReason)}`);
  }
  if (!Array.isArray(samples)) throw new SamplesCodecError("encodeSamples: samples must be an array");
  if (!isJsonObject(sessionMetadata)) throw new SamplesCodecError("encodeSamples: session metadata must be a JSON object");

  const entries: WireTensorEntry[] = [];
  const meta = new MetaText();
  meta.push('{"samples":[');
  const idLists = new IdListTexts(); // v2: the session's accumulated ids and the active leaf's copy are one text
  samples.forEach((sample: Sample, index) => {
    if (sample === null || typeof sample !== "object") throw new SamplesCodecError(`encodeSamples: sample ${index} is not a Sample`);
    const nulls: WireTensorField[] = [];
    for (const field of WIRE_TENSOR_FIELDS) {
      const value = sample[field] as unknown;
      if (value === null || value === undefined) nulls.push(field);
      else entries.push(checkTensorField(field, value, `${field}.${index}`, `encodeSamples: ${field} of sample ${index}`));
    }
    const parts = jsonFields.map((field) => {
      const label = `encodeSamples: ${field} of sample ${index}`;
      const raw = sample[field] as unknown;
      const value = checkJsonField(field, raw instanceof PrefixCacheInfo ? raw.toDict() : raw, label);
      return `${JSON.stringify(field)}:${stringifyExactJson(value, label, failEncode, idLists)}`;
    });
    parts.push(`"nulls":${JSON.stringify(nulls)}`);
    meta.push(`${index === 0 ? "" : ","}{${parts.join(",")}}`);
  });
  const sessionText = stringifyExactJson(sessionMetadata, "encodeSamples: session_metadata", failEncode, idLists);
  meta.push(`],"session_metadata":${sessionText},"empty_reason":${JSON.stringify(emptyReason)}}`);
  entries.push(meta.entry());
  // The container writer's checks, in its order: only a replay tensor can fail them (the rest is made here).
  for (const entry of entries) if (entry.tensor !== null) assertWritableTensor(entry.name, entry.tensor);
  return writeReplyChunks(safetensorsHead(entries), entries);
}

/**
 * One tensor of the reply: a checked per-token list (or the metadata bytes) that {@link writeReplyChunks} writes into
 * the reply itself, or a sample's replay tensor, sent as a view on its own memory.
 */
interface WireTensorEntry extends SafetensorsEntry {
  readonly values: readonly number[] | Uint8Array | null;
  readonly tensor: Tensor | null;
  /** A large `_samples_meta`: its bytes in pieces, each sent as a chunk of its own (else null). */
  readonly pieces?: readonly Uint8Array[];
}

/** Characters of metadata text kept as strings before they are written out as UTF-8 pieces. */
const META_PIECE_CHARS = 1 << 22;

/**
 * The `_samples_meta` JSON, written in order. A reply's usual few kilobytes stay one string (encoded into the kept
 * scratch and copied into the reply); past {@link META_PIECE_CHARS} the text goes out as UTF-8 pieces of about that
 * size, so no reply, however many samples carry however much metadata, is ever one string (V8 caps a string at
 * 2^29 - 24 characters) and the text's strings never outlive their piece.
 */
class MetaText {
  private texts: string[] = [];
  private chars = 0;
  private readonly pieces: Uint8Array[] = [];
  private bytes = 0;

  push(text: string): void {
    this.texts.push(text);
    this.chars += text.length;
    if (this.chars >= META_PIECE_CHARS) this.flush();
  }

  /** The reply entry of the whole text. */
  entry(): WireTensorEntry {
    if (this.pieces.length === 0) {
      const values = utf8Scratch(this.texts.join(""));
      return { name: SAMPLES_META_TENSOR, dtype: "U8", shape: [values.length], byteLength: values.length, values, tensor: null };
    }
    this.flush();
    return { name: SAMPLES_META_TENSOR, dtype: "U8", shape: [this.bytes], byteLength: this.bytes, values: null, tensor: null, pieces: this.pieces };
  }

  private flush(): void {
    if (this.texts.length === 0) return;
    const piece = UTF8_ENCODER.encode(this.texts.length === 1 ? this.texts[0] : this.texts.join(""));
    this.texts = [];
    this.chars = 0;
    this.pieces.push(piece);
    this.bytes += piece.length;
  }
}

/** Kept scratch for the metadata's UTF-8 bytes (copied into the reply before {@link encodeSamplesChunks} returns). */
let metaScratch = new Uint8Array(1 << 16);
/** The scratch grows to this at most; a longer text is encoded into memory of its own. */
const MAX_META_SCRATCH = 1 << 22;

/**
 * `UTF8_ENCODER.encode(text)`, into the kept scratch (`encodeInto` spares the fresh buffer and its copy). The bytes
 * are valid until the next call.
 */
function utf8Scratch(text: string): Uint8Array {
  const most = 3 * text.length; // a UTF-16 code unit never takes more than 3 UTF-8 bytes
  if (metaScratch.length < most && most <= MAX_META_SCRATCH) metaScratch = new Uint8Array(Math.min(Math.max(most, 2 * metaScratch.length), MAX_META_SCRATCH));
  if (metaScratch.length < most) return UTF8_ENCODER.encode(text);
  const { written } = UTF8_ENCODER.encodeInto(text, metaScratch);
  return metaScratch.subarray(0, written);
}

/**
 * The reply as chunks in layout order (`entries` sorted by {@link safetensorsHead}): the head and each run of lists
 * between replay tensors written into one fresh chunk, each replay tensor a view on its own memory (and a large
 * `_samples_meta` its own pieces). Concatenated,
 * the bytes `writeSafetensorsChunks` writes for the same tensors; without replay tensors, one chunk.
 */
function writeReplyChunks(head: Uint8Array, entries: readonly WireTensorEntry[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let k = 0, first = true; k <= entries.length; first = false) {
    let end = k;
    let bytes = first ? head.byteLength : 0;
    while (end < entries.length && entries[end].tensor === null && entries[end].pieces === undefined) bytes += entries[end++].byteLength;
    if (bytes > 0) {
      const out = new Uint8Array(bytes);
      let at = 0;
      if (first) {
        out.set(head);
        at = head.byteLength;
      }
      for (let j = k; j < end; j++) {
        writeListEntry(entries[j], out, at);
        at += entries[j].byteLength;
      }
      chunks.push(out);
    }
    if (end < entries.length) {
      const { tensor, pieces } = entries[end];
      if (pieces !== undefined) chunks.push(...pieces);
      else chunks.push((tensor as Tensor).bytes());
    }
    k = end + 1;
  }
  return chunks;
}

/**
 * Writes a checked list entry's bytes at `out[at]`: int64 by words, float64 and uint8 by a typed array's `set`. The
 * 8-byte dtypes lead the layout, right after the head (a multiple of 8 bytes) in a fresh chunk, so their views are
 * aligned (a misaligned one would be a RangeError, never wrong bytes).
 */
function writeListEntry(entry: WireTensorEntry, out: Uint8Array, at: number): void {
  const values = entry.values as readonly number[];
  if (entry.dtype === "U8") out.set(values, at);
  else if (entry.dtype === "I64") writeInt64Words(values, new Int32Array(out.buffer, out.byteOffset + at, 2 * values.length), 0);
  else new Float64Array(out.buffer, out.byteOffset + at, values.length).set(values);
}

/**
 * Driver side: decodes a samples reply and overlays each wire sample onto a deep copy of `inputSample`
 * (which is never mutated). JSON fields replace the copy's values, except `metadata`, which is merged
 * key by key (update semantics), and a null v2 `reward`, which keeps the input's reward. Null-marked
 * tensor fields get a fresh empty value per sample (`tokens` → `[]`, others → null). tokens, loss_mask
 * and rollout_log_probs decode to plain number arrays; replay tensors stay I32 {@link Tensor}s that
 * are views on `payload` when aligned (copies otherwise), so do not mutate `payload` afterwards.
 *
 * Throws {@link SafetensorsFormatError} for an invalid container, {@link SamplesCodecError} for a
 * broken samples contract (missing or ill-typed `_samples_meta`, wrong tensor dtype or rank, null
 * markers naming non-tensor fields, a promised tensor absent, unreferenced tensors, ill-typed JSON
 * fields, an int64 token outside the safe-integer range), and {@link InputSampleDefaultsError} when a
 * non-empty reply meets an input sample that does not carry defaults (see {@link assertInputSampleDefaults}).
 * Nothing else escapes for any byte string.
 */
export function decodeSamplesReply(payload: Uint8Array, inputSample: Sample, options: DecodeSamplesOptions): SamplesReply {
  const jsonFields = knownJsonFields(options.fields) ?? resolveJsonFields(options.fields);
  const limits = resolveDecodeLimits(options.limits, (message) => {
    throw new SamplesCodecError(message);
  });
  let tensors: Map<string, Tensor>;
  try {
    tensors = readSafetensors(payload, { maxTensors: limits.maxTensors, maxTensorsLabel: "limits.maxTensors", work: options.work }).tensors;
  } catch (error) {
    // The tensor cap is a samples-contract limit: refused as a codec error, like the sample cap.
    if (error instanceof Error && error.message.includes("(limits.maxTensors)")) throw new SamplesCodecError(`samples reply: ${error.message}`);
    throw error;
  }
  const meta = readMeta(tensors, limits, options.work);
  if (meta.samples.length > 0) assertInputSampleDefaults(inputSample);

  const samples = meta.samples.map((wire, index) => overlaySample(wire, index, inputSample, jsonFields, tensors, limits, options.work));
  if (tensors.size > 0) {
    const names = [...tensors.keys()].sort();
    const shown = names
      .slice(0, 10)
      .map((name) => JSON.stringify(name))
      .join(", ");
    throw new SamplesCodecError(`samples reply: payload carries unreferenced tensors: ${shown}${names.length > 10 ? ` and ${names.length - 10} more` : ""}`);
  }
  if (options.checkSample) samples.forEach((sample, index) => checkDecodedSample(sample, index, options.checkSample!));
  return { samples, session_metadata: meta.session_metadata, empty_reason: meta.empty_reason };
}

function checkDecodedSample(sample: Sample, index: number, check: (sample: Sample) => SampleCheckResult): void {
  const result = check(sample);
  if (result.pass) return;
  const parts = result.failures.map((failure) => `[${failure.part}] ${failure.message}`).join("; ");
  throw new SamplesCodecError(`samples reply: sample ${index} fails checkSample: ${parts}`);
}

/**
 * Refuses an input sample whose state the overlay would silently replace: non-empty `weight_versions`,
 * non-zero `prefix_cache_info` or `spec_info`, any `teacher_log_probs` / `opd_reverse_kl`, or metadata
 * holding `opd_student_top_logprobs`. Throws {@link InputSampleDefaultsError} naming the field.
 */
export function assertInputSampleDefaults(inputSample: Sample): void {
  const fail = (message: string): never => {
    throw new InputSampleDefaultsError(`input sample must carry defaults: ${message}`);
  };
  if (!(inputSample instanceof Sample)) fail("expected a Sample");
  if (inputSample.weight_versions.length !== 0) {
    fail(`weight_versions must be empty, got ${JSON.stringify(inputSample.weight_versions)} (the overlay replaces it, it does not append)`);
  }
  if (!sameNumbers(inputSample.prefix_cache_info.toDict(), new PrefixCacheInfo().toDict())) {
    fail(`prefix_cache_info must be zeros, got ${JSON.stringify(inputSample.prefix_cache_info.toDict())}`);
  }
  if (!sameNumbers(inputSample.spec_info.toDict(), new SpecInfo().toDict())) {
    fail(`spec_info must be zeros, got ${JSON.stringify(inputSample.spec_info.toDict())}`);
  }
  if (inputSample.teacher_log_probs !== null) fail("teacher_log_probs must be null (the overlay carries server values verbatim)");
  if (inputSample.opd_reverse_kl !== null) fail("opd_reverse_kl must be null (the overlay carries server values verbatim)");
  if (inputSample.metadata !== null && Object.prototype.hasOwnProperty.call(inputSample.metadata, OPD_STUDENT_TOP_LOGPROBS_KEY)) {
    fail(`metadata must not hold ${JSON.stringify(OPD_STUDENT_TOP_LOGPROBS_KEY)} (its per-token meaning does not survive merged turns)`);
  }
}

interface WireMeta {
  samples: Record<string, unknown>[];
  session_metadata: JsonObject;
  empty_reason: EmptyReason | null;
}

const NULLS_KEY = UTF8_ENCODER.encode('"nulls"');

function tooManySamples(count: string, limits: SamplesDecodeLimits): SamplesCodecError {
  return new SamplesCodecError(`samples reply: ${SAMPLES_META_TENSOR} declares ${count} samples; the limit is ${limits.maxSamples} (limits.maxSamples)`);
}

function readMeta(tensors: Map<string, Tensor>, limits: SamplesDecodeLimits, work?: DecodeWork): WireMeta {
  const metaTensor = tensors.get(SAMPLES_META_TENSOR);
  if (metaTensor === undefined) throw new SamplesCodecError(`samples reply: payload has no ${SAMPLES_META_TENSOR} tensor`);
  tensors.delete(SAMPLES_META_TENSOR);
  if (metaTensor.dtype !== "U8" || metaTensor.shape.length !== 1) {
    throw new SamplesCodecError(`samples reply: ${SAMPLES_META_TENSOR} must be a rank-1 U8 tensor, got ${metaTensor.dtype} of rank ${metaTensor.shape.length}`);
  }
  const data = metaTensor.data as Uint8Array;
  // The sample cap by structure, whatever the spelling (an omitted "nulls", an escaped key): the elements of the
  // top-level arrays (`samples`), and every object and array, counted on the bytes before anything is parsed; the
  // scan stops at the first count past its cap. A text this short cannot hold more of either (an element takes two
  // bytes with its comma, a container at least one).
  if (data.length > Math.min(2 * limits.maxSamples, limits.maxJsonContainers)) {
    const shape = scanJsonShape(data, { depth: 2, kind: "array", maxItems: limits.maxSamples, maxContainers: limits.maxJsonContainers });
    if (work) work.scannedBytes += shape.scanned;
    if (shape.items > limits.maxSamples) throw tooManySamples(`more than ${limits.maxSamples}`, limits);
    if (shape.containers > limits.maxJsonContainers) {
      throw new SamplesCodecError(
        `samples reply: ${SAMPLES_META_TENSOR} holds more than ${limits.maxJsonContainers} JSON objects and arrays; the limit is ` +
          `${limits.maxJsonContainers} (limits.maxJsonContainers)`,
      );
    }
  }
  // Every wire sample carries a "nulls" key: counted by the native search, a second reading of the same cap.
  if (countOccurrences(data, NULLS_KEY, limits.maxSamples + 1, work) > limits.maxSamples) {
    throw tooManySamples(`more than ${limits.maxSamples}`, limits);
  }
  if (work) work.scannedBytes += 3 * metaTensor.data.byteLength; // nesting scan, UTF-8 decoding, JSON parsing
  // few containers (a reply's usual metadata) cannot nest too deep: the byte scan runs only for many
  const excess = cannotNestPast(data) ? null : findJsonDepthExcess(data);
  if (excess !== null) throw new SamplesCodecError(`samples reply: ${SAMPLES_META_TENSOR} ${describeJsonDepthExcess(excess)}`);
  let parsed: unknown;
  try {
    // Python's reading: NaN/Infinity as miles writes them, `1.0` a float (PyFloat) and `1` an int, big ints exact
    parsed = parsePyJson(UTF8_STRICT.decode(metaTensor.data));
  } catch (error) {
    throw new SamplesCodecError(`samples reply: ${SAMPLES_META_TENSOR} is not UTF-8 JSON (${(error as Error).message})`);
  }
  if (!isJsonObject(parsed)) throw new SamplesCodecError(`samples reply: ${SAMPLES_META_TENSOR} must hold a JSON object`);
  for (const key of ["samples", "session_metadata", "empty_reason"]) {
    if (!Object.prototype.hasOwnProperty.call(parsed, key)) throw new SamplesCodecError(`samples reply: ${SAMPLES_META_TENSOR} lacks ${JSON.stringify(key)}`);
  }
  const { samples, session_metadata: sessionMetadata, empty_reason: emptyReason } = parsed;
  if (!Array.isArray(samples)) throw new SamplesCodecError(`samples reply: ${SAMPLES_META_TENSOR}.samples must be an array`);
  if (samples.length > limits.maxSamples) throw tooManySamples(String(samples.length), limits);
  samples.forEach((wire, index) => {
    if (!isJsonObject(wire)) throw new SamplesCodecError(`samples reply: sample ${index} must be a JSON object`);
  });
  if (!isJsonObject(sessionMetadata)) throw new SamplesCodecError(`samples reply: ${SAMPLES_META_TENSOR}.session_metadata must be a JSON object`);
  if (emptyReason !== null && !EMPTY_REASONS.includes(emptyReason as EmptyReason)) {
    throw new SamplesCodecError(`samples reply: unknown empty_reason ${JSON.stringify(emptyReason)}`);
  }
  return { samples: samples as Record<string, unknown>[], session_metadata: sessionMetadata as JsonObject, empty_reason: emptyReason as EmptyReason | null };
}

function overlaySample(
  wire: Record<string, unknown>,
  index: number,
  inputSample: Sample,
  jsonFields: readonly WireJsonField[],
  tensors: Map<string, Tensor>,
  limits: SamplesDecodeLimits,
  work?: DecodeWork,
): Sample {
  const where = `samples reply: sample ${index}`;
  const nulls = wire.nulls;
  if (!Object.prototype.hasOwnProperty.call(wire, "nulls") || !Array.isArray(nulls) || !nulls.every((name) => typeof name === "string")) {
    throw new SamplesCodecError(`${where}: "nulls" must be an array of field names`);
  }
  const notTensor = [...new Set(nulls)].filter((name) => !(WIRE_TENSOR_FIELDS as readonly string[]).includes(name)).sort();
  if (notTensor.length > 0) {
    throw new SamplesCodecError(`${where}: null markers name non-tensor fields: ${notTensor.map((name) => JSON.stringify(name)).join(", ")}`);
  }

  const sample = deepCopySample(inputSample);
  if (work) work.sampleCopies += 1;
  for (const field of jsonFields) {
    if (!Object.prototype.hasOwnProperty.call(wire, field)) throw new SamplesCodecError(`${where} lacks JSON field ${JSON.stringify(field)}`);
    applyJsonField(sample, field, checkJsonField(field, wire[field], `${where}: ${field}`));
  }
  for (const field of WIRE_TENSOR_FIELDS) {
    if (nulls.includes(field)) {
      if (field === "tokens") sample.tokens = [];
      else sample[field] = null;
      continue;
    }
    const name = `${field}.${index}`;
    const tensor = tensors.get(name);
    if (tensor === undefined) throw new SamplesCodecError(`${where} promises tensor ${JSON.stringify(name)} but the payload lacks it`);
    tensors.delete(name);
    if (tensor.data.length > limits.maxTensorElements) {
      throw new SamplesCodecError(
        `${where}: ${name} holds ${tensor.data.length} elements; the limit is ${limits.maxTensorElements} per tensor (limits.maxTensorElements)`,
      );
    }
    if (work && TENSOR_SPECS[field].list) work.listElements += tensor.data.length;
    decodeTensorField(sample, field, tensor, name);
  }
  return sample;
}

/** Checks one tensor field's value for the wire (the refusals of its dtype conversion) and returns its reply entry. */
function checkTensorField(field: WireTensorField, value: unknown, name: string, label: string): WireTensorEntry {
  const spec = TENSOR_SPECS[field];
  if (!spec.list) {
    if (!(value instanceof Tensor)) throw new SamplesCodecError(`${label} must be an I32 Tensor, got ${describe(value)}`);
    const tensor = value as Tensor;
    if (tensor.dtype !== spec.dtype || !(tensor.data instanceof Int32Array)) {
      throw new SamplesCodecError(`${label} must have dtype I32, got ${tensor.dtype} (replay tensors are never converted)`);
    }
    return { name, dtype: tensor.dtype, shape: tensor.shape, byteLength: tensor.data.byteLength, values: null, tensor };
  }
  if (!Array.isArray(value)) throw new SamplesCodecError(`${label} must be an array of numbers, got ${describe(value)}`);
  const values = value as number[];
  const dtype = spec.dtype as "I64" | "U8" | "F64";
  checkWireNumbers(dtype, values, label);
  return { name, dtype, shape: [values.length], byteLength: values.length * DTYPE_BYTES[dtype], values, tensor: null };
}

function decodeTensorField(sample: Sample, field: WireTensorField, tensor: Tensor, name: string): void {
  const spec = TENSOR_SPECS[field];
  if (tensor.dtype !== spec.dtype) throw new SamplesCodecError(`samples reply: ${name}: ${field} must have dtype ${spec.dtype}, got ${tensor.dtype}`);
  if (!spec.list) {
    sample[field as "rollout_routed_experts" | "rollout_indexer_topk"] = tensor as Tensor<"I32">;
    return;
  }
  if (tensor.shape.length !== 1) throw new SamplesCodecError(`samples reply: ${name}: ${field} must be rank 1, got rank ${tensor.shape.length}`);
  if (field === "tokens") sample.tokens = numbersFromInt64(tensor.data as BigInt64Array, `samples reply: ${name}`);
  else if (field === "loss_mask") sample.loss_mask = numbersFromTyped(tensor.data as Uint8Array);
  else sample.rollout_log_probs = numbersFromTyped(tensor.data as Float64Array);
}

/** Checks one JSON field's value (shared by encode and decode); returns it unchanged or throws naming `label`. */
function checkJsonField(field: WireJsonField, value: unknown, label: string): unknown {
  const fail = (expected: string): never => {
    throw new SamplesCodecError(`${label} must be ${expected}, got ${describe(value)}`);
  };
  switch (field) {
    case "response":
      if (typeof value !== "string") fail("a string");
      break;
    case "response_length":
      if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) fail("a non-negative integer");
      break;
    case "status":
      if (!SAMPLE_STATUSES.includes(value as SampleStatus)) fail(`one of ${SAMPLE_STATUSES.join(", ")}`);
      break;
    case "weight_versions":
      if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) fail("an array of strings");
      break;
    case "prefix_cache_info": {
      const keys = PrefixCacheInfo.FIELDS as readonly string[];
      if (
        !isJsonObject(value) ||
        Object.keys(value).some((key) => !keys.includes(key)) ||
        // a float spelling (`0.0`) is kept as such: the comparator then names the kind that changed
        !keys.every((key) => Number.isFinite(pyNumberValue(value[key]) ?? Number.NaN))
      ) {
        fail(`an object with numbers ${keys.join(", ")}`);
      }
      break;
    }
    case "metadata":
      if (!isJsonObject(value)) fail("a JSON object");
      break;
    case "reward":
      // Any JSON value: the Python codec declares the field as plain JSON, and v2's default post-processor assigns
      // whatever non-null reward the agent reported.
      break;
  }
  return value;
}

function applyJsonField(sample: Sample, field: WireJsonField, value: unknown): void {
  switch (field) {
    case "response":
      sample.response = value as string;
      break;
    case "response_length":
      sample.response_length = value as number;
      break;
    case "status":
      sample.status = value as SampleStatus;
      break;
    case "weight_versions":
      sample.weight_versions = [...(value as string[])];
      break;
    case "prefix_cache_info":
      sample.prefix_cache_info = new PrefixCacheInfo(value as ReturnType<PrefixCacheInfo["toDict"]>);
      break;
    case "metadata":
      if (!isJsonObject(sample.metadata)) sample.metadata = {};
      assignJsonKeys(sample.metadata, value as Record<string, unknown>);
      break;
    case "reward":
      if (value !== null) sample.reward = value as JsonValue;
      break;
  }
}

/**
 * The two frozen lists are their own resolution (what the servers and the fixture pass on every reply): the list
 * itself for them, else undefined.
 */
function knownJsonFields(fields: readonly string[]): readonly WireJsonField[] | undefined {
  return fields === WIRE_FIELDS_V1 || fields === WIRE_FIELDS_V2 ? (fields as readonly WireJsonField[]) : undefined;
}

/** The JSON fields to carry, in canonical order; unknown names are refused, tensor names ignored. */
function resolveJsonFields(fields: readonly string[]): readonly WireJsonField[] {
  if (!Array.isArray(fields)) throw new SamplesCodecError("samples codec: options.fields must be an array of field names");
  // (Array.isArray narrows a readonly array to any[]; the declared element type still holds)
  for (const name of fields as readonly string[]) {
    if (!(WIRE_FIELDS_V2 as readonly string[]).includes(name) && !(WIRE_TENSOR_FIELDS as readonly string[]).includes(name)) {
      throw new SamplesCodecError(`samples codec: unknown wire field ${JSON.stringify(name)}`);
    }
  }
  return WIRE_FIELDS_V2.filter((name) => fields.includes(name));
}

function sameNumbers(a: Record<string, number>, b: Record<string, number>): boolean {
  return Object.keys(b).every((key) => a[key] === b[key]);
}

function failEncode(path: string, problem: string): never {
  throw new SamplesCodecError(`${path}: ${problem}`);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value instanceof Tensor) return `a ${value.dtype} Tensor`;
  if (ArrayBuffer.isView(value)) return Object.prototype.toString.call(value);
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return `string ${JSON.stringify(value.slice(0, 40))}`;
  return `${typeof value} ${String(value)}`;
}
