// Writes values as Python's json.dumps does: through JSON.stringify wherever that spells the same bytes (-0 and
// already-spelled texts marked and spliced), else through the recursive text writer.
import {
  asciiEscape,
  dumpsNumber,
  isNativeSpelledNumber,
  isNativeSpelledNumberArray,
  MAX_WRITE_DEPTH,
  NON_ASCII,
  PyJsonWriteError,
  sameDumpsOptions,
  SpelledPyJson,
  type PyDumpsOptions,
} from "./py-json-spelling";
import { PyJsonTextWriter } from "./py-json-text-writer";
import { PY_KEY_ORDER, PyBigInt, PyFloat, pyObjectKeys } from "./py-json-values";
import { pythonFloatRepr } from "./py-repr";

/**
 * Serializes `value` byte for byte as Python's `json.dumps` with the given settings would serialize the value Python
 * holds for it (see {@link PyFloat}, {@link PyBigInt}, the remembered key order). `undefined` object values are
 * skipped, as `JSON.stringify` does.
 * @throws PyJsonWriteError for NaN/Infinity when `allowNan` is false, and for values JSON cannot hold
 */
export function dumpsPy(value: unknown, options: PyDumpsOptions): string {
  const pieces = nativePieces(value, options);
  if (pieces === undefined) return new PyJsonTextWriter(options).spell(value);
  if (pieces.length === 1) return pieces[0];
  let out = pieces[0];
  for (let k = 1; k < pieces.length; k++) out += pieces[k];
  return out;
}

/**
 * `Buffer.from(dumpsPy(value, options), "utf8")`, the same bytes, without joining the native write and the copies it
 * splices in into one string first: each piece goes into the buffer once, an ASCII one as its characters (the bytes
 * UTF-8 gives them). A session view is mostly copied texts, and UTF-8 encoding its joined text cost more than the copies.
 * @throws PyJsonWriteError as {@link dumpsPy} does
 */
export function dumpsPyBytes(value: unknown, options: PyDumpsOptions): Buffer {
  return utf8Bytes(nativePieces(value, options) ?? [new PyJsonTextWriter(options).spell(value)]);
}

/** The UTF-8 bytes of `pieces` joined (no piece may end inside a surrogate pair the next one completes). */
function utf8Bytes(pieces: readonly string[]): Buffer {
  const lengths = new Array<number>(pieces.length);
  let total = 0;
  for (let k = 0; k < pieces.length; k++) {
    lengths[k] = Buffer.byteLength(pieces[k], "utf8");
    total += lengths[k];
  }
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  // as many bytes as characters: all ASCII, whose Latin-1 bytes are their UTF-8 bytes (and a plain copy)
  for (let k = 0; k < pieces.length; k++) at += out.write(pieces[k], at, lengths[k], lengths[k] === pieces[k].length ? "latin1" : "utf8");
  return out;
}

/**
 * The native write of `value` under compact settings, as pieces whose concatenation is {@link dumpsPy}'s text: the
 * JSON.stringify text between the copies it splices in, alternating with those copies' texts. Undefined when the
 * recursive writer must answer instead.
 */
function nativePieces(value: unknown, options: PyDumpsOptions): string[] | undefined {
  // Python's default separators cannot come out of JSON.stringify for less than the recursive writer costs.
  if (!options.compact) return undefined;
  const zeros: unknown[] = [];
  const splices: unknown[] = [];
  if (isNativeSpelledValue(value, 0, zeros, splices, options) !== NATIVE_SPELLED) return undefined;
  let pieces: string[] | undefined;
  if (zeros.length === 0 && splices.length === 0) {
    const text = nativeStringify(value);
    pieces = text === undefined ? undefined : [text];
  } else {
    pieces = stringifyMarking(value, zeros, splices);
  }
  // Non-ASCII characters only occur inside strings and keys, so escaping every piece escapes exactly those.
  if (pieces !== undefined && options.ensureAscii) for (let k = 0; k < pieces.length; k++) pieces[k] = pieces[k].replace(NON_ASCII, asciiEscape);
  return pieces;
}

/**
 * Stands in for each `-0` (a log-prob of certainty, which JSON.stringify would write `0`) during a native write: a
 * double, so the container keeps its storage kind, whose text is then replaced by `-0.0`. The scan refuses values
 * that already hold it, and a text holding it anywhere else (inside a string) takes the writer.
 */
const NEGATIVE_ZERO_MARK = -1.2345678901234567e-301;
const NEGATIVE_ZERO_MARK_TEXT = String(NEGATIVE_ZERO_MARK);

/**
 * Stands in for each {@link SpelledPyJson} the native write copies (a reply, a request body): a string whose quoted
 * form is then replaced by the copied text. Each must occur once per copy, so a string that holds it elsewhere sends
 * the value to the writer.
 */
const SPLICE_MARK = "\u0000jest-session-parity:spelled\u0000";
const SPLICE_MARK_TEXT = JSON.stringify(SPLICE_MARK);

/** True when every slot (a container and a key, then `stride - 2` more items) is a plain writable data property of an unfrozen container. */
function writableSlots(slots: unknown[], stride: number): boolean {
  for (let i = 0; i < slots.length; i += stride) {
    const descriptor = Object.getOwnPropertyDescriptor(slots[i], slots[i + 1] as PropertyKey);
    if (descriptor === undefined || descriptor.writable !== true || Object.isFrozen(slots[i])) return false;
  }
  return true;
}

/**
 * `JSON.stringify(value)` with each `-0` at `zeros` (container, key pairs) written `-0.0` and each SpelledPyJson at
 * `splices` (container, key, copy triples, in the order the native writer meets them) written as its text: the
 * slots hold marks during the call and get their values back before it returns: the native text's pieces between
 * the copies, alternating with the copies' texts. Undefined when a slot is not a plain writable data property or a
 * mark's text turns up elsewhere; the writer then runs.
 */
function stringifyMarking(value: unknown, zeros: unknown[], splices: unknown[]): string[] | undefined {
  if (!writableSlots(zeros, 2) || !writableSlots(splices, 3)) return undefined;
  let text: string | undefined;
  try {
    for (let i = 0; i < zeros.length; i += 2) (zeros[i] as Record<PropertyKey, number>)[zeros[i + 1] as PropertyKey] = NEGATIVE_ZERO_MARK;
    for (let i = 0; i < splices.length; i += 3) (splices[i] as Record<PropertyKey, unknown>)[splices[i + 1] as PropertyKey] = SPLICE_MARK;
    text = nativeStringify(value);
  } finally {
    for (let i = 0; i < zeros.length; i += 2) (zeros[i] as Record<PropertyKey, number>)[zeros[i + 1] as PropertyKey] = -0;
    for (let i = 0; i < splices.length; i += 3) (splices[i] as Record<PropertyKey, unknown>)[splices[i + 1] as PropertyKey] = splices[i + 2];
  }
  if (text === undefined) return undefined;
  if (zeros.length > 0) {
    // the mark must occur exactly once per -0: then every one of them is a -0. Each replacement shortens the text by
    // the same count of characters, so the length tells how many there were, without a second pass.
    const replaced = text.replaceAll(NEGATIVE_ZERO_MARK_TEXT, "-0.0");
    const marks = (text.length - replaced.length) / (NEGATIVE_ZERO_MARK_TEXT.length - "-0.0".length);
    if (marks !== zeros.length / 2) return undefined;
    text = replaced;
  }
  if (splices.length === 0) return [text];
  // the quoted mark cannot overlap itself, and a string holding it adds an occurrence: as many pieces as copies plus
  // one means each piece boundary is a copy's place, in the order the scan met them (the native writer's order)
  const pieces = text.split(SPLICE_MARK_TEXT);
  if (pieces.length !== splices.length / 3 + 1) return undefined;
  const out = new Array<string>(2 * pieces.length - 1);
  out[0] = pieces[0];
  for (let k = 1; k < pieces.length; k++) {
    out[2 * k - 1] = (splices[3 * k - 1] as SpelledPyJson).text;
    out[2 * k] = pieces[k];
  }
  return out;
}

/** `JSON.stringify(value)` for a value the scan passed, or undefined should the native writer give up (its stack). */
function nativeStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined; // the recursive writer answers instead, with Python's error where there is one
  }
}

/** {@link isNativeSpelledValue}'s answers: refused, spelled by JSON.stringify, or a copy to splice in. */
const NATIVE_REFUSED = 0;
const NATIVE_SPELLED = 1;
const NATIVE_SPLICED = 2;

/**
 * NATIVE_SPELLED when `JSON.stringify` writes `node` exactly as {@link dumpsPyWriter} does with compact separators,
 * once each `-0` it holds is spelled `-0.0` (their container and key are pushed onto `zeros`) and each
 * {@link SpelledPyJson} written under `options` is replaced by its text (container, key and copy pushed onto
 * `splices`): only strings, booleans, null, numbers {@link isNativeSpelledNumber}, arrays and plain objects
 * (prototype `Object.prototype` or null, no remembered key order, no `toJSON`), nested at most
 * {@link MAX_WRITE_DEPTH} deep. NATIVE_SPLICED for such a copy itself (its container splices it). Builds no text and
 * stops at the first value it cannot vouch for (a marker, a bigint, a function, a class instance), which the writer
 * then spells or refuses.
 */
function isNativeSpelledValue(node: unknown, depth: number, zeros: unknown[], splices: unknown[], options: PyDumpsOptions): number {
  switch (typeof node) {
    case "string":
    case "boolean":
      return NATIVE_SPELLED;
    case "number":
      return isNativeSpelledNumber(node) ? NATIVE_SPELLED : NATIVE_REFUSED;
    case "object":
      break;
    default:
      return NATIVE_REFUSED;
  }
  if (node === null) return NATIVE_SPELLED;
  if (depth > MAX_WRITE_DEPTH || (node as { toJSON?: unknown }).toJSON !== undefined) return NATIVE_REFUSED;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const item: unknown = node[i];
      if (typeof item === "number") {
        if (isNativeSpelledNumber(item)) continue;
        if (item !== 0) return NATIVE_REFUSED;
        zeros.push(node, i);
      } else if (item !== undefined) {
        // a hole or an undefined item is null in both writers
        const answer = isNativeSpelledValue(item, depth + 1, zeros, splices, options);
        if (answer === NATIVE_REFUSED) return NATIVE_REFUSED;
        if (answer === NATIVE_SPLICED) splices.push(node, i, item);
      }
    }
    return NATIVE_SPELLED;
  }
  const prototype: unknown = Object.getPrototypeOf(node);
  if (prototype !== Object.prototype && prototype !== null) {
    return node instanceof SpelledPyJson && sameDumpsOptions(node.options, options) ? NATIVE_SPLICED : NATIVE_REFUSED;
  }
  const record = node as Record<string | typeof PY_KEY_ORDER, unknown>;
  if (record[PY_KEY_ORDER] !== undefined) return NATIVE_REFUSED;
  for (const key in record) {
    const item = record[key];
    if (typeof item === "number") {
      if (isNativeSpelledNumber(item)) continue;
      if (item !== 0) return NATIVE_REFUSED;
      zeros.push(node, key);
    } else if (item !== undefined) {
      // both writers skip an undefined value; a function is skipped by JSON.stringify but refused by Python
      const answer = isNativeSpelledValue(item, depth + 1, zeros, splices, options);
      if (answer === NATIVE_REFUSED) return NATIVE_REFUSED;
      if (answer === NATIVE_SPLICED) splices.push(node, key, item);
    }
  }
  return NATIVE_SPELLED;
}

/** The recursive writer behind {@link dumpsPy}: every value it accepts, in Python's spelling (tests compare the two). */
export function dumpsPyWriter(value: unknown, options: PyDumpsOptions): string {
  const itemSep = options.compact ? "," : ", ";
  const keySep = options.compact ? ":" : ": ";
  // Keys repeat across records (`token`, `logprob`, ...): each is spelled once per call.
  const spelledKeys = new Map<string, string>();
  const spellKey = (key: string): string => {
    let spelled = spelledKeys.get(key);
    if (spelled === undefined) {
      spelled = JSON.stringify(key) + keySep;
      spelledKeys.set(key, spelled);
    }
    return spelled;
  };
  const write = (node: unknown, depth: number): string => {
    switch (typeof node) {
      case "string":
        return JSON.stringify(node);
      case "number":
        return dumpsNumber(node, options);
      case "boolean":
        return node ? "true" : "false";
      case "bigint":
        return node.toString();
      case "object":
        break;
      default:
        throw new PyJsonWriteError(`Object of type ${typeof node} is not JSON serializable`);
    }
    if (node === null) return "null";
    if (depth > MAX_WRITE_DEPTH) throw new PyJsonWriteError("maximum recursion depth exceeded while encoding a JSON object");
    if (Array.isArray(node)) {
      if (node.length === 0) return "[]";
      if (isNativeSpelledNumberArray(node)) return options.compact ? JSON.stringify(node) : `[${node.join(", ")}]`;
      let text = "[";
      for (let i = 0; i < node.length; i++) {
        if (i > 0) text += itemSep;
        const item: unknown = node[i];
        text += write(item === undefined ? null : item, depth + 1);
      }
      return `${text}]`;
    }
    if (node instanceof SpelledPyJson) return sameDumpsOptions(node.options, options) ? node.text : write(node.value, depth);
    if (node instanceof PyFloat) return node.value === 0 || Number.isFinite(node.value) ? pythonFloatRepr(node.value) : dumpsNumber(node.value, options);
    if (node instanceof PyBigInt) return node.value.toString();
    const record = node as Record<string | typeof PY_KEY_ORDER, unknown>;
    const keys = record[PY_KEY_ORDER] === undefined ? Object.keys(node) : pyObjectKeys(node);
    let text = "{";
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const item = record[key];
      if (item === undefined) continue;
      if (!first) text += itemSep;
      text += spellKey(key) + write(item, depth + 1);
      first = false;
    }
    return `${text}}`;
  };
  const text = write(value, 0);
  // Strings and keys are spelled by JSON.stringify, and only they can hold non-ASCII characters: one pass escapes all.
  return options.ensureAscii ? text.replace(NON_ASCII, asciiEscape) : text;
}
