// The recursive json.dumps writer for what JSON.stringify cannot spell as Python does (int32 arrays written straight
// into a scratch buffer, floats through repr, ensure_ascii escapes, refused NaN and too-deep nesting).
import {
  asciiEscape,
  dumpsNumber,
  isNativeSpelledNumberArray,
  MAX_WRITE_DEPTH,
  NEEDS_ESCAPE,
  NON_ASCII,
  PyJsonWriteError,
  sameDumpsOptions,
  SpelledPyJson,
  type PyDumpsOptions,
} from "./py-json-spelling";
import { PY_KEY_ORDER, PyBigInt, PyFloat, pyObjectKeys } from "./py-json-values";
import { pythonFloatRepr } from "./py-repr";

/** From this length on an array is tried as int32s (token ids): below it, `join` costs no more than the check. */
const INT32_ARRAY_MIN_LENGTH = 16;
/** Bytes one int32 and a separator can take (`-2147483648, `). */
const INT32_SPELLED_MAX = 13;
/** The reused buffer grows to this size at most (80,000 ids); a longer array gets a buffer of its own. */
const INT32_SCRATCH_MAX_BYTES = 1 << 20;
let int32Scratch = Buffer.allocUnsafeSlow(4096);
/** Counts the writes into the scratch buffer, so a write that another one (an index getter's) interrupted can tell. */
let int32ScratchWrites = 0;

/**
 * `[a, b, ...]` with `separator` when every item is an int32 other than -0 (Python's repr of an int is its decimal
 * digits, as `String` gives them), else undefined. The digits go into one reused byte buffer and come out as one
 * string, where `join` makes a string per number: a prompt's 250-600 token ids cost half as much.
 */
function spellInt32Array(array: readonly unknown[], separator: string): string | undefined {
  const need = 2 + array.length * INT32_SPELLED_MAX;
  if (need > INT32_SCRATCH_MAX_BYTES) return writeInt32Array(array, separator, Buffer.allocUnsafe(need));
  if (int32Scratch.length < need) int32Scratch = Buffer.allocUnsafeSlow(Math.min(Math.max(need, int32Scratch.length * 2), INT32_SCRATCH_MAX_BYTES));
  const write = ++int32ScratchWrites;
  const text = writeInt32Array(array, separator, int32Scratch);
  // another write went into the buffer meanwhile (from an index getter): this one's bytes may be gone, so again
  return write === int32ScratchWrites ? text : writeInt32Array(array, separator, Buffer.allocUnsafe(need));
}

function writeInt32Array(array: readonly unknown[], separator: string, out: Buffer): string | undefined {
  const spaced = separator.length === 2;
  let at = 0;
  out[at++] = 0x5b;
  for (let i = 0; i < array.length; i++) {
    const item = array[i];
    if (typeof item !== "number" || (item | 0) !== item || (item === 0 && 1 / item < 0)) return undefined;
    if (i > 0) {
      out[at++] = 0x2c;
      if (spaced) out[at++] = 0x20;
    }
    let n = item;
    if (n < 0) {
      out[at++] = 0x2d;
      n = -n; // 2^31 for -2^31: still exact, and its digits are the same
    }
    const end = at + decimalDigits(n);
    at = end;
    for (let j = end - 1; ; j--) {
      const q = Math.floor(n / 10);
      out[j] = 0x30 + n - q * 10;
      if (q === 0) break;
      n = q;
    }
  }
  out[at++] = 0x5d;
  return out.toString("latin1", 0, at);
}

/** How many decimal digits `n` (0 <= n <= 2^31) has. */
function decimalDigits(n: number): number {
  if (n < 100000) return n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : 5;
  return n < 1000000 ? 6 : n < 10000000 ? 7 : n < 100000000 ? 8 : n < 1000000000 ? 9 : 10;
}

/**
 * {@link dumpsPyWriter}'s rules with cheaper mechanics, for what the native path does not take (every value under
 * Python's default separators): a string that needs no escape is quoted as it is (tested by one regex, instead of a
 * JSON.stringify call), keys are spelled without a cache, `ensure_ascii` escapes only the strings JSON.stringify
 * spelled (the others are printable ASCII) instead of a pass over the whole text, and token-id arrays are spelled
 * by {@link spellInt32Array}. Tests compare it with the reference.
 */
export class PyJsonTextWriter {
  private readonly itemSep: string;
  private readonly keySep: string;

  constructor(private readonly options: PyDumpsOptions) {
    this.itemSep = options.compact ? "," : ", ";
    this.keySep = options.compact ? ":" : ": ";
  }

  spell(value: unknown): string {
    return this.write(value, 0);
  }

  /** JSON.stringify's spelling with `ensure_ascii`'s escapes: the reference's one pass over the text, piece by piece. */
  private string(text: string): string {
    if (!NEEDS_ESCAPE.test(text)) return `"${text}"`;
    const spelled = JSON.stringify(text);
    return this.options.ensureAscii ? spelled.replace(NON_ASCII, asciiEscape) : spelled;
  }

  private write(node: unknown, depth: number): string {
    switch (typeof node) {
      case "string":
        return this.string(node);
      case "number":
        return dumpsNumber(node, this.options);
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
    if (Array.isArray(node)) return this.array(node, depth);
    if (node instanceof SpelledPyJson) {
      if (!sameDumpsOptions(node.options, this.options)) return this.write(node.value, depth);
      return this.options.ensureAscii ? node.text.replace(NON_ASCII, asciiEscape) : node.text; // as the reference's pass does
    }
    if (node instanceof PyFloat) return node.value === 0 || Number.isFinite(node.value) ? pythonFloatRepr(node.value) : dumpsNumber(node.value, this.options);
    if (node instanceof PyBigInt) return node.value.toString();
    return this.object(node as Record<string | typeof PY_KEY_ORDER, unknown>, depth);
  }

  private array(node: readonly unknown[], depth: number): string {
    if (node.length === 0) return "[]";
    if (node.length >= INT32_ARRAY_MIN_LENGTH) {
      const ints = spellInt32Array(node, this.itemSep);
      if (ints !== undefined) return ints;
    }
    if (isNativeSpelledNumberArray(node)) return this.options.compact ? JSON.stringify(node) : `[${node.join(", ")}]`;
    let text = "[";
    for (let i = 0; i < node.length; i++) {
      if (i > 0) text += this.itemSep;
      const item: unknown = node[i];
      text += this.write(item === undefined ? null : item, depth + 1);
    }
    return `${text}]`;
  }

  private object(record: Record<string | typeof PY_KEY_ORDER, unknown>, depth: number): string {
    const keys = record[PY_KEY_ORDER] === undefined ? Object.keys(record) : pyObjectKeys(record);
    let text = "{";
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const item = record[key];
      if (item === undefined) continue;
      if (!first) text += this.itemSep;
      text += this.string(key) + this.keySep + this.write(item, depth + 1);
      first = false;
    }
    return `${text}}`;
  }
}
