// The texts a stored record's request and response were already written as, so `GET /sessions/{id}` copies them
// instead of spelling each turn's whole conversation and per-token log-probs again at the end of every trajectory.
import { PY_RESPONSE_JSON, SpelledPyJson } from "../wire/py-json";
import { compactFromDefaultSpelling } from "../wire/py-json-compact";
import type { SessionRecord } from "./types";
import type { SentBody } from "./upstream-body";

/**
 * What one record's request and response were spelled as. The record must not change afterwards (committed records
 * never do: positioning sets `input_ids` before the request is spelled).
 */
export class RecordTexts {
  /** The request's compact text once derived (null: its default text does not tell it). */
  private compact: string | null | undefined;

  constructor(
    /** The body as sent upstream (its text is `dumpsPy(record.request, PY_DEFAULT_JSON)`), until the compact text is derived. */
    private requestDefault: SentBody | undefined,
    /** `dumpsPy(record.response, PY_RESPONSE_JSON)`: the backend's own text when it was that already, or what the client was sent. */
    public response: string | undefined,
    /** Heap bytes the texts hold (charged to the session with the record). */
    public heapBytes: number,
  ) {}

  /**
   * Drops the request's texts (the view then writes the request from the record, to the same bytes, and no later turn
   * copies them); returns the heap bytes freed. The response's text stays.
   */
  dropRequest(): number {
    const freed = this.requestDefault?.heapBytes ?? this.compact?.length ?? 0;
    this.requestDefault = undefined;
    this.compact = null;
    this.heapBytes -= freed;
    return freed;
  }

  /** The request's compact text (`PY_RESPONSE_JSON`), derived once from the default one; undefined when unknown. */
  request(): string | undefined {
    if (this.compact === undefined) {
      // once derived, the bytes go (a later turn built on this record then spells its prompt ids whole)
      this.compact = this.requestDefault === undefined ? null : (compactFromDefaultSpelling(this.requestDefault.text) ?? null);
      this.requestDefault = undefined;
    }
    return this.compact ?? undefined;
  }

  /** The body as sent upstream while this record still holds its text (a later turn's prompt may copy its ids). */
  sentBody(): SentBody | undefined {
    return this.requestDefault;
  }
}

/**
 * Heap bytes of `text`, decoded from `utf8Length` bytes: one a character when those were all ASCII, else at most two
 * (V8 keeps a string with a character past Latin-1 two bytes a character).
 */
export function textHeapBytes(text: string, utf8Length: number): number {
  return text.length === utf8Length ? text.length : 2 * text.length;
}

/**
 * A record as `GET /sessions/{id}` writes it: a copy whose request and response are {@link SpelledPyJson}s of the
 * texts known for them (written under {@link PY_RESPONSE_JSON}, the texts are copied), or the record itself when
 * none is known.
 */
export function withKnownTexts(record: SessionRecord, texts: RecordTexts | undefined): SessionRecord {
  if (texts === undefined) return record;
  const requestText = texts.request();
  const responseText = texts.response;
  if (responseText === undefined && requestText === undefined) return record;
  const copy: SessionRecord = { ...record };
  if (responseText !== undefined) copy.response = new SpelledPyJson(record.response, responseText, PY_RESPONSE_JSON) as unknown as SessionRecord["response"];
  if (requestText !== undefined) copy.request = new SpelledPyJson(record.request, requestText, PY_RESPONSE_JSON) as unknown as SessionRecord["request"];
  return copy;
}
