// The cassette file format (pure): JSONL, a header line naming the family, the vocabulary and the format version,
// then one recorded generation exchange a line, indexed by key without parsing each line (lines are read on lookup).
import { keyRequest, type KeyedRequest } from "./cassette-key";

/** The cassette format this package writes and reads. */
export const CASSETTE_FORMAT_VERSION = 1;

/** The header line's version field (also what tells a cassette from any other JSONL file). */
const VERSION_FIELD = "session_parity_cassette";

/** The first line of a cassette. */
export interface CassetteHeader {
  /** Format version ({@link CASSETTE_FORMAT_VERSION}). */
  readonly format: number;
  /** TITO family of the recording (`qwen3`, ...). */
  readonly family: string;
  /** `sha256:<hex>` of the checkpoint's tokenizer.json: the vocabulary the recorded ids belong to. */
  readonly vocabulary: string;
}

/** A reply exactly as the backend sent it. */
export interface CassetteReply {
  /** HTTP status (recordings keep only 200s). */
  readonly status: number;
  /** The reply's content type. */
  readonly contentType: string;
  /** The reply body, byte for byte (UTF-8 text: output ids, log-probs, meta_info, routed experts as sent). */
  readonly body: string;
}

/** One recorded exchange. */
export interface CassetteInteraction {
  /** The request as keyed. */
  readonly request: KeyedRequest;
  /** The reply. */
  readonly reply: CassetteReply;
}

/** A bad cassette: names the file, the line when there is one, and what is wrong. */
export class CassetteError extends Error {
  override readonly name = "CassetteError";
}

/** An indexed line of a cassette, read whole only when looked up. */
export interface CassetteEntry {
  /** The interaction's key. */
  readonly key: string;
  /** 1-based line number in the file. */
  readonly line: number;
  /** The bytes holding the line (the whole file's, shared by every entry), decoded only when looked up. */
  readonly data: Uint8Array;
  /** Where the line starts in `data`. */
  readonly start: number;
  /** Where the line ends in `data` (its newline, or the end). */
  readonly end: number;
}

/** A cassette as decoded from its bytes. */
export interface DecodedCassette {
  /** Its header. */
  readonly header: CassetteHeader;
  /** Every interaction by key (the first line of each key). */
  readonly entries: Map<string, CassetteEntry>;
  /** Lines holding a key already recorded with the same reply (kept in the file, answered by the first). */
  readonly duplicates: number;
  /**
   * The last line when it was cut short (no newline at its end and not valid JSON): the exchange in flight when
   * recording stopped, with the byte offset where it starts.
   */
  readonly truncatedTail: { readonly line: number; readonly text: string; readonly offset: number } | null;
  /** Whether the bytes end with a newline (an appender must write one first when not). */
  readonly endsWithNewline: boolean;
  /** Lines the file holds, the header included and a truncated tail left out. */
  readonly lineCount: number;
}

/** The header line (without its newline). */
export function encodeHeader(header: Omit<CassetteHeader, "format">): string {
  return JSON.stringify({ [VERSION_FIELD]: CASSETTE_FORMAT_VERSION, family: header.family, vocabulary: header.vocabulary });
}

/** One interaction line (without its newline): the key first, at a fixed place, so a reader indexes it without parsing. */
export function encodeInteraction(interaction: CassetteInteraction): string {
  const { request, reply } = interaction;
  return (
    `{"key":"${request.key}","path":${JSON.stringify(request.path)},"status":${reply.status},"content_type":${JSON.stringify(reply.contentType)},` +
    `"body":${JSON.stringify(reply.body)},"request":${request.canonical}}`
  );
}

/** Reads the header line. @throws CassetteError for a line that is no cassette header, or of another format version */
function decodeHeader(text: string, source: string): CassetteHeader {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CassetteError(`${source} line 1 is not a cassette header (not JSON: ${(error as Error).message})`);
  }
  const header = value as Record<string, unknown> | null;
  if (header === null || typeof header !== "object" || Array.isArray(header) || !(VERSION_FIELD in header)) {
    throw new CassetteError(`${source} line 1 is not a cassette header (no "${VERSION_FIELD}" field): is this file a cassette?`);
  }
  const format = header[VERSION_FIELD];
  if (format !== CASSETTE_FORMAT_VERSION) {
    throw new CassetteError(
      `${source} has cassette format version ${JSON.stringify(format)}; this session-parity reads version ${CASSETTE_FORMAT_VERSION} only ` +
        `(record it again with this version, or use the session-parity that wrote it)`,
    );
  }
  if (typeof header.family !== "string" || typeof header.vocabulary !== "string") {
    throw new CassetteError(`${source} line 1 lacks a string "family" and "vocabulary"`);
  }
  return { format, family: header.family, vocabulary: header.vocabulary };
}

const KEY_PREFIX = Buffer.from('{"key":"', "latin1");
const KEY_START = KEY_PREFIX.length;
const HEX_KEY = /^[0-9a-f]{64}$/;
const NEWLINE = 0x0a;
const QUOTE = 0x22;
const CLOSE_BRACE = 0x7d;
const decoder = new TextDecoder();

/** The text of the bytes from `start` to `end`. */
function lineText(data: Uint8Array, start = 0, end = data.length): string {
  return decoder.decode(data.subarray(start, end));
}

/** The text of an indexed line. */
function entryText(entry: CassetteEntry): string {
  return lineText(entry.data, entry.start, entry.end);
}

/** The key of the line from `start` to `end`: at its fixed place, else (a line another tool rewrote) from its JSON; undefined when it has none. */
function lineKey(data: Buffer, start: number, end: number): string | undefined {
  if (end - start > KEY_START + 65 && data[start + KEY_START + 64] === QUOTE && hasKeyPrefix(data, start)) {
    if (isLowerHex(data, start + KEY_START, start + KEY_START + 64) && lastNonSpace(data, start, end) === CLOSE_BRACE) {
      return data.toString("latin1", start + KEY_START, start + KEY_START + 64);
    }
  }
  try {
    const value = JSON.parse(lineText(data, start, end)) as { key?: unknown } | null;
    return value !== null && typeof value === "object" && typeof value.key === "string" && HEX_KEY.test(value.key) ? value.key : undefined;
  } catch {
    return undefined;
  }
}

/** True when every byte from `start` to `end` is a lowercase hex digit. */
function isLowerHex(data: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const byte = data[i];
    if (!((byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66))) return false;
  }
  return true;
}

function hasKeyPrefix(data: Uint8Array, start: number): boolean {
  for (let i = 0; i < KEY_START; i++) if (data[start + i] !== KEY_PREFIX[i]) return false;
  return true;
}

/** The last byte from `start` to `end` that is not a space, tab or carriage return; undefined for a blank line. */
function lastNonSpace(data: Uint8Array, start: number, end: number): number | undefined {
  let at = end - 1;
  while (at >= start && (data[at] === 0x20 || data[at] === 0x0d || data[at] === 0x09)) at--;
  return at >= start ? data[at] : undefined;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Indexes a cassette's bytes: the header, then each interaction line by its key, each line a view on `data` (no line is
 * decoded or parsed whole unless its key repeats). A last line cut short is set apart in `truncatedTail`, not refused.
 * @throws CassetteError for a missing or foreign header, a line with no key, or one key recorded with two different replies
 */
export function decodeCassette(data: Buffer | string, source: string): DecodedCassette {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const endsWithNewline = bytes.length > 0 && bytes[bytes.length - 1] === NEWLINE;
  const headerEnd = bytes.indexOf(NEWLINE);
  const headerStop = headerEnd === -1 ? bytes.length : headerEnd;
  if (lastNonSpace(bytes, 0, headerStop) === undefined) throw new CassetteError(`${source} is empty: a cassette starts with its header line`);
  const header = decodeHeader(lineText(bytes, 0, headerStop), source);
  const entries = new Map<string, CassetteEntry>();
  let duplicates = 0;
  let truncatedTail: DecodedCassette["truncatedTail"] = null;
  let line = 1;
  let start = headerEnd === -1 ? bytes.length : headerEnd + 1;
  while (start < bytes.length) {
    line++;
    const newline = bytes.indexOf(NEWLINE, start);
    const end = newline === -1 ? bytes.length : newline;
    const offset = start;
    start = end + 1;
    if (lastNonSpace(bytes, offset, end) === undefined) continue;
    if (newline === -1) {
      const text = lineText(bytes, offset, end);
      if (!isJson(text)) {
        truncatedTail = { line, text, offset };
        line--;
        break;
      }
    }
    const key = lineKey(bytes, offset, end);
    if (key === undefined) {
      throw new CassetteError(`${source} line ${line} is not a recorded interaction (no "key" of 64 hex digits): ${clip(lineText(bytes, offset, end))}`);
    }
    const entry: CassetteEntry = { key, line, data: bytes, start: offset, end };
    const first = entries.get(key);
    if (first === undefined) {
      entries.set(key, entry);
      continue;
    }
    const difference = replyDifference(readReply(first, source), readReply(entry, source));
    if (difference !== null) {
      throw new CassetteError(
        `${source} records key ${key} twice with different replies (lines ${first.line} and ${line}, ${difference}); ` +
          `a cassette answers each request one way: delete the line that is wrong`,
      );
    }
    duplicates++;
  }
  return { header, entries, duplicates, truncatedTail, endsWithNewline, lineCount: line };
}

/** Where two replies differ, or null when they are the same. */
function replyDifference(a: CassetteReply, b: CassetteReply): string | null {
  if (a.status !== b.status) return `status ${a.status} vs ${b.status}`;
  if (a.contentType !== b.contentType) return `content type ${a.contentType} vs ${b.contentType}`;
  if (a.body === b.body) return null;
  let at = 0;
  while (at < a.body.length && at < b.body.length && a.body[at] === b.body[at]) at++;
  return `bodies differ from character ${at}: ${clip(a.body.slice(at), 40)} vs ${clip(b.body.slice(at), 40)}`;
}

/** Parses an indexed line whole. @throws CassetteError naming the line when it is not a valid interaction */
export function readInteraction(entry: CassetteEntry, source: string): CassetteInteraction {
  const { value, reply } = parseLine(entry, source);
  const { path, request } = value;
  if (typeof path !== "string") throw badLine(entry, source, '"path" is not a string');
  if (request === null || typeof request !== "object" || Array.isArray(request)) throw badLine(entry, source, '"request" is not an object');
  const keyed = keyRequest(path, request as Record<string, unknown>);
  return { request: { ...keyed, key: entry.key }, reply };
}

/** The reply of an indexed line (the request part is not read). @throws CassetteError naming the line when it is not valid */
export function readReply(entry: CassetteEntry, source: string): CassetteReply {
  return parseLine(entry, source).reply;
}

function parseLine(entry: CassetteEntry, source: string): { value: Record<string, unknown>; reply: CassetteReply } {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(entryText(entry)) as Record<string, unknown>;
  } catch (error) {
    throw badLine(entry, source, `not JSON (${(error as Error).message})`);
  }
  const { status, content_type: contentType, body } = value;
  if (!Number.isInteger(status)) throw badLine(entry, source, '"status" is not an integer');
  if (typeof contentType !== "string") throw badLine(entry, source, '"content_type" is not a string');
  if (typeof body !== "string") throw badLine(entry, source, '"body" is not a string');
  return { value, reply: { status: status as number, contentType, body } };
}

function badLine(entry: CassetteEntry, source: string, why: string): CassetteError {
  return new CassetteError(`${source} line ${entry.line} is not a valid recorded interaction: ${why}`);
}

function clip(text: string, max = 120): string {
  return text.length > max ? `${JSON.stringify(text.slice(0, max))}...` : JSON.stringify(text);
}
