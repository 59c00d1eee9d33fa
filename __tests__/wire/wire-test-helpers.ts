// Shared builders for the wire tests: a sample carrying every computed field, and raw container assembly.
// buildContainer writes safetensors bytes by hand from the format rules, independent of the package's writer.
import { PrefixCacheInfo, Sample, type SampleInit } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";
import { SAMPLES_META_TENSOR, readSafetensors, writeSafetensors } from "../../src/wire";

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
