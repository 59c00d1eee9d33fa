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
  /** The line's text. */
  readonly text: string;
}

/** A cassette as decoded from its text. */
export interface DecodedCassette {
  /** Its header. */
  readonly header: CassetteHeader;
  /** Every interaction by key (the first line of each key). */
  readonly entries: Map<string, CassetteEntry>;
  /** Lines holding a key already recorded with the same reply (kept in the file, answered by the first). */
  readonly duplicates: number;
  /** The last line when it was cut short (no newline at its end and not valid JSON): the exchange in flight when recording stopped. */
  readonly truncatedTail: { readonly line: number; readonly text: string } | null;
  /** Whether the text ends with a newline (an appender must write one first when not). */
  readonly endsWithNewline: boolean;
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
export function decodeHeader(text: string, source: string): CassetteHeader {
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

const KEY_PREFIX = '{"key":"';
const HEX_KEY = /^[0-9a-f]{64}$/;

/** The key of an interaction line: at its fixed place, else (a line another tool rewrote) from its JSON; undefined when it has none. */
function lineKey(text: string): string | undefined {
  if (text.startsWith(KEY_PREFIX) && text.charCodeAt(KEY_PREFIX.length + 64) === 34 && text.endsWith("}")) {
    const key = text.slice(KEY_PREFIX.length, KEY_PREFIX.length + 64);
    if (HEX_KEY.test(key)) return key;
  }
  try {
    const value = JSON.parse(text) as { key?: unknown } | null;
    return value !== null && typeof value === "object" && typeof value.key === "string" && HEX_KEY.test(value.key) ? value.key : undefined;
  } catch {
    return undefined;
  }
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
 * Indexes a cassette's text: the header, then each interaction line by its key (no line is parsed whole unless its
 * key repeats). A last line cut short is set apart in `truncatedTail`, not refused.
 * @throws CassetteError for a missing or foreign header, a line with no key, or one key recorded with two different replies
 */
export function decodeCassette(text: string, source: string): DecodedCassette {
  const endsWithNewline = text.endsWith("\n");
  const lines = text.split("\n");
  if (endsWithNewline) lines.pop();
  if (lines.length === 0 || lines[0].trim() === "") throw new CassetteError(`${source} is empty: a cassette starts with its header line`);
  const header = decodeHeader(lines[0], source);
  const entries = new Map<string, CassetteEntry>();
  let duplicates = 0;
  let truncatedTail: DecodedCassette["truncatedTail"] = null;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === "") continue;
    const last = i === lines.length - 1 && !endsWithNewline;
    if (last && !isJson(line)) {
      truncatedTail = { line: i + 1, text: line };
      break;
    }
    const key = lineKey(line);
    if (key === undefined) throw new CassetteError(`${source} line ${i + 1} is not a recorded interaction (no "key" of 64 hex digits): ${clip(line)}`);
    const first = entries.get(key);
    if (first === undefined) {
      entries.set(key, { key, line: i + 1, text: line });
      continue;
    }
    const difference = replyDifference(readReply(first, source), readReply({ key, line: i + 1, text: line }, source));
    if (difference !== null) {
      throw new CassetteError(
        `${source} records key ${key} twice with different replies (lines ${first.line} and ${i + 1}, ${difference}); ` +
          `a cassette answers each request one way: delete the line that is wrong`,
      );
    }
    duplicates++;
  }
  return { header, entries, duplicates, truncatedTail, endsWithNewline };
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
    value = JSON.parse(entry.text) as Record<string, unknown>;
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
