// The per-token arrays of a reply (`logprobs.content`, `meta_info.output_token_logprobs`) written as JSON text from
// pieces cached per token id and position, so a reply builds no per-token objects for the JSON writer to walk.
import type { Tokenizer } from "../tokenizer/types";

/** A token's decoded text and UTF-8 bytes, plus the JSON of its `logprobs.content` entry around the log-prob. */
interface TokenText {
  token: string;
  bytes: readonly number[];
  /** `{"token":…,"token_id":…,"logprob":` */
  entryHead: string;
  /** `,"bytes":[…],"top_logprobs":[]}` */
  entryTail: string;
}

/** Per tokenizer, the decoded text of each token id seen so far (token texts never change). */
const tokenTexts = new WeakMap<Tokenizer, Map<number, TokenText>>();

/** The memo `memos` keeps for `tokenizer`, made empty on first use (the mock's caches are all per tokenizer). */
export function tokenizerMemo<K, V>(memos: WeakMap<Tokenizer, Map<K, V>>, tokenizer: Tokenizer): Map<K, V> {
  let memo = memos.get(tokenizer);
  if (memo === undefined) {
    memo = new Map();
    memos.set(tokenizer, memo);
  }
  return memo;
}

/**
 * A number as the mock's reply writer spells it (`stringifyReplyJson`): JSON.stringify's text, except that a
 * negative zero is `-0.0`.
 */
export function numberJson(value: number): string {
  return value === 0 && 1 / value < 0 ? "-0.0" : JSON.stringify(value);
}

/** The text and bytes of token `id` (decoded once per tokenizer and id, special tokens kept). */
export function tokenText(tokenizer: Tokenizer, id: number): TokenText {
  const byId = tokenizerMemo(tokenTexts, tokenizer);
  let text = byId.get(id);
  if (text === undefined) {
    const token = tokenizer.decode([id], { skipSpecialTokens: false });
    const bytes = [...Buffer.from(token, "utf8")];
    text = {
      token,
      bytes,
      entryHead: `{"token":${JSON.stringify(token)},"token_id":${numberJson(id)},"logprob":`,
      entryTail: `,"bytes":[${bytes.join(",")}],"top_logprobs":[]}`,
    };
    byId.set(id, text);
  }
  return text;
}

/** Most positions whose default log-prob text is kept (a longer completion spells the rest each time). */
const RAMP_TEXT_LIMIT = 1 << 14;
const rampTexts: string[] = [];

/** The JSON of the default log-prob at `position`, `-position / 128` (position 0 gives `-0.0`). */
function rampLogprobJson(position: number): string {
  if (position >= RAMP_TEXT_LIMIT) return numberJson(-position / 128);
  for (let p = rampTexts.length; p <= position; p++) rampTexts.push(numberJson(-p / 128));
  return rampTexts[position];
}

/** The log-probs of a completion: explicit values, or the default ramp `-position / 128` (values still given). */
export interface CompletionLogprobs {
  values: readonly number[];
  /** True when `values[p]` is `-p / 128` for every position (its text is then taken from a cache). */
  ramp: boolean;
}

function logprobJson(logprobs: CompletionLogprobs, position: number): string {
  return logprobs.ramp ? rampLogprobJson(position) : numberJson(logprobs.values[position]);
}

/**
 * Appends to `parts` the pieces of `stringifyReplyJson` of the `logprobs.content` array
 * `[{token, token_id, logprob, bytes, top_logprobs: []}, ...]` of these ids and log-probs.
 */
export function pushContentArrayJson(parts: string[], tokenizer: Tokenizer, ids: readonly number[], logprobs: CompletionLogprobs): void {
  parts.push("[");
  for (let p = 0; p < ids.length; p++) {
    const text = tokenText(tokenizer, ids[p]);
    if (p > 0) parts.push(",");
    parts.push(text.entryHead, logprobJson(logprobs, p), text.entryTail);
  }
  parts.push("]");
}

/** Appends to `parts` the pieces of `stringifyReplyJson` of the `output_token_logprobs` array `[[logprob, token_id], ...]`. */
export function pushPairsArrayJson(parts: string[], ids: readonly number[], logprobs: CompletionLogprobs): void {
  parts.push("[");
  for (let p = 0; p < ids.length; p++) parts.push(p === 0 ? "[" : ",[", logprobJson(logprobs, p), ",", idJson(ids[p]), "]");
  parts.push("]");
}

/** Most token ids whose JSON text is kept. */
const ID_TEXT_LIMIT = 1 << 20;
const idTexts: string[] = [];

/** {@link numberJson} of a token id, cached for the non-negative integer ids of a vocabulary. */
function idJson(id: number): string {
  if (!(Number.isInteger(id) && id >= 0 && id < ID_TEXT_LIMIT) || Object.is(id, -0)) return numberJson(id);
  return (idTexts[id] ??= numberJson(id));
}
