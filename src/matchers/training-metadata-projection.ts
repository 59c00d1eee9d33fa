// The metadata projection used for v1/v2 training-payload parity: hides server-only keys and runtime clock readings.
// Clock readings must still be finite numbers; anything else makes the projection throw (and the comparison fail).
import type { JsonObject, JsonValue } from "../wire/sample";
import { PyBigInt, PyFloat, pyNumberValue, pyRepr } from "../wire/py-json";
import { isJsonObject } from "../wire/wire-json";

/** Metadata keys that only one server version writes, dropped before comparing. */
const SERVER_ONLY_METADATA_KEYS: readonly string[] = ["leaf", "max_trim_tokens"];

/** Lifecycle keys holding wall-clock readings, replaced by {@link RUNTIME_PLACEHOLDER} when set. */
const RUNTIME_LIFECYCLE_KEYS: readonly string[] = ["t0", "t1", "req_ts", "prev_t1"];

/** What a non-null runtime lifecycle time becomes after projection. */
export const RUNTIME_PLACEHOLDER = "<runtime>";

/**
 * Projects Sample metadata onto its training-relevant part: drops `leaf` and `max_trim_tokens`; in
 * `lifecycle` (one segment object or a list of them, shape kept) replaces each non-null `t0`, `t1`,
 * `req_ts`, `prev_t1` by `"<runtime>"` after checking it is a finite number. Returns a new object; the
 * input is not modified. Throws a TypeError naming the key when a time is not a finite number.
 */
export function trainingMetadataProjection(metadata: JsonObject): JsonObject {
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) {
    throw new TypeError(`trainingMetadataProjection: metadata must be an object, got ${describe(metadata)}`);
  }
  const projected: JsonObject = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (SERVER_ONLY_METADATA_KEYS.includes(key)) continue;
    projected[key] = key === "lifecycle" ? projectLifecycle(value) : value;
  }
  return projected;
}

function projectLifecycle(lifecycle: JsonValue): JsonValue {
  if (lifecycle === null || lifecycle === undefined) return lifecycle;
  if (Array.isArray(lifecycle)) return lifecycle.map((segment, i) => projectSegment(segment, `lifecycle[${i}]`));
  return projectSegment(lifecycle, "lifecycle");
}

function projectSegment(segment: JsonValue, where: string): JsonObject {
  if (!isJsonObject(segment)) {
    throw new TypeError(`trainingMetadataProjection: ${where} must be an object, got ${describe(segment)}`);
  }
  const projected: JsonObject = { ...segment };
  for (const key of RUNTIME_LIFECYCLE_KEYS) {
    if (!Object.prototype.hasOwnProperty.call(segment, key)) continue;
    const time = segment[key];
    if (time === null) continue;
    const seconds = pyNumberValue(time);
    if (seconds === undefined || !Number.isFinite(seconds)) {
      throw new TypeError(`trainingMetadataProjection: ${where}.${key} must be a finite number or null, got ${describe(time)}`);
    }
    projected[key] = RUNTIME_PLACEHOLDER;
  }
  return projected;
}

function describe(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (value instanceof PyFloat || value instanceof PyBigInt) return pyRepr(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return "an array";
  return value === null ? "null" : typeof value;
}
