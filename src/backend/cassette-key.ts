// What decides a generation reply, reduced to one cassette key: the route, the prompt's input ids and the sampling
// fields of the body (pure). Also finds, for an unrecorded request, the recorded request nearest to it.
import { createHash } from "node:crypto";

/**
 * Body fields that never change what the engine generates, left out of the key: the model's name (one engine serves
 * one model), the caller's `user` and `rid` labels. `messages` is left out too when `input_ids` carries the prompt.
 */
const UNKEYED_FIELDS: ReadonlySet<string> = new Set(["model", "user", "rid"]);

/** The part of a generation request a cassette keys on. */
export interface CassetteRequest {
  /** The route, `/v1/chat/completions` or `/generate`. */
  readonly path: string;
  /** The body without its unkeyed fields, every object's keys sorted (the prompt ids included). */
  readonly keyed: Readonly<Record<string, unknown>>;
}

/** A request and its key. */
export interface KeyedRequest extends CassetteRequest {
  /** `sha256(path + "\n" + canonical keyed body)`, 64 hex digits. */
  readonly key: string;
  /** The canonical JSON of `keyed` (what the cassette line stores as `request`). */
  readonly canonical: string;
}

/** The keyed part of a parsed request body. */
function keyedBody(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const promptIds = Array.isArray(body["input_ids"]);
  const keyed: Record<string, unknown> = {};
  for (const name of Object.keys(body).sort()) {
    if (UNKEYED_FIELDS.has(name) || (promptIds && name === "messages")) continue;
    keyed[name] = sortedKeys(body[name]);
  }
  return keyed;
}

/** A JSON value with every object's keys in sorted order (arrays keep theirs). */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.every((item) => item === null || typeof item !== "object") ? value : value.map(sortedKeys);
  if (value === null || typeof value !== "object") return value;
  const sorted: Record<string, unknown> = {};
  for (const name of Object.keys(value).sort()) sorted[name] = sortedKeys((value as Record<string, unknown>)[name]);
  return sorted;
}

/** The key of a keyed request whose canonical text is known. */
function cassetteKeyOf(path: string, canonical: string): string {
  return createHash("sha256").update(path).update("\n").update(canonical).digest("hex");
}

/** Keys a parsed generation request body sent to `path`. */
export function keyRequest(path: string, body: Readonly<Record<string, unknown>>): KeyedRequest {
  const keyed = keyedBody(body);
  const canonical = JSON.stringify(keyed);
  return { path, keyed, canonical, key: cassetteKeyOf(path, canonical) };
}

/** A short description of a request for error texts: route, prompt size, the sampling fields. */
export function describeRequest(request: CassetteRequest): string {
  const ids = request.keyed["input_ids"];
  const prompt = Array.isArray(ids) ? `${ids.length} input ids` : "a prompt without input_ids";
  const params = Object.keys(request.keyed)
    .filter((name) => !["input_ids", "messages", "tools", "text"].includes(name))
    .map((name) => `${name}=${JSON.stringify(request.keyed[name])}`)
    .join(", ");
  return `POST ${request.path} with ${prompt}${params === "" ? "" : ` (${params})`}`;
}

/** How close a recorded request is to a missing one. */
export interface Nearness {
  /** Same route. */
  readonly samePath: boolean;
  /** Length of the common prefix of the two prompts (input ids, else the canonical texts' characters). */
  readonly commonPrefix: number;
}

/** The common prefix of two requests' prompts: their input ids when both have them, else their canonical texts. */
export function nearness(missing: KeyedRequest, recorded: KeyedRequest): Nearness {
  const a = missing.keyed["input_ids"];
  const b = recorded.keyed["input_ids"];
  let common = 0;
  if (Array.isArray(a) && Array.isArray(b)) {
    while (common < a.length && common < b.length && a[common] === b[common]) common++;
  } else {
    const x = missing.canonical;
    const y = recorded.canonical;
    while (common < x.length && common < y.length && x.charCodeAt(common) === y.charCodeAt(common)) common++;
  }
  return { samePath: missing.path === recorded.path, commonPrefix: common };
}

/** True when `a` is nearer than `b` (same route first, then the longer common prefix). */
export function nearer(a: Nearness, b: Nearness): boolean {
  if (a.samePath !== b.samePath) return a.samePath;
  return a.commonPrefix > b.commonPrefix;
}

/** Where a recorded request departs from a missing one, in words. */
export function describeDeparture(missing: KeyedRequest, recorded: KeyedRequest, near: Nearness): string {
  if (!near.samePath) return `it was sent to ${recorded.path}`;
  const a = missing.keyed["input_ids"];
  const b = recorded.keyed["input_ids"];
  if (Array.isArray(a) && Array.isArray(b)) {
    const k = near.commonPrefix;
    if (k < a.length || k < b.length) {
      const at = (ids: unknown[]): string => (k < ids.length ? String(ids[k]) : "nothing (its prompt ends there)");
      return `it shares the first ${k} of the request's ${a.length} input ids (recorded prompt: ${b.length}); at index ${k} the request has ${at(a)}, the recording ${at(b)}`;
    }
  }
  const fields = new Set([...Object.keys(missing.keyed), ...Object.keys(recorded.keyed)]);
  const differing = [...fields]
    .filter((name) => JSON.stringify(missing.keyed[name]) !== JSON.stringify(recorded.keyed[name]))
    .map((name) => `${name}: ${shortJson(missing.keyed[name])} (request) vs ${shortJson(recorded.keyed[name])} (recorded)`);
  return `same prompt, but ${differing.join("; ")}`;
}

function shortJson(value: unknown): string {
  if (value === undefined) return "absent";
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
