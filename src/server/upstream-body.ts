// The bytes of a chat turn's upstream body (Python's `json.dumps(body)`), built without spelling again the prompt ids
// a stored turn already sent: a turn's prompt extends the one it attaches to, so those bytes are copied, the new ids spelled.
import { dumpsPy, PY_DEFAULT_JSON, SpelledPyJson } from "../wire/py-json";

/**
 * One upstream body as sent, as a record keeps it: its text (ASCII: the default spelling escapes every other character;
 * kept on the heap, where the session budget counts it) and, when known, where its `input_ids` list lies in it, so a
 * later turn whose prompt extends these ids copies their text.
 */
export class SentBody {
  constructor(
    /** `dumpsPy(body, PY_DEFAULT_JSON)`. */
    readonly text: string,
    /** The `input_ids` the body holds (the record's own array, never changed afterwards). */
    readonly ids: readonly number[],
    /** Offset of the list's `[` in `text`, or -1 when the body was spelled whole (its ids then serve no later turn). */
    readonly idsStart: number,
    /** Offset of the list's `]` in `text` (-1 with `idsStart`). */
    readonly idsEnd: number,
  ) {}
}

/** A body to send: its bytes (for this call only: off the heap, and the budget does not count them) and its text. */
export interface SpelledBody {
  /** `Buffer.from(sent.text)`. */
  readonly bytes: Buffer;
  /** The text and its id list's place, for the record. */
  readonly sent: SentBody;
}

/**
 * Stands in for the id list while the rest of the body is spelled: the writer copies a {@link SpelledPyJson}'s text as
 * it is, and a raw control character never occurs in a JSON text (every string escapes it), so it marks one place.
 */
const IDS_MARK = "\u0001";

/**
 * `Buffer.from(dumpsPy(body, PY_DEFAULT_JSON))` for a chat body whose `input_ids` were just set, the same bytes (and
 * their text). When
 * `base` (a body sent before) holds ids that are a prefix of these, its bytes of them are copied and only the ids after
 * them are spelled; the prefix is checked id by id, so any base is safe, and one that does not fit is not used.
 * Falls back to spelling the whole body when `input_ids` is not a list of int32s or the mark does not turn up once.
 */
export function spellUpstreamBody(body: Record<string, unknown>, base: SentBody | undefined): SpelledBody {
  const ids = body.input_ids;
  if (!Array.isArray(ids)) return spelledWhole(body, ids);
  // a base's ids are int32s (it was spelled here): only the ids after the ones it holds need the check
  const reused = base !== undefined && extendsIds(base, ids) ? base : undefined;
  const from = reused === undefined ? 0 : reused.ids.length;
  if (!isInt32List(ids, from)) return spelledWhole(body, ids);
  body.input_ids = new SpelledPyJson(ids, IDS_MARK, PY_DEFAULT_JSON);
  let text: string;
  try {
    text = dumpsPy(body, PY_DEFAULT_JSON);
  } finally {
    body.input_ids = ids;
  }
  const at = text.indexOf(IDS_MARK);
  if (at < 0 || text.indexOf(IDS_MARK, at + 1) >= 0) return spelledWhole(body, ids);
  // the list's bytes: the base's `[a, ..., z` (or `[`), each further id with its separator, then `]`
  let listBytes = reused === undefined ? 2 : reused.idsEnd - reused.idsStart + 1;
  for (let i = from; i < ids.length; i++) listBytes += int32Chars(ids[i] as number) + (i > 0 ? 2 : 0);
  const tailStart = at + IDS_MARK.length;
  const out = Buffer.allocUnsafeSlow(at + listBytes + (text.length - tailStart));
  out.write(text, 0, at, "latin1");
  let pos = at;
  if (reused === undefined) out[pos++] = 0x5b;
  else pos += out.write(reused.text.slice(reused.idsStart, reused.idsEnd), pos, "latin1");
  for (let i = from; i < ids.length; i++) {
    if (i > 0) {
      out[pos++] = 0x2c;
      out[pos++] = 0x20;
    }
    pos = writeInt32(out, pos, ids[i] as number);
  }
  const idsEnd = pos;
  out[pos++] = 0x5d;
  out.write(text.slice(tailStart), pos, "latin1");
  return { bytes: out, sent: new SentBody(out.toString("latin1"), ids as number[], at, idsEnd) };
}

/** The whole body spelled by the writer (nothing of it reused, nothing of it reusable). */
function spelledWhole(body: Record<string, unknown>, ids: unknown): SpelledBody {
  const text = dumpsPy(body, PY_DEFAULT_JSON);
  return { bytes: Buffer.from(text, "utf8"), sent: new SentBody(text, Array.isArray(ids) ? (ids as number[]) : [], -1, -1) };
}

/** True when `base`'s ids (at least one) are a prefix of `ids`, checked from the end (where two prompts part). */
function extendsIds(base: SentBody, ids: readonly unknown[]): boolean {
  const prefix = base.ids;
  if (base.idsStart < 0 || prefix.length === 0 || prefix.length > ids.length) return false;
  for (let i = prefix.length - 1; i >= 0; i--) {
    const id = ids[i];
    if (prefix[i] !== id || (id === 0 && 1 / id < 0)) return false; // -0 equals 0 but is the float -0.0
  }
  return true;
}

/** Every item from `from` on an int32 other than -0: Python's repr of each is `String(item)`, as the writer spells them. */
function isInt32List(items: readonly unknown[], from: number): boolean {
  for (let i = from; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== "number" || (item | 0) !== item || (item === 0 && 1 / item < 0)) return false;
  }
  return true;
}

/** Characters of `String(n)` for an int32 `n`. */
function int32Chars(n: number): number {
  if (n < 0) return 1 + decimalDigits(-n);
  return decimalDigits(n);
}

/** How many decimal digits `n` (0 <= n <= 2^31) has. */
function decimalDigits(n: number): number {
  if (n < 100000) return n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : 5;
  return n < 1000000 ? 6 : n < 10000000 ? 7 : n < 100000000 ? 8 : n < 1000000000 ? 9 : 10;
}

/** Writes `String(n)` (an int32) at `pos`; returns the offset after it. */
function writeInt32(out: Buffer, pos: number, n: number): number {
  if (n < 0) {
    out[pos++] = 0x2d;
    n = -n; // 2^31 for -2^31: still exact, and its digits are the same
  }
  const end = pos + decimalDigits(n);
  for (let j = end - 1; ; j--) {
    const q = Math.floor(n / 10);
    out[j] = 0x30 + n - q * 10;
    if (q === 0) break;
    n = q;
  }
  return end;
}
