// A new turn's upstream body shares with the stored record it builds on the history both hold: the leading messages
// and the tools spelled alike are the stored objects, so a long session keeps each message once, not once per turn.
import { spelledAlike } from "../wire/py-json-alike";
import type { SessionRecord } from "./types";

/** What a body took over from the record it builds on. */
export interface SharedHistory {
  /** Leading messages that are now the stored record's own objects. */
  messages: number;
  /** Whether `tools` is now the stored record's own value. */
  tools: boolean;
}

/**
 * Replaces the leading messages of `body` spelled alike (under every setting: same keys, order and values) with the
 * ones `base`'s request holds, in a new list, and its tools with the base's when alike. Nothing that any writer
 * spells changes, so the body is sent and stored byte for byte as before. No base: nothing is shared.
 */
export function shareStoredHistory(body: Record<string, unknown>, base: SessionRecord | null | undefined): SharedHistory {
  const shared: SharedHistory = { messages: 0, tools: false };
  if (base === null || base === undefined) return shared;
  const stored = base.request;
  const messages = body.messages;
  const storedMessages = stored.messages;
  if (Array.isArray(messages) && Array.isArray(storedMessages)) {
    const limit = Math.min(messages.length, storedMessages.length);
    let kept = 0;
    while (kept < limit && spelledAlike(storedMessages[kept], messages[kept])) kept += 1;
    if (kept > 0) {
      const list = new Array<unknown>(messages.length);
      for (let i = 0; i < kept; i += 1) list[i] = storedMessages[i];
      for (let i = kept; i < messages.length; i += 1) list[i] = messages[i];
      body.messages = list;
      shared.messages = kept;
    }
  }
  if ("tools" in body && "tools" in stored && typeof stored.tools === "object" && stored.tools !== null && spelledAlike(stored.tools, body.tools)) {
    body.tools = stored.tools;
    shared.tools = true;
  }
  return shared;
}
