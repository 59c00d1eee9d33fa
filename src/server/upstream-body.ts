// The bytes of a chat turn's upstream body (Python's `json.dumps(body)`), built without spelling again what the stored
// turn it builds on already sent: its prompt ids, leading messages and tools are copied, only what is new is spelled.
import { dumpsPy, PY_DEFAULT_JSON, SpelledPyJson } from "../wire/py-json";
import { spelledAlike } from "../wire/py-json-alike";

/**
 * One upstream body as sent, as a record keeps it: its text (ASCII: the default spelling escapes every other character;
 * kept on the heap, where the session budget counts it) and, when known, where its `input_ids` list, each of its
 * messages and its tools lie in it, so a later turn whose prompt extends these ids, whose history starts with these
 * messages and whose tools are these copies their text.
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
    /** The `messages` the body holds (the record's own, never changed afterwards), or [] when their places are unknown. */
    readonly messages: readonly unknown[] = [],
    /** Offset of the messages list's `[` in `text` (-1: unknown). */
    readonly messagesStart = -1,
    /** For each message, the offset just after its text. */
    readonly messageEnds: readonly number[] = [],
    /** The `tools` the body holds (the record's own), when their place is known. */
    readonly tools: unknown = undefined,
    /** Offset of the tools list's `[` in `text` (-1: unknown). */
    readonly toolsStart = -1,
    /** Offset just after the tools list's `]`. */
    readonly toolsEnd = -1,
  ) {}

  /** Heap bytes this holds besides the arrays the record holds anyway: the text (one byte a character) and the offsets. */
  get heapBytes(): number {
    return this.text.length + 8 * this.messageEnds.length;
  }
}

/**
 * A body to send: its bytes (for this call only, so a small body takes a slice of Node's shared pool, as `Buffer.from`
 * of its text would; nothing keeps them, and they are off the heap the budget counts) and its text.
 */
export interface SpelledBody {
  /** `Buffer.from(sent.text)`. */
  readonly bytes: Buffer;
  /** The text and the places in it, for the record. */
  readonly sent: SentBody;
}

/**
 * Stand in for the id list, the messages and the tools while the rest of the body is spelled: the writer copies a
 * {@link SpelledPyJson}'s text as it is, and a raw control character never occurs in a JSON text (every string escapes
 * it), so each marks one place.
 */
const IDS_MARK = "\u0001";
const MESSAGES_MARK = "\u0002";
const TOOLS_MARK = "\u0003";

/**
 * `Buffer.from(dumpsPy(body, PY_DEFAULT_JSON))` for a chat body whose `input_ids` were just set, the same bytes (and
 * their text). When `base` (a body sent before) holds ids that are a prefix of these, its text of them is copied and
 * only the ids after them are spelled (checked id by id); the leading messages `base` holds alike (same keys, order and
 * values: {@link spelledAlike}) are copied too, and only the rest spelled, and so are its tools when alike. Any base
 * is safe: what does not fit is not used. Falls back to spelling the whole body when `input_ids` is not a list of int32s or a mark does not turn up once.
 */
export function spellUpstreamBody(body: Record<string, unknown>, base: SentBody | undefined): SpelledBody {
  const ids = body.input_ids;
  if (!Array.isArray(ids)) return spelledWhole(body, ids);
  // a base's ids are int32s (it was spelled here): only the ids after the ones it holds need the check
  const idsBase = base !== undefined && extendsIds(base, ids) ? base : undefined;
  const from = idsBase === undefined ? 0 : idsBase.ids.length;
  if (!isInt32List(ids, from)) return spelledWhole(body, ids);
  const messages = body.messages;
  const marksMessages = Array.isArray(messages) && messages.length > 0;
  const tools = body.tools;
  const marksTools = Array.isArray(tools) && tools.length > 0;
  body.input_ids = new SpelledPyJson(ids, IDS_MARK, PY_DEFAULT_JSON);
  if (marksMessages) body.messages = new SpelledPyJson(messages, MESSAGES_MARK, PY_DEFAULT_JSON);
  if (marksTools) body.tools = new SpelledPyJson(tools, TOOLS_MARK, PY_DEFAULT_JSON);
  let text: string;
  try {
    text = dumpsPy(body, PY_DEFAULT_JSON);
  } finally {
    body.input_ids = ids;
    if (marksMessages) body.messages = messages;
    if (marksTools) body.tools = tools;
  }
  const idsAt = onlyPlace(text, IDS_MARK);
  const messagesAt = marksMessages ? onlyPlace(text, MESSAGES_MARK) : -1;
  const toolsAt = marksTools ? onlyPlace(text, TOOLS_MARK) : -1;
  if (idsAt < 0 || (marksMessages && messagesAt < 0) || (marksTools && toolsAt < 0)) return spelledWhole(body, ids);
  const list = marksMessages ? messagesText(messages as unknown[], base) : undefined;
  const toolsText = marksTools ? toolsListText(tools, base) : "";

  // the id list's bytes: the base's `[a, ..., z` (or `[`), each further id with its separator, then `]`
  let idsBytes = idsBase === undefined ? 2 : idsBase.idsEnd - idsBase.idsStart + 1;
  for (let i = from; i < ids.length; i++) idsBytes += int32Chars(ids[i] as number) + (i > 0 ? 2 : 0);
  const marks = 1 + (marksMessages ? 1 : 0) + (marksTools ? 1 : 0);
  const out = Buffer.allocUnsafe(text.length - marks + idsBytes + (list === undefined ? 0 : list.text.length) + toolsText.length);
  let idsStart = -1;
  let idsEnd = -1;
  let messagesStart = -1;
  let toolsStart = -1;
  let toolsEnd = -1;
  let pos = 0;
  let read = 0;
  const places = [idsAt];
  if (messagesAt >= 0) places.push(messagesAt);
  if (toolsAt >= 0) places.push(toolsAt);
  places.sort((a, b) => a - b);
  for (const at of places) {
    pos += out.write(text.slice(read, at), pos, "latin1");
    read = at + 1;
    if (at === messagesAt && list !== undefined) {
      messagesStart = pos;
      pos += out.write(list.text, pos, "latin1");
      continue;
    }
    if (at === toolsAt) {
      toolsStart = pos;
      pos += out.write(toolsText, pos, "latin1");
      toolsEnd = pos;
      continue;
    }
    idsStart = pos;
    if (idsBase === undefined) out[pos++] = 0x5b;
    else pos += out.write(idsBase.text.slice(idsBase.idsStart, idsBase.idsEnd), pos, "latin1");
    for (let i = from; i < ids.length; i++) {
      if (i > 0) {
        out[pos++] = 0x2c;
        out[pos++] = 0x20;
      }
      pos = writeInt32(out, pos, ids[i] as number);
    }
    idsEnd = pos;
    out[pos++] = 0x5d;
  }
  out.write(text.slice(read), pos, "latin1");
  const sent = new SentBody(
    out.toString("latin1"),
    ids as number[],
    idsStart,
    idsEnd,
    list === undefined ? [] : (messages as unknown[]),
    messagesStart,
    list === undefined ? [] : list.ends.map((end) => end + messagesStart),
    marksTools ? tools : undefined,
    toolsStart,
    toolsEnd,
  );
  return { bytes: out, sent };
}

/** Where `mark` occurs in `text`, or -1 unless exactly once. */
function onlyPlace(text: string, mark: string): number {
  const at = text.indexOf(mark);
  return at >= 0 && text.indexOf(mark, at + 1) < 0 ? at : -1;
}

/**
 * The messages list's text (`[m0, m1, ...]`, as the writer spells a list) and where each message ends in it: the
 * leading messages `base` holds alike copied from its text, the others spelled.
 */
function messagesText(messages: readonly unknown[], base: SentBody | undefined): { text: string; ends: number[] } {
  let kept = 0;
  if (base !== undefined && base.messagesStart >= 0) {
    const limit = Math.min(base.messages.length, messages.length);
    while (kept < limit && spelledAlike(base.messages[kept], messages[kept])) kept += 1;
  }
  const ends = new Array<number>(messages.length);
  let text = "[";
  if (kept > 0) {
    const start = base!.messagesStart;
    text = base!.text.slice(start, base!.messageEnds[kept - 1]);
    for (let i = 0; i < kept; i++) ends[i] = base!.messageEnds[i] - start;
  }
  for (let i = kept; i < messages.length; i++) {
    if (i > 0) text += ", ";
    const item = messages[i];
    text += dumpsPy(item === undefined ? null : item, PY_DEFAULT_JSON);
    ends[i] = text.length;
  }
  return { text: `${text}]`, ends };
}

/** The tools list's text: the base's when its tools are alike (a session sends the same tools every turn), else spelled. */
function toolsListText(tools: unknown, base: SentBody | undefined): string {
  if (base !== undefined && base.toolsStart >= 0 && spelledAlike(base.tools, tools)) return base.text.slice(base.toolsStart, base.toolsEnd);
  return dumpsPy(tools, PY_DEFAULT_JSON);
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
