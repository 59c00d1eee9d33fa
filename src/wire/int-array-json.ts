// JSON text of long arrays of safe integers (token ids), written digit by digit into bytes: the text JSON.stringify
// writes, for a fraction of its time on id lists (it converts each number through a cache that long id lists miss).

/** Arrays at least this long take the digit writer; shorter ones are left to JSON.stringify. */
export const INT_ARRAY_MIN_LENGTH = 32;

/** The written bytes are ASCII, which UTF-8 reads as latin1 would; Node's UTF-8 decoder has the faster ASCII path. */
const ASCII = new TextDecoder("utf-8", { ignoreBOM: true });
const TWO_POW_31 = 0x8000_0000;
/** Widest element: `-9007199254740991` (17 characters) and its comma. */
const MAX_ELEMENT_CHARS = 18;

/** The kept scratch grows to this at most (about 58k ids); a longer list writes into memory of its own. */
const MAX_KEPT_SCRATCH = 1 << 20;

let scratch = new Uint8Array(1 << 14);

/**
 * True when every element is a number JSON.stringify spells exactly as Python's json.dumps spells the int: a safe
 * integer other than `-0` (a hole or any other value gives false).
 */
export function isSafeIntegerArray(values: readonly unknown[]): boolean {
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (!Number.isSafeInteger(value) || (value === 0 && 1 / (value as number) < 0)) return false;
  }
  return true;
}

/** `JSON.stringify(values)` for an array {@link isSafeIntegerArray} accepts (the same text, written by hand). */
export function safeIntegerArrayJson(values: readonly number[]): string {
  const need = values.length * MAX_ELEMENT_CHARS + 2;
  if (scratch.length < need && need <= MAX_KEPT_SCRATCH) scratch = new Uint8Array(Math.min(Math.max(need, scratch.length * 2), MAX_KEPT_SCRATCH));
  const out = scratch.length >= need ? scratch : new Uint8Array(need);
  let at = 0;
  out[at++] = 0x5b; // [
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    let value = values[i];
    if (value < 0) {
      out[at++] = 0x2d; // -
      value = -value;
    }
    if (value < 10) {
      out[at++] = 0x30 + value;
    } else if (value < TWO_POW_31) {
      const digits =
        value < 100 ? 2 : value < 1e3 ? 3 : value < 1e4 ? 4 : value < 1e5 ? 5 : value < 1e6 ? 6 : value < 1e7 ? 7 : value < 1e8 ? 8 : value < 1e9 ? 9 : 10;
      let rest = value | 0;
      for (let j = at + digits - 1; j > at; j--) {
        const next = (rest / 10) | 0;
        out[j] = 0x30 + rest - next * 10;
        rest = next;
      }
      out[at] = 0x30 + rest;
      at += digits;
    } else {
      const text = String(value);
      for (let j = 0; j < text.length; j++) out[at++] = text.charCodeAt(j);
    }
  }
  out[at++] = 0x5d; // ]
  return ASCII.decode(out.subarray(0, at));
}

/** The most lists an {@link IdListTexts} keeps (a samples payload repeats one or two). */
const MAX_KEPT_LISTS = 8;

/**
 * The texts of the id lists written for one payload, so that a list written twice is written once: the v2 samples
 * payload carries the session's accumulated ids and, in the active leaf's sample, an equal copy of them.
 */
export class IdListTexts {
  private readonly lists: (readonly number[])[] = [];
  private readonly texts: string[] = [];

  /** {@link safeIntegerArrayJson}`(values)`, reusing the text of an equal list written through this object. */
  text(values: readonly number[]): string {
    for (let k = 0; k < this.lists.length; k++) {
      if (sameIds(this.lists[k], values)) return this.texts[k];
    }
    const text = safeIntegerArrayJson(values);
    if (this.lists.length < MAX_KEPT_LISTS) {
      this.lists.push(values);
      this.texts.push(text);
    }
    return text;
  }
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
