// The training sample the session server emits and the matchers compare, with a fixed declared field list.
// Field names keep the wire's snake_case; toDict/fromDict convert to and from plain JSON-like objects.
import { Tensor, type Dtype, type TensorData } from "./tensor";
import { PyBigInt, PyFloat, toPlainJs } from "./py-json-values";
import { parsePyJson } from "./py-json";

/** Lifecycle status of a sample. */
export type SampleStatus = "pending" | "completed" | "truncated" | "aborted" | "failed";

/** All valid {@link SampleStatus} values. */
export const SAMPLE_STATUSES: readonly SampleStatus[] = ["pending", "completed", "truncated", "aborted", "failed"];

/**
 * A JSON-like value (what metadata and prompts are made of), with Python's number kinds: a plain integral number
 * is an int, any other plain number a float; {@link PyFloat} is an integral float (`1.0`), {@link PyBigInt} an int
 * past 2^53 (see `pyFloat` / `pyInt`).
 */
export type JsonValue = null | boolean | number | PyFloat | PyBigInt | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON-like object. */
export type JsonObject = { [key: string]: JsonValue };

/** Speculative-decoding counters accumulated over a sample's turns. */
export class SpecInfo {
  /** The declared field list (the bitwise comparator rejects any other own property). */
  static readonly FIELDS = ["spec_accept_token_num", "spec_draft_token_num", "spec_verify_ct", "completion_token_num"] as const;
  spec_accept_token_num = 0;
  spec_draft_token_num = 0;
  spec_verify_ct = 0;
  completion_token_num = 0;

  constructor(init: Partial<Pick<SpecInfo, (typeof SpecInfo.FIELDS)[number]>> = {}) {
    assignDeclared(this, SpecInfo.FIELDS, init, "SpecInfo");
  }

  /** Field-wise sum (used when merging turns). */
  add(other: SpecInfo): SpecInfo {
    return new SpecInfo({
      spec_accept_token_num: this.spec_accept_token_num + other.spec_accept_token_num,
      spec_draft_token_num: this.spec_draft_token_num + other.spec_draft_token_num,
      spec_verify_ct: this.spec_verify_ct + other.spec_verify_ct,
      completion_token_num: this.completion_token_num + other.completion_token_num,
    });
  }

  /** Plain-object form with the snake_case field names. */
  toDict(): Record<(typeof SpecInfo.FIELDS)[number], number> {
    return {
      spec_accept_token_num: this.spec_accept_token_num,
      spec_draft_token_num: this.spec_draft_token_num,
      spec_verify_ct: this.spec_verify_ct,
      completion_token_num: this.completion_token_num,
    };
  }

  /** Builds from a plain object; unknown keys and non-number values are refused by name (TypeError). */
  static fromDict(dict: unknown): SpecInfo {
    return new SpecInfo(checkNumberDict(dict, SpecInfo.FIELDS, "spec_info"));
  }
}

/** Prefix-cache accounting accumulated over a sample's turns. */
export class PrefixCacheInfo {
  /** The declared field list (the bitwise comparator rejects any other own property). */
  static readonly FIELDS = ["cached_tokens", "total_prompt_tokens"] as const;
  cached_tokens = 0;
  total_prompt_tokens = 0;

  constructor(init: Partial<Pick<PrefixCacheInfo, (typeof PrefixCacheInfo.FIELDS)[number]>> = {}) {
    assignDeclared(this, PrefixCacheInfo.FIELDS, init, "PrefixCacheInfo");
  }

  /** Field-wise sum (used when merging turns). */
  add(other: PrefixCacheInfo): PrefixCacheInfo {
    return new PrefixCacheInfo({
      cached_tokens: this.cached_tokens + other.cached_tokens,
      total_prompt_tokens: this.total_prompt_tokens + other.total_prompt_tokens,
    });
  }

  /** Plain-object form with the snake_case field names. */
  toDict(): Record<(typeof PrefixCacheInfo.FIELDS)[number], number> {
    return { cached_tokens: this.cached_tokens, total_prompt_tokens: this.total_prompt_tokens };
  }

  /** Builds from a plain object; unknown keys and non-number values are refused by name (TypeError). */
  static fromDict(dict: unknown): PrefixCacheInfo {
    return new PrefixCacheInfo(checkNumberDict(dict, PrefixCacheInfo.FIELDS, "prefix_cache_info"));
  }
}

/** The declared fields of {@link Sample}, in wire order. */
export const SAMPLE_FIELDS = [
  "group_index",
  "index",
  "rollout_id",
  "prompt",
  "tokens",
  "multimodal_inputs",
  "multimodal_train_inputs",
  "response",
  "response_length",
  "label",
  "reward",
  "loss_mask",
  "weight_versions",
  "rollout_log_probs",
  "rollout_routed_experts",
  "rollout_indexer_topk",
  "remove_sample",
  "teacher_log_probs",
  "opd_reverse_kl",
  "status",
  "metadata",
  "generate_function_path",
  "train_metadata",
  "adapter",
  "reward_spec",
  "routing_key",
  "non_generation_time",
  "spec_info",
  "prefix_cache_info",
] as const;

/** Name of one declared Sample field. */
export type SampleField = (typeof SAMPLE_FIELDS)[number];

/** Constructor input: any subset of the declared fields. */
export type SampleInit = Partial<{ [K in SampleField]: Sample[K] }>;

/** Plain-object form of a Sample (`toDict`), snake_case like the wire. Tensors stay {@link Tensor}s. */
export type SampleDict = {
  [K in SampleField]: K extends "spec_info"
    ? ReturnType<SpecInfo["toDict"]>
    : K extends "prefix_cache_info"
      ? ReturnType<PrefixCacheInfo["toDict"]>
      : Sample[K];
};

/** A decoder for token ids, needed to re-derive `response` text. */
export type DecodeFn = (ids: readonly number[]) => string;

/**
 * One training sample. The field list is fixed ({@link Sample.FIELDS}); the bitwise comparator
 * rejects any own property outside it.
 */
export class Sample {
  /** The declared field list, in wire order. */
  static readonly FIELDS = SAMPLE_FIELDS;

  group_index: number | null = null;
  index: number | null = null;
  rollout_id: number | null = null;
  prompt: string | JsonObject[] = "";
  tokens: number[] = [];
  multimodal_inputs: JsonObject | null = null;
  multimodal_train_inputs: JsonObject | null = null;
  response = "";
  response_length = 0;
  label: string | null = null;
  /** Python leaves the type open: the v2 default post-processor assigns whatever non-null reward the agent reported. */
  reward: JsonValue = null;
  loss_mask: number[] | null = null;
  weight_versions: string[] = [];
  rollout_log_probs: number[] | null = null;
  rollout_routed_experts: Tensor<"I32"> | null = null;
  rollout_indexer_topk: Tensor<"I32"> | null = null;
  remove_sample = false;
  teacher_log_probs: number[] | null = null;
  opd_reverse_kl: number[] | null = null;
  status: SampleStatus = "pending";
  metadata: JsonObject = {};
  generate_function_path: string | null = null;
  train_metadata: JsonObject | null = null;
  adapter: JsonObject | string | null = null;
  reward_spec: JsonObject | string | null = null;
  routing_key: string | null = null;
  non_generation_time = 0;
  spec_info: SpecInfo = new SpecInfo();
  prefix_cache_info: PrefixCacheInfo = new PrefixCacheInfo();

  constructor(init: SampleInit = {}) {
    assignDeclared(this, SAMPLE_FIELDS, init, "Sample");
  }

  /**
   * Checks the per-token invariants; throws an Error naming the first broken one.
   * `tokens.length >= response_length`; loss_mask, rollout_log_probs, teacher_log_probs and
   * opd_reverse_kl have `response_length` entries when present.
   */
  validate(): void {
    if (!Number.isInteger(this.response_length) || this.response_length < 0) {
      throw new Error(`Sample.validate: response_length must be a non-negative integer, got ${this.response_length}`);
    }
    if (this.tokens.length < this.response_length) {
      throw new Error(`Sample.validate: tokens has ${this.tokens.length} entries, fewer than response_length ${this.response_length}`);
    }
    for (const field of ["loss_mask", "rollout_log_probs", "teacher_log_probs", "opd_reverse_kl"] as const) {
      const value = this[field];
      if (value !== null && value.length !== this.response_length) {
        throw new Error(`Sample.validate: ${field} has ${value.length} entries, expected response_length ${this.response_length}`);
      }
    }
    if (!SAMPLE_STATUSES.includes(this.status)) {
      throw new Error(`Sample.validate: unknown status ${JSON.stringify(this.status)}`);
    }
    for (const field of ["rollout_routed_experts", "rollout_indexer_topk"] as const) {
      const tensor: unknown = this[field];
      if (tensor !== null && !(tensor instanceof Tensor && tensor.dtype === "I32")) {
        throw new Error(`Sample.validate: ${field} must be an I32 Tensor or null, got ${describeTensorLike(tensor)}`);
      }
    }
  }

  /**
   * Removes the last `n` output tokens from every per-token field (tokens, loss mask, log-probs,
   * teacher log-probs, reverse KL, replay tensors, `metadata.opd_student_top_logprobs` when it is a list)
   * and re-decodes `response` from the remaining output.
   */
  stripLastOutputTokens(n: number, decode: DecodeFn): void {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`stripLastOutputTokens: n must be a non-negative integer, got ${n}`);
    if (n === 0) return;
    if (n > this.response_length) {
      throw new RangeError(`stripLastOutputTokens: cannot strip ${n} tokens, only ${this.response_length} output tokens`);
    }
    this.tokens = this.tokens.slice(0, this.tokens.length - n);
    this.response_length -= n;
    if (this.loss_mask !== null) this.loss_mask = this.loss_mask.slice(0, -n);
    if (this.rollout_log_probs !== null) this.rollout_log_probs = this.rollout_log_probs.slice(0, -n);
    if (this.teacher_log_probs !== null) this.teacher_log_probs = this.teacher_log_probs.slice(0, -n);
    if (this.opd_reverse_kl !== null) this.opd_reverse_kl = this.opd_reverse_kl.slice(0, -n);
    const studentTop = this.metadata.opd_student_top_logprobs;
    if (Array.isArray(studentTop)) this.metadata = { ...this.metadata, opd_student_top_logprobs: studentTop.slice(0, -n) };
    if (this.rollout_routed_experts !== null) {
      this.rollout_routed_experts = this.rollout_routed_experts.sliceRows(this.rollout_routed_experts.shape[0] - n);
    }
    if (this.rollout_indexer_topk !== null) {
      this.rollout_indexer_topk = this.rollout_indexer_topk.sliceRows(this.rollout_indexer_topk.shape[0] - n);
    }
    this.response = this.response_length > 0 ? decode(this.tokens.slice(this.tokens.length - this.response_length)) : "";
  }

  /** Plain-object form with snake_case keys; nested SpecInfo/PrefixCacheInfo become plain objects. */
  toDict(): SampleDict {
    const out: Record<string, unknown> = {};
    for (const field of SAMPLE_FIELDS) {
      const value = this[field];
      out[field] = value instanceof SpecInfo || value instanceof PrefixCacheInfo ? value.toDict() : value;
    }
    return out as SampleDict;
  }

  /**
   * Builds a Sample from a plain object (the inverse of {@link Sample.toDict}) or from JSON text; missing keys take
   * their defaults. JSON text is read as Python's `json.loads` reads it, so `1.0` stays a float ({@link PyFloat}),
   * `1` an int and an integer past 2^53 exact ({@link PyBigInt}); the per-token arrays (`tokens`, `loss_mask`, the
   * log-prob lists) become plain number arrays, as their wire dtype fixes their kind. Unknown keys, an unknown
   * `status`, and replay tensors that are not I32 are refused by name. Replay tensors may be given as
   * {@link Tensor}s or as plain `{dtype, shape, data}` objects.
   * @throws TypeError for JSON text Python would reject, naming the position
   */
  static fromDict(dict: Record<string, unknown> | string): Sample {
    if (typeof dict === "string") dict = parseSampleJson(dict);
    if (dict === null || typeof dict !== "object" || Array.isArray(dict)) throw new TypeError("Sample.fromDict: expected an object");
    const init: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(dict)) {
      if (!(SAMPLE_FIELDS as readonly string[]).includes(key)) throw new TypeError(`Sample.fromDict: unknown field ${JSON.stringify(key)}`);
      if (value === undefined) continue;
      if (key === "spec_info") init[key] = value instanceof SpecInfo ? value : SpecInfo.fromDict(value);
      else if (key === "prefix_cache_info") init[key] = value instanceof PrefixCacheInfo ? value : PrefixCacheInfo.fromDict(value);
      else if (key === "status") init[key] = checkStatus(value);
      else if (key === "rollout_routed_experts" || key === "rollout_indexer_topk") init[key] = toI32Tensor(value, key);
      else init[key] = value;
    }
    return new Sample(init);
  }
}

/** Per-token fields: number arrays on the wire (I64, U8, F64 tensors), whose dtype rather than the spelling is the kind. */
const NUMBER_ARRAY_FIELDS: ReadonlySet<string> = new Set(["tokens", "loss_mask", "rollout_log_probs", "teacher_log_probs", "opd_reverse_kl"]);

function parseSampleJson(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = parsePyJson(text);
  } catch (error) {
    throw new TypeError(`Sample.fromDict: the JSON text is not JSON Python reads (${(error as Error).message})`, { cause: error });
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed) || parsed instanceof PyFloat || parsed instanceof PyBigInt) {
    throw new TypeError("Sample.fromDict: the JSON text must hold an object");
  }
  const dict = parsed as Record<string, unknown>;
  for (const field of NUMBER_ARRAY_FIELDS) if (Array.isArray(dict[field])) dict[field] = toPlainJs(dict[field]);
  for (const field of ["spec_info", "prefix_cache_info"]) if (dict[field] !== null && typeof dict[field] === "object") dict[field] = toPlainJs(dict[field]);
  return dict;
}

/** Each declared field list as a set, built on first use (a constructor checks every key it is given). */
const DECLARED_SETS = new Map<readonly string[], ReadonlySet<string>>();

function assignDeclared(target: object, fields: readonly string[], init: object, className: string): void {
  const entries = Object.entries(init);
  if (entries.length === 0) return;
  let declared = DECLARED_SETS.get(fields);
  if (declared === undefined) {
    declared = new Set(fields);
    DECLARED_SETS.set(fields, declared);
  }
  for (const [key, value] of entries) {
    if (!declared.has(key)) throw new TypeError(`${className}: unknown field ${JSON.stringify(key)}`);
    if (value !== undefined) (target as Record<string, unknown>)[key] = value;
  }
}

function checkNumberDict<F extends string>(dict: unknown, fields: readonly F[], name: string): Partial<Record<F, number>> {
  if (dict === null || typeof dict !== "object" || Array.isArray(dict)) throw new TypeError(`${name}: expected an object`);
  const out: Partial<Record<F, number>> = {};
  for (const [key, value] of Object.entries(dict)) {
    if (!(fields as readonly string[]).includes(key)) throw new TypeError(`${name}: unknown field ${JSON.stringify(key)}`);
    if (typeof value !== "number") throw new TypeError(`${name}.${key}: expected a number, got ${typeof value}`);
    out[key as F] = value;
  }
  return out;
}

function checkStatus(value: unknown): SampleStatus {
  if (!SAMPLE_STATUSES.includes(value as SampleStatus)) {
    throw new TypeError(`Sample.fromDict: status must be one of ${SAMPLE_STATUSES.join(", ")}, got ${JSON.stringify(value)}`);
  }
  return value as SampleStatus;
}

function toI32Tensor(value: unknown, field: string): Tensor<"I32"> | null {
  if (value === null) return null;
  const tensor =
    value instanceof Tensor
      ? value
      : typeof value === "object" && "dtype" in value && "shape" in value && "data" in value
        ? new Tensor(value.dtype as Dtype, value.shape as number[], value.data as TensorData)
        : null;
  if (tensor === null || tensor.dtype !== "I32") {
    throw new TypeError(`Sample.fromDict: ${field} must be an I32 Tensor, a {dtype, shape, data} object or null, got ${describeTensorLike(value)}`);
  }
  return tensor as Tensor<"I32">;
}

function describeTensorLike(value: unknown): string {
  if (value instanceof Tensor) return `a ${value.dtype} Tensor`;
  if (value === null || typeof value !== "object") return String(value);
  const dtype = (value as { dtype?: unknown }).dtype;
  return dtype === undefined ? Object.prototype.toString.call(value) : `an object with dtype ${JSON.stringify(dtype)}`;
}
