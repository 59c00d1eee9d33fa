// Parsed request bodies of the loopback bridge's direct route, kept by their exact bytes: a parity run's trajectories
// of one scripted agent send byte-identical bodies, and a repeat gets a fresh copy of the kept parse instead of a parse.

/** Most bodies kept (the memo is emptied when it would grow past this). */
const BODY_MEMO_LIMIT = 256;
/** Larger bodies are parsed every time (a long agent history is rarely repeated byte for byte). */
const BODY_MEMO_MAX_BYTES = 64 * 1024;
/** Most body bytes kept over all entries (their parses take a few times as much); past it the memo is emptied. */
const BODY_MEMO_TOTAL_BYTES = 2 * 1024 * 1024;
/** Deeper values are not kept (their copy would recurse that deep). */
const COPY_MAX_DEPTH = 128;

/**
 * A request body as the handler answers it: the parsed object, or the problem a 400 names. A repeat's is the same
 * (frozen) object for every repeat of those bytes while they are kept, so what is derived from the body can be kept
 * by it.
 */
export interface ParsedBody {
  /** The parsed object; for a repeat, the kept parse itself, to be read and never changed (see `copy`). */
  parsed?: Record<string, unknown>;
  problem?: string;
  /** For a repeat: makes the request's own copy of `parsed`, the object its process function may be given. */
  copy?: () => Record<string, unknown>;
}

class TooDeep extends Error {}

/**
 * A fresh copy of a value JSON.parse made: arrays and plain objects copied all the way down, with the same keys in
 * the same order (own data properties, `"__proto__"` included), the same primitives (`-0` included).
 */
function copyJsonValue(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== "object") return value;
  if (depth > COPY_MAX_DEPTH) throw new TooDeep();
  if (Array.isArray(value)) {
    const out: unknown[] = value.slice();
    for (let i = 0; i < out.length; i++) {
      const item = out[i];
      if (item !== null && typeof item === "object") out[i] = copyJsonValue(item, depth + 1);
    }
    return out;
  }
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key in out) {
    if (!Object.prototype.hasOwnProperty.call(out, key)) continue;
    const item = out[key];
    if (item !== null && typeof item === "object") out[key] = copyJsonValue(item, depth + 1);
  }
  return out;
}

interface KeptBody {
  bytes: Buffer;
  /** Read by every repeat and never changed: a repeat that needs its own object makes a copy (`copy`). */
  value: Record<string, unknown>;
  /** What every repeat of these bytes is answered with (made once, so a repeat allocates nothing here). */
  repeat: MemoizedBody;
}

/** A bucket key from the length and up to 16 sampled bytes (equal keys are then compared byte for byte). */
function bucketKey(bytes: Uint8Array): number {
  let hash = bytes.length;
  const step = Math.max(1, Math.floor(bytes.length / 16));
  for (let i = 0; i < bytes.length; i += step) hash = (Math.imul(hash, 31) + bytes[i]) | 0;
  return hash;
}

/** A parsed request body and what the request log keeps of it. */
export interface MemoizedBody {
  body: ParsedBody;
  /**
   * A repeat logs the kept bytes (shared, never changed), anything else its decoded text: the log then holds no
   * off-heap buffer per request, whose growth would bring on full collections of the whole heap.
   */
  logged: string | Uint8Array;
}

/** Parses request bodies, answering a body seen recently from its kept parse (copied for each request that needs its own). */
export class RequestBodyMemo {
  private readonly kept = new Map<number, KeptBody>();
  private keptBytes = 0;

  /**
   * @param decode the text of a body's bytes
   * @param parse the parse of that text the memo stands in for
   */
  constructor(
    private readonly decode: (bytes: Uint8Array) => string,
    private readonly parse: (text: string) => ParsedBody,
  ) {}

  /** `parse(decode(bytes))`, or for the same bytes seen recently what it gave then, with a way to copy it. */
  parsed(bytes: Uint8Array): MemoizedBody {
    const key = bytes.length > BODY_MEMO_MAX_BYTES ? undefined : bucketKey(bytes);
    const kept = key === undefined ? undefined : this.kept.get(key);
    if (kept !== undefined && kept.bytes.equals(bytes)) return kept.repeat;
    const text = this.decode(bytes);
    const body = this.parse(text);
    if (key === undefined || body.parsed === undefined) return { body, logged: text };
    let value: Record<string, unknown>;
    try {
      value = copyJsonValue(body.parsed, 0) as Record<string, unknown>;
    } catch (error) {
      if (error instanceof TooDeep) return { body, logged: text };
      throw error;
    }
    if (this.kept.size >= BODY_MEMO_LIMIT || this.keptBytes + bytes.length > BODY_MEMO_TOTAL_BYTES) {
      this.kept.clear();
      this.keptBytes = 0;
    }
    const replaced = this.kept.get(key);
    if (replaced !== undefined) this.keptBytes -= replaced.bytes.length;
    this.kept.set(key, keptBody(Buffer.from(bytes), value));
    this.keptBytes += bytes.length;
    return { body, logged: text };
  }
}

function keptBody(bytes: Buffer, value: Record<string, unknown>): KeptBody {
  const body: ParsedBody = Object.freeze({ parsed: value, copy: () => copyJsonValue(value, 0) as Record<string, unknown> });
  return { bytes, value, repeat: Object.freeze({ body, logged: bytes }) };
}

/** Test hook: {@link copyJsonValue} from the top. */
export function copyParsedJson(value: unknown): unknown {
  return copyJsonValue(value, 0);
}
