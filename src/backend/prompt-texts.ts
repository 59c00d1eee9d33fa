// The prompt text of `input_ids`, decoded once per distinct id sequence among the recent ones: a parity run's
// trajectories of one scripted agent send the same prompts again and again, and decoding is deterministic.

/** Most id sequences remembered per tokenizer; the memo is emptied when it would grow past this. */
const PROMPT_MEMO_LIMIT = 512;

interface DecodedPrompt {
  /** A copy of the ids (the request's own array belongs to the request). */
  ids: readonly number[];
  text: string;
}

/** What a memo needs of a tokenizer. */
interface PromptDecoder {
  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean }): string;
}

/** Per tokenizer, recent decodes by a hash of their ids (a colliding sequence replaces the entry). */
const memos = new WeakMap<PromptDecoder, Map<number, DecodedPrompt>>();

/** FNV-1a over the ids (each mixed in as its low and high 32 bits, so large integers spread too). */
function hashIds(ids: readonly number[]): number {
  let hash = 0x811c9dc5 ^ ids.length;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    hash = Math.imul(hash ^ (id | 0), 0x01000193);
    hash = Math.imul(hash ^ ((id / 0x100000000) | 0), 0x01000193);
  }
  return hash >>> 0;
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

/** `tokenizer.decode(ids, { skipSpecialTokens: false })`, taken from the memo when these exact ids were decoded recently. */
export function decodePromptIds(tokenizer: PromptDecoder, ids: readonly number[]): string {
  let memo = memos.get(tokenizer);
  if (memo === undefined) {
    memo = new Map();
    memos.set(tokenizer, memo);
  }
  const hash = hashIds(ids);
  const kept = memo.get(hash);
  if (kept !== undefined && sameIds(kept.ids, ids)) return kept.text;
  const text = tokenizer.decode(ids, { skipSpecialTokens: false });
  if (memo.size >= PROMPT_MEMO_LIMIT) memo.clear();
  memo.set(hash, { ids: [...ids], text });
  return text;
}
