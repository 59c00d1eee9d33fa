// Routing replay (R3) in the samples op: decodes SGLang's base64 int32 buffers into (rows, layers, k) tensors,
// and rebuilds the routed-experts tensor from additional-R3 patches; every broken rule is a SampleAssemblyError.
import { endianness } from "node:os";
import type { Sample } from "../../wire/sample";
import { Tensor } from "../../wire/tensor";
import type { SessionRecord } from "../types";
import { SampleAssemblyError } from "./assembly-error";

/** How the samples op reads the replay payloads of the records. */
export interface ReplayAssemblyOptions {
  /** MoE layer count of the routed-experts buffers (`--num-layers`); null when the server was not given one. */
  numLayers: number | null;
  /** Records carry additional-R3 patches (rows from `routed_experts_start_len`) instead of full buffers. */
  additionR3: boolean;
}

const LITTLE_ENDIAN_HOST = endianness() === "LE";
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Python's `f"{value}"` for the JSON values a request field may hold. */
function pyText(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The little-endian int32 elements of a base64 buffer. Reads them in place when the decoded bytes are 4-aligned
 * (a large decode always is), so the tensor built on them is a view of the decode, not a second copy.
 */
function int32FromBase64(text: unknown, field: string): Int32Array {
  if (typeof text !== "string") throw new SampleAssemblyError(`${field} must be a base64 string, got ${text === null ? "null" : typeof text}`);
  if (text.length % 4 !== 0 || !BASE64.test(text)) throw new SampleAssemblyError(`${field} is not valid base64 (Incorrect padding or characters)`);
  const bytes = Buffer.from(text, "base64");
  if (bytes.byteLength % 4 !== 0) throw new SampleAssemblyError("buffer size must be a multiple of element size");
  const count = bytes.byteLength / 4;
  const values =
    bytes.byteOffset % 4 === 0
      ? new Int32Array(bytes.buffer, bytes.byteOffset, count)
      : new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  if (!LITTLE_ENDIAN_HOST) {
    const view = new DataView(values.buffer, values.byteOffset, values.byteLength);
    for (let i = 0; i < count; i++) values[i] = view.getInt32(i * 4, true);
  }
  return values;
}

/**
 * A `(rows, numLayers, k)` I32 tensor from a base64 buffer, `k` recovered from its length (as SGLang does not
 * report it). No rows gives an empty `(0, numLayers, 0)` tensor; a length that does not divide is refused.
 */
export function decodeTopkBuffer(text: unknown, rows: number, numLayers: number, field: string): Tensor<"I32"> {
  const values = int32FromBase64(text, field);
  if (rows <= 0) return new Tensor("I32", [0, numLayers, 0], new Int32Array(0));
  const topk = Math.floor(values.length / (rows * numLayers));
  if (rows * numLayers * topk !== values.length) {
    throw new SampleAssemblyError(`cannot reshape array of size ${values.length} into shape (${rows},${numLayers},${topk})`);
  }
  return new Tensor("I32", [rows, numLayers, topk], values);
}

function requireNumLayers(options: ReplayAssemblyOptions, turn: number): number {
  if (options.numLayers === null) {
    throw new SampleAssemblyError(`record ${turn}: routed_experts present but the session server has no num_layers (start it with numLayers / --num-layers)`);
  }
  return options.numLayers;
}

/** A turn's replay tensors as read from its record, before any trim (null where the record carries none). */
export interface TurnReplayTensors {
  routed: Tensor<"I32"> | null;
  indexer: Tensor<"I32"> | null;
}

/**
 * Reads a turn's replay tensors from its record's `meta_info`, over `rows` = `len(tokens) - 1` rows: the routed
 * experts (full R3 only; additional-R3 patches are assembled after the merge) and the indexer top-k.
 */
export function turnReplayTensors(meta: Record<string, unknown>, rows: number, turn: number, options: ReplayAssemblyOptions): TurnReplayTensors {
  let routed: Tensor<"I32"> | null = null;
  let indexer: Tensor<"I32"> | null = null;
  const routedText = meta.routed_experts;
  if (!options.additionR3 && routedText !== undefined && routedText !== null) {
    routed = decodeTopkBuffer(routedText, rows, requireNumLayers(options, turn), "routed_experts");
  }
  const indexerText = meta.indexer_topk;
  if (indexerText !== undefined && indexerText !== null) {
    const layers = meta.indexer_topk_num_layers;
    if (layers === undefined || layers === null) {
      throw new SampleAssemblyError("Server returned indexer_topk without indexer_topk_num_layers; sglang-miles must include the layer count in meta_info.");
    }
    if (!Number.isSafeInteger(layers) || (layers as number) <= 0) {
      throw new SampleAssemblyError(`record ${turn}: indexer_topk_num_layers must be a positive integer, got ${JSON.stringify(layers)}`);
    }
    indexer = decodeTopkBuffer(indexerText, rows, layers as number, "indexer_topk");
  }
  return { routed, indexer };
}

/**
 * Sets a fresh turn sample's replay tensors from its record's `meta_info`, before any trim (see
 * {@link turnReplayTensors}), each over `len(tokens) - 1` rows. Absent payloads leave the fields null.
 */
export function attachTurnReplay(sample: Sample, meta: Record<string, unknown>, turn: number, options: ReplayAssemblyOptions): void {
  const { routed, indexer } = turnReplayTensors(meta, sample.tokens.length - 1, turn, options);
  if (routed !== null) sample.rollout_routed_experts = routed;
  if (indexer !== null) sample.rollout_indexer_topk = indexer;
}

function choiceOf(record: SessionRecord): { meta: Record<string, unknown>; outputCount: number } {
  const choices = record.response?.choices;
  const choice = Array.isArray(choices) && isObject(choices[0]) ? choices[0] : {};
  const meta = isObject(choice.meta_info) ? choice.meta_info : {};
  const pairs = meta.output_token_logprobs;
  return { meta, outputCount: Array.isArray(pairs) ? pairs.length : 0 };
}

/**
 * Additional R3: the merged sample's routed experts rebuilt from the records' patches, in record order, each
 * starting where the previous one ended (`routed_experts_start_len`), until `len(tokens) - 1` rows are covered;
 * the concatenation is cut to exactly that. Records without any payload leave the sample as it is.
 * Sets `merged.rollout_routed_experts`; a single patch is used in place (a view), several are concatenated once.
 */
export function applyAdditionR3(merged: Sample, records: readonly SessionRecord[], options: ReplayAssemblyOptions): void {
  const metas = records.map(choiceOf);
  if (metas.every(({ meta }) => meta.routed_experts === undefined || meta.routed_experts === null)) return;
  const requiredRows = merged.tokens.length - 1;
  let coveredRows = 0;
  const chunks: Tensor<"I32">[] = [];
  for (let i = 0; i < records.length; i++) {
    if (chunks.length > 0 && coveredRows >= requiredRows) break;
    const { meta, outputCount } = metas[i];
    const info = meta.routed_experts;
    if (info === undefined || info === null) throw new SampleAssemblyError(`additional R3: record ${i} has no routed_experts payload`);
    const start = records[i].request?.routed_experts_start_len;
    if (start === undefined || start === null) throw new SampleAssemblyError(`additional R3: record ${i} request carries no routed_experts_start_len`);
    if (start !== coveredRows) throw new SampleAssemblyError(`additional R3: record ${i} starts at row ${pyText(start)}; expected ${coveredRows}`);
    const inputIds = records[i].request?.input_ids;
    const end = (Array.isArray(inputIds) ? inputIds.length : 0) + outputCount - 1;
    if (end < start) throw new SampleAssemblyError(`additional R3: record ${i} has invalid offsets (start=${start}, end=${end})`);
    const deltaRows = end - start;
    const hasPayload = typeof info === "string" ? info.length > 0 : Boolean(info);
    if (hasPayload !== (deltaRows !== 0)) {
      throw new SampleAssemblyError(`additional R3: record ${i} payload presence does not match ${deltaRows} rows`);
    }
    const patch = decodeTopkBuffer(info, deltaRows, requireNumLayers(options, i + 1), "routed_experts");
    if (patch.shape[0] > 0 || requiredRows === 0) chunks.push(patch);
    coveredRows = end;
  }
  if (coveredRows < requiredRows) {
    throw new SampleAssemblyError(`additional R3 covers ${coveredRows} rows but the merged sample needs ${requiredRows} (len(tokens) - 1)`);
  }
  merged.rollout_routed_experts = concatRows(chunks).sliceRows(requiredRows);
}

/** Row-wise concatenation; one chunk is returned as is. Trailing dimensions must agree (numpy's rule and text). */
function concatRows(chunks: readonly Tensor<"I32">[]): Tensor<"I32"> {
  if (chunks.length === 0) throw new SampleAssemblyError("need at least one array to concatenate");
  if (chunks.length === 1) return chunks[0];
  const [first] = chunks;
  chunks.forEach((chunk, index) => {
    for (let dim = 1; dim < 3; dim++) {
      if (chunk.shape[dim] !== first.shape[dim]) {
        throw new SampleAssemblyError(
          `all the input array dimensions except for the concatenation axis must match exactly, but along dimension ${dim}, ` +
            `the array at index 0 has size ${first.shape[dim]} and the array at index ${index} has size ${chunk.shape[dim]}`,
        );
      }
    }
  });
  const rows = chunks.reduce((sum, chunk) => sum + chunk.shape[0], 0);
  const data = new Int32Array(rows * first.shape[1] * first.shape[2]);
  let at = 0;
  for (const chunk of chunks) {
    data.set(chunk.data, at);
    at += chunk.data.length;
  }
  return new Tensor("I32", [rows, first.shape[1], first.shape[2]], data);
}
