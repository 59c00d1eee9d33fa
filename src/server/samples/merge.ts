// Folds per-turn samples into one trajectory sample: observations between turns get zero loss and log-prob.
// Pure and deterministic; any broken invariant is a SampleAssemblyError (422 at the HTTP edge).
import { pyRepr, pyStr } from "../../wire/py-json";
import { DecodeFn, JsonObject, JsonValue, Sample, SampleField } from "../../wire/sample";
import { PY_KEY_ORDER, PyBigInt, PyFloat, rememberKeyOrder } from "../../wire/py-json-values";
import { jsonEqual } from "../json-equal";
import { SampleAssemblyError } from "./assembly-error";

/**
 * Deep copy of JSON-like data built in this realm. (structuredClone hands back objects of another realm
 * under Jest's vm sandbox, which the wire encoder and the bitwise matchers then reject as non-plain.)
 */
export function cloneJson<T>(value: T): T {
  if (value === null || typeof value !== "object" || value instanceof PyFloat || value instanceof PyBigInt) return value;
  if (Array.isArray(value)) return value.map((item: unknown) => cloneJson(item)) as T;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = cloneJson((value as Record<string, unknown>)[key]);
    // plain assignment keeps the copy a fast object; only `__proto__` needs a definition to stay a data key
    if (key === "__proto__") Object.defineProperty(copy, key, { value: item, writable: true, enumerable: true, configurable: true });
    else copy[key] = item;
  }
  const order = (value as { [PY_KEY_ORDER]?: readonly string[] })[PY_KEY_ORDER];
  if (order !== undefined)
    rememberKeyOrder(
      copy,
      order.filter((key) => Object.prototype.hasOwnProperty.call(copy, key)),
    );
  return copy as T;
}

/** Fields that must be equal on both sides of a merge. */
const EQUAL_FIELDS: readonly SampleField[] = [
  "group_index",
  "index",
  "rollout_id",
  "multimodal_inputs",
  "multimodal_train_inputs",
  "label",
  "reward",
  "remove_sample",
  "generate_function_path",
  "train_metadata",
  "adapter",
  "reward_spec",
  "routing_key",
  "non_generation_time",
];

const REPLAY_FIELDS = ["rollout_routed_experts", "rollout_indexer_topk"] as const;

function startsWith(long: readonly number[], short: readonly number[]): boolean {
  if (long.length < short.length) return false;
  for (let i = 0; i < short.length; i += 1) if (long[i] !== short[i]) return false;
  return true;
}

function promptStartsWith(long: Sample["prompt"], short: Sample["prompt"]): boolean {
  if (typeof long === "string" && typeof short === "string") return long.startsWith(short);
  if (Array.isArray(long) && Array.isArray(short)) return long.length >= short.length && short.every((m, i) => jsonEqual(m, long[i]));
  throw new SampleAssemblyError("cannot compare prompts of different kinds (string vs message list)");
}

function splitMetadata(metadata: JsonObject): { rest: JsonObject; lifecycle: JsonValue[]; messages: JsonValue | undefined } {
  const rest: JsonObject = {};
  let lifecycle: JsonValue[] = [];
  let messages: JsonValue | undefined;
  for (const [key, value] of Object.entries(metadata)) {
    if (key === "lifecycle") lifecycle = Array.isArray(value) ? value : [value];
    else if (key === "messages") messages = value;
    else rest[key] = value;
  }
  return { rest, lifecycle, messages };
}

function mergeMetadata(a: JsonObject, b: JsonObject): JsonObject {
  const left = splitMetadata(a);
  const right = splitMetadata(b);
  if (!jsonEqual(left.rest, right.rest)) {
    throw new SampleAssemblyError(`metadata mismatch: a.metadata=${pyRepr(a)}, b.metadata=${pyRepr(b)}`);
  }
  const merged: JsonObject = cloneJson(left.rest);
  const lifecycle = [...left.lifecycle, ...right.lifecycle];
  if (lifecycle.length > 0) merged.lifecycle = cloneJson(lifecycle);
  const messages = right.messages !== undefined && right.messages !== null ? right.messages : left.messages;
  if (messages !== undefined) merged.messages = cloneJson(messages);
  return merged;
}

function optionalPerToken(a: number[] | null, b: number[] | null, aLen: number, bLen: number, obsLen: number): number[] | null {
  if (a === null && b === null) return null;
  return [...(a ?? new Array<number>(aLen).fill(0)), ...new Array<number>(obsLen).fill(0), ...(b ?? new Array<number>(bLen).fill(0))];
}

/** Merges two consecutive turns `a` then `b` (b's tokens extend a's). Inputs are not modified. */
export function mergeSamplePair(a: Sample, b: Sample, decode: DecodeFn): Sample {
  const check = (condition: boolean, message: string): void => {
    if (!condition) throw new SampleAssemblyError(message);
  };
  try {
    a.validate();
    b.validate();
  } catch (error) {
    throw new SampleAssemblyError((error as Error).message);
  }
  const obsLen = b.tokens.length - a.tokens.length - b.response_length;
  check(promptStartsWith(b.prompt, a.prompt), "b.prompt must start with a.prompt");
  check(startsWith(b.tokens, a.tokens), "b.tokens must start with a.tokens");
  check(obsLen > 0, `obs_len must be > 0, got ${obsLen}`);
  for (const field of REPLAY_FIELDS) {
    const left = a[field];
    const right = b[field];
    if (left !== null) {
      check(right !== null, `cannot merge: a has ${field} but b does not`);
      check(left.shape[0] <= right!.shape[0], `cannot merge: a.${field} has more rows than b.${field}`);
    }
  }
  check(a.status === "completed", `a.status must be completed, got ${a.status}`);
  for (const field of EQUAL_FIELDS) {
    check(jsonEqual(a[field], b[field]), `${field} mismatch: a.${field}=${pyStr(a[field])}, b.${field}=${pyStr(b[field])}`);
  }
  const aMask = a.loss_mask ?? new Array<number>(a.response_length).fill(1);
  const bMask = b.loss_mask ?? new Array<number>(b.response_length).fill(1);
  const aLogp = a.rollout_log_probs ?? new Array<number>(a.response_length).fill(0);
  const bLogp = b.rollout_log_probs ?? new Array<number>(b.response_length).fill(0);
  const zeros = new Array<number>(obsLen).fill(0);
  const obsText = decode(b.tokens.slice(a.tokens.length, a.tokens.length + obsLen));
  return new Sample({
    group_index: a.group_index,
    index: a.index,
    rollout_id: a.rollout_id,
    prompt: cloneJson(b.prompt),
    tokens: [...b.tokens],
    multimodal_inputs: cloneJson(a.multimodal_inputs),
    multimodal_train_inputs: cloneJson(a.multimodal_train_inputs),
    response: a.response + obsText + b.response,
    response_length: a.response_length + obsLen + b.response_length,
    label: a.label,
    reward: cloneJson(a.reward),
    loss_mask: [...aMask, ...zeros, ...bMask],
    weight_versions: [...a.weight_versions, ...b.weight_versions],
    rollout_log_probs: [...aLogp, ...zeros, ...bLogp],
    rollout_routed_experts: b.rollout_routed_experts,
    rollout_indexer_topk: b.rollout_indexer_topk,
    remove_sample: a.remove_sample,
    teacher_log_probs: optionalPerToken(a.teacher_log_probs, b.teacher_log_probs, a.response_length, b.response_length, obsLen),
    opd_reverse_kl: optionalPerToken(a.opd_reverse_kl, b.opd_reverse_kl, a.response_length, b.response_length, obsLen),
    status: b.status,
    metadata: mergeMetadata(a.metadata, b.metadata),
    generate_function_path: a.generate_function_path,
    train_metadata: cloneJson(a.train_metadata),
    adapter: cloneJson(a.adapter),
    reward_spec: cloneJson(a.reward_spec),
    routing_key: a.routing_key,
    non_generation_time: a.non_generation_time,
    spec_info: a.spec_info.add(b.spec_info),
    prefix_cache_info: a.prefix_cache_info.add(b.prefix_cache_info),
  });
}

/**
 * Left fold of {@link mergeSamplePair} over the turns; stops (keeping the accumulator) at the first turn after
 * a non-completed accumulator, or where the next turn would drop a replay tensor the accumulator carries.
 */
export function mergeTurnSamples(samples: readonly Sample[], decode: DecodeFn): Sample {
  if (samples.length === 0) throw new SampleAssemblyError("no turn samples to merge");
  let acc = samples[0];
  for (const next of samples.slice(1)) {
    if (foldStopsBefore(acc, next)) break;
    acc = mergeSamplePair(acc, next, decode);
  }
  return acc;
}

/**
 * Where {@link mergeTurnSamples} stops folding: before `next` when the accumulator is not completed, or when
 * `next` would drop a replay tensor the accumulator carries.
 */
function foldStopsBefore(acc: Sample, next: Sample): boolean {
  return acc.status !== "completed" || REPLAY_FIELDS.some((field) => acc[field] !== null && next[field] === null);
}
