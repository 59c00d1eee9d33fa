// Decoded texts kept by their ids' content for one samples op: the leaves of a v2 tree decode the same outputs and
// observations more than once (a retry re-sends the request and often gets the same completion back).

import type { DecodeFn } from "../../wire/sample";

/** Lists longer than this are decoded every time (hashing and comparing them would cost what decoding saves). */
const MAX_KEPT_IDS = 4096;

/**
 * `decode` (a pure function of the ids' values, as a tokenizer's decode is) answering an id list equal to one it
 * decoded before with the text it returned then. Lists are told apart by content (a hash, then every id compared), and
 * kept as given: the caller must not change a list after handing it over (the assembly never does).
 */
export function decodeByContent(decode: DecodeFn): DecodeFn {
  const byHash = new Map<number, Array<{ ids: readonly number[]; text: string }>>();
  return (ids) => {
    if (ids.length > MAX_KEPT_IDS) return decode(ids);
    const hash = idsHash(ids);
    const bucket = byHash.get(hash);
    if (bucket !== undefined) {
      for (const entry of bucket) if (sameIds(entry.ids, ids)) return entry.text;
    }
    const text = decode(ids);
    if (bucket === undefined) byHash.set(hash, [{ ids, text }]);
    else bucket.push({ ids, text });
    return text;
  };
}

/** FNV-1a over the ids (as int32) and the length. */
export function idsHash(ids: readonly number[]): number {
  let hash = 0x811c9dc5 ^ ids.length;
  for (let i = 0; i < ids.length; i++) hash = Math.imul(hash ^ (ids[i] | 0), 0x01000193);
  return hash;
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}
