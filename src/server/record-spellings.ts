// The texts a stored record's request and response were already written as, so `GET /sessions/{id}` copies them
// instead of spelling each turn's whole conversation and per-token log-probs again at the end of every trajectory.
import { PY_RESPONSE_JSON, SpelledPyJson } from "../wire/py-json";
import { compactFromDefaultSpelling } from "../wire/py-json-compact";
import type { SessionRecord } from "./types";

/**
 * Each upstream reply's compact text (`dumpsPy(response, PY_RESPONSE_JSON)`): the backend's own bytes when they were
 * spelled that way already, or the text the reply was sent to the client as. Weak: it goes with the record.
 */
const responseTexts = new WeakMap<object, string>();

/** Each upstream body's text as sent (Python's default separators), until the view derives its compact text. */
const requestDefaultTexts = new WeakMap<object, string>();
/** Each upstream body's compact text, once derived; null when the default text does not tell it. */
const requestCompactTexts = new WeakMap<object, string | null>();

/** Notes `text` as `dumpsPy(response, PY_RESPONSE_JSON)`. The response must not change afterwards (records never do). */
export function rememberResponseText(response: object, text: string): void {
  responseTexts.set(response, text);
}

/** Notes `text` as `dumpsPy(request, PY_DEFAULT_JSON)`. The request must not change afterwards (records never do). */
export function rememberRequestText(request: object, text: string): void {
  requestDefaultTexts.set(request, text);
}

/** The request's compact text, derived once from its default text; undefined when there is none or it does not tell. */
function requestCompactText(request: object): string | undefined {
  const known = requestCompactTexts.get(request);
  if (known !== undefined) return known ?? undefined;
  const defaultText = requestDefaultTexts.get(request);
  if (defaultText === undefined) return undefined;
  const compact = compactFromDefaultSpelling(defaultText) ?? null;
  requestCompactTexts.set(request, compact);
  requestDefaultTexts.delete(request);
  return compact ?? undefined;
}

/**
 * A record as `GET /sessions/{id}` writes it: a copy whose request and response are {@link SpelledPyJson}s of the
 * texts already known for them (written again under {@link PY_RESPONSE_JSON}, the texts are copied), or the record
 * itself when none is known.
 */
export function withKnownSpellings(record: SessionRecord): SessionRecord {
  const response = record.response;
  const request = record.request;
  const responseText = response === undefined || response === null ? undefined : responseTexts.get(response);
  const requestText = request === undefined || request === null ? undefined : requestCompactText(request);
  if (responseText === undefined && requestText === undefined) return record;
  const copy: SessionRecord = { ...record };
  if (responseText !== undefined) copy.response = new SpelledPyJson(response, responseText, PY_RESPONSE_JSON) as unknown as SessionRecord["response"];
  if (requestText !== undefined) copy.request = new SpelledPyJson(request, requestText, PY_RESPONSE_JSON) as unknown as SessionRecord["request"];
  return copy;
}
