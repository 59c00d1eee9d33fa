// The prompt text of `input_ids`, decoded once per distinct id sequence among the recent ones: a parity run's
// trajectories of one scripted agent send the same prompts again and again, and decoding is deterministic.

/** Most id sequences remembered per tokenizer; the memo is emptied when it would grow past this. */
const PROMPT_MEMO_LIMIT = 512;
/** Most ids kept over all remembered sequences (about 8 MB of copies and texts); past it the memo is emptied. */
const PROMPT_MEMO_MAX_IDS = 1 << 20;
/** Longer sequences are decoded every time (one of them would crowd out the rest). */
const PROMPT_MEMO_MAX_LENGTH = 1 << 15;

interface DecodedPrompt {
  /** A copy of the ids (the request's own array belongs to the request). */
  ids: readonly number[];
  text: string;
}

/** What a memo needs of a tokenizer. */
interface PromptDecoder {
  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean }): string;
}

/** Recent decodes by a hash of their ids (a colliding sequence replaces the entry), and how many ids they keep. */
interface PromptMemo {
  entries: Map<number, DecodedPrompt>;
  ids: number;
}

/** Per tokenizer, its memo. */
const memos = new WeakMap<PromptDecoder, PromptMemo>();

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
  if (ids.length > PROMPT_MEMO_MAX_LENGTH) return tokenizer.decode([...ids], { skipSpecialTokens: false });
  let memo = memos.get(tokenizer);
  if (memo === undefined) {
    memo = { entries: new Map(), ids: 0 };
    memos.set(tokenizer, memo);
  }
  const hash = hashIds(ids);
  const kept = memo.entries.get(hash);
  if (kept !== undefined && sameIds(kept.ids, ids)) return kept.text;
  // the decoder gets its own copy: `ids` may be a kept request body that nothing may change
  const text = tokenizer.decode([...ids], { skipSpecialTokens: false });
  if (memo.entries.size >= PROMPT_MEMO_LIMIT || memo.ids + ids.length > PROMPT_MEMO_MAX_IDS) {
    memo.entries.clear();
    memo.ids = 0;
  }
  const replaced = memo.entries.get(hash);
  if (replaced !== undefined) memo.ids -= replaced.ids.length;
  memo.entries.set(hash, { ids: [...ids], text });
  memo.ids += ids.length;
  return text;
}
