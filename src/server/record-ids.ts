// A stored record's `input_ids` read from the session's shared token runs instead of an array of its own: the record
// still shows (and writes) the same list, made when read, while the session keeps each id once (see token-run.ts).
import { TokenRun } from "./token-run";
import type { SessionRecord } from "./types";

/** The run each shared record reads its prompt ids from. */
const sharedRuns = new WeakMap<SessionRecord, TokenRun>();

/**
 * Makes `record.request.input_ids` read from `run` (the same ids, checked id by id) instead of the array it holds, so
 * that array can go. The key keeps its place among the request's keys; every read gets a fresh, equal array.
 * Returns false (and changes nothing) when the record holds no such array or its ids are not `run`'s.
 */
export function shareRecordIds(record: SessionRecord, run: TokenRun): boolean {
  const request = record.request;
  const descriptor = Object.getOwnPropertyDescriptor(request, "input_ids");
  if (descriptor === undefined || !("value" in descriptor) || !Array.isArray(descriptor.value)) return sharedRuns.get(record) === run;
  const ids = descriptor.value as unknown[];
  if (ids.length !== run.length || run.commonPrefixLength(ids as number[]) !== ids.length) return false;
  Object.defineProperty(request, "input_ids", { get: () => run.toArray(), enumerable: true, configurable: true });
  sharedRuns.set(record, run);
  return true;
}

/** The run a shared record reads its prompt ids from, or undefined when it holds its own array. */
export function sharedRecordRun(record: SessionRecord): TokenRun | undefined {
  return sharedRuns.get(record);
}

/** The number of prompt ids a record holds, without making its list (undefined when it holds no list). */
export function recordPromptLength(record: SessionRecord): number | undefined {
  const run = sharedRuns.get(record);
  if (run !== undefined) return run.length;
  const ids = (record.request as { input_ids?: unknown } | undefined)?.input_ids;
  return Array.isArray(ids) ? ids.length : undefined;
}
