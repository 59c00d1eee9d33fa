// Shared builders for the wire tests: a sample carrying every computed field, raw container assembly, the reference encoder.
// buildContainer writes safetensors bytes by hand from the format rules, independent of the package's writer.
import { PrefixCacheInfo, Sample, type JsonObject, type SampleInit } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";
import {
  SAMPLES_META_TENSOR,
  SamplesCodecError,
  WIRE_FIELDS_V2,
  WIRE_TENSOR_FIELDS,
  concatChunks,
  readSafetensors,
  writeSafetensors,
  writeSafetensorsChunks,
  type EmptyReason,
} from "../../src/wire";
import { IdListTexts } from "../../src/wire/int-array-json";
import { float64FromNumbers, int64FromNumbers, uint8FromNumbers } from "../../src/wire/wire-arrays";
import { stringifyExactJson } from "../../src/wire/wire-json";

/** A sample as the server assembles it: every wire field set, indexer top-k null. */
export function computedSample(overrides: SampleInit = {}): Sample {
  return new Sample({
    tokens: [1, 2, 3, 10, 11],
    response: "[10][11]",
    response_length: 2,
    loss_mask: [1, 1],
    rollout_log_probs: [-0.5, -0.1234567891234567],
    rollout_routed_experts: new Tensor(
      "I32",
      [4, 3, 2],
      Int32Array.from({ length: 24 }, (_, i) => i),
    ),
    rollout_indexer_topk: null,
    status: "completed",
    weight_versions: ["w1", "w2"],
    prefix_cache_info: new PrefixCacheInfo({ cached_tokens: 2, total_prompt_tokens: 3 }),
    metadata: { lifecycle: [{ t0: 1.0, t1: 2.0, turn: 1 }], messages: [{ role: "assistant", content: "done" }] },
    ...overrides,
  });
}

/** Bytes of an 8-byte little-endian size, the header text (UTF-8, unpadded unless the text is) and the data. */
export function buildContainer(headerText: string, data: Uint8Array | number[] = []): Uint8Array {
  const header = Buffer.from(headerText, "utf8");
  const out = Buffer.alloc(8 + header.length + data.length);
  out.writeBigUInt64LE(BigInt(header.length), 0);
  header.copy(out, 8);
  out.set(data, 8 + header.length);
  return new Uint8Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.length));
}

/** Little-endian bytes of int32 values. */
export function int32Bytes(values: number[]): number[] {
  return [...new Uint8Array(Int32Array.from(values).buffer)];
}

/** Re-packs a valid samples payload after `mutate(meta, tensors)` edits its meta JSON or tensor map. */
export function mutatePayload(
  payload: Uint8Array,
  mutate: (meta: { samples: Array<Record<string, unknown>>; session_metadata: unknown; empty_reason: unknown }, tensors: Map<string, Tensor>) => void,
): Uint8Array {
  const { tensors } = readSafetensors(payload);
  const metaTensor = tensors.get(SAMPLES_META_TENSOR) as Tensor<"U8">;
  tensors.delete(SAMPLES_META_TENSOR);
  const meta = JSON.parse(Buffer.from(metaTensor.data).toString("utf8"));
  mutate(meta, tensors);
  const metaBytes = new Uint8Array(Buffer.from(JSON.stringify(meta), "utf8"));
  tensors.set(SAMPLES_META_TENSOR, new Tensor("U8", [metaBytes.length], metaBytes));
  return writeSafetensors(tensors);
}

/** A value as a comparable tree: prototypes by name, every own key in order with its attributes, -0 apart from 0. */
export function valueStructure(value: unknown, depth = 0): unknown {
  if (depth > 400) throw new Error("valueStructure: nested deeper than any decoded value can be");
  if (typeof value === "number") return Object.is(value, -0) ? "number -0" : `number ${value}`;
  if (typeof value === "bigint") return `bigint ${value}`;
  if (value === null || typeof value !== "object") return `${typeof value} ${String(value)}`;
  if (ArrayBuffer.isView(value)) {
    const items = Array.from(value as unknown as ArrayLike<number | bigint>, (item) => valueStructure(item));
    return { view: Object.prototype.toString.call(value), items };
  }
  const prototype = Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null;
  return {
    prototype: prototype === null ? "null" : (prototype.constructor?.name ?? "anonymous"),
    keys: Reflect.ownKeys(value).map((key) => {
      const descriptor = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
      const attributes = `${descriptor.enumerable ? "e" : ""}${descriptor.writable ? "w" : ""}${descriptor.configurable ? "c" : ""}`;
      return [String(key), attributes, "value" in descriptor ? valueStructure(descriptor.value, depth + 1) : "accessor"];
    }),
  };
}

const failEncode = (path: string, problem: string): never => {
  throw new SamplesCodecError(`${path}: ${problem}`);
};

/**
 * The reference: every tensor field converted in sample order (tokens, loss mask, log-probs, replay tensors as they
 * are), the JSON fields written in the canonical order, the session metadata, then one writeSafetensorsChunks call
 * over the map (whose checks come last). Valid JSON fields only (the field checks themselves are not re-derived).
 */
export function referenceEncode(
  samples: readonly Sample[],
  sessionMetadata: JsonObject,
  fields: readonly string[],
  emptyReason: EmptyReason | null = null,
): Uint8Array {
  const jsonFields = WIRE_FIELDS_V2.filter((field) => fields.includes(field));
  const tensors = new Map<string, Tensor>();
  const idLists = new IdListTexts();
  const texts = samples.map((sample, index) => {
    const nulls: string[] = [];
    for (const field of WIRE_TENSOR_FIELDS) {
      const value = sample[field];
      const label = `encodeSamples: ${field} of sample ${index}`;
      const name = `${field}.${index}`;
      if (value === null || value === undefined) nulls.push(field);
      else if (field === "tokens") tensors.set(name, new Tensor("I64", [(value as number[]).length], int64FromNumbers(value as number[], label)));
      else if (field === "loss_mask") tensors.set(name, new Tensor("U8", [(value as number[]).length], uint8FromNumbers(value as number[], label)));
      else if (field === "rollout_log_probs") tensors.set(name, new Tensor("F64", [(value as number[]).length], float64FromNumbers(value as number[], label)));
      else tensors.set(name, value as Tensor);
    }
    const parts = jsonFields.map((field) => {
      const raw = sample[field] as unknown;
      const value = raw instanceof PrefixCacheInfo ? raw.toDict() : raw;
      return `${JSON.stringify(field)}:${stringifyExactJson(value, `encodeSamples: ${field} of sample ${index}`, failEncode, idLists)}`;
    });
    parts.push(`"nulls":${JSON.stringify(nulls)}`);
    return `{${parts.join(",")}}`;
  });
  const session = stringifyExactJson(sessionMetadata, "encodeSamples: session_metadata", failEncode, idLists);
  const meta = new TextEncoder().encode(`{"samples":[${texts.join(",")}],"session_metadata":${session},"empty_reason":${JSON.stringify(emptyReason)}}`);
  tensors.set(SAMPLES_META_TENSOR, new Tensor("U8", [meta.length], meta));
  return concatChunks(writeSafetensorsChunks(tensors));
}
