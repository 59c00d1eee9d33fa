// Renders bitwise differences as one line per leaf (`path: left vs right`), float64 bits in hex, signed zeros spelled.
// Shared by toBeBitwiseEqual, the payload-parity matchers and the CLI so every report reads the same.
import { MISSING, type BitwiseDifference } from "./bitwise-types";
import { float64Hex } from "./float-bits";
import { Tensor } from "../wire/tensor";
import { Sample } from "../wire/sample";
import { PyBigInt, PyFloat, pyNumberKind } from "../wire/py-json-values";
import { pythonFloatRepr } from "../wire/py-repr";

/** A hint when a `Sample` meets a plain object (typically a JSON golden file read back): convert the JSON first. */
function sampleVersusPlainHint(left: unknown, right: unknown): string {
  const plain = (value: unknown): boolean => value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype;
  if ((left instanceof Sample && plain(right)) || (right instanceof Sample && plain(left))) {
    return " (a Sample only equals a Sample: build one from the plain JSON with Sample.fromDict(json))";
  }
  return "";
}

/** Options of {@link formatDifferences}. */
export interface FormatDifferencesOptions {
  /** Maximum number of lines (default 10). */
  limit?: number;
  /** Prefix of every line (default none). */
  indent?: string;
}

const FLOAT_KINDS = new Set(["Float64Array", "Float32Array", "F16", "BF16"]);
const STRING_PREVIEW = 60;
const STRING_CONTEXT = 24;

/**
 * One line per difference, at most `limit` of them, e.g.
 * `sample.rollout_log_probs[17]: 0x3fe0000000000000 (0.5) vs 0x3fe0000000000001 (0.5000000000000001)`,
 * `sample.reward: +0 vs -0`, `sample.metadata.leaf: missing on the right`.
 */
export function formatDifferences(differences: readonly BitwiseDifference[], options: FormatDifferencesOptions = {}): string {
  const limit = options.limit ?? 10;
  const indent = options.indent ?? "";
  return differences
    .slice(0, limit)
    .map((difference) => indent + formatDifference(difference))
    .join("\n");
}

/**
 * The closing count line: `3 differences in total` (plus which ones were shown when not all were). `aligned`: some
 * of them belong to sequences listed above as aligned runs (only the others were listed one by one).
 */
export function formatDifferenceCount(total: number, shown: number, aligned = false): string {
  const count = `${total} ${total === 1 ? "difference" : "differences"} in total`;
  if (aligned)
    return `${count}, position by position (${shown === 0 ? "every one inside the aligned runs above" : `${shown} listed; the rest inside the aligned runs above or past the first ones kept`})`;
  return shown < total ? `${count} (the first ${shown} shown)` : count;
}

/** An element of a routing-replay tensor: `...rollout_routed_experts[row, layer, slot]`. */
const REPLAY_ELEMENT = /\.(rollout_routed_experts|rollout_indexer_topk)\[(\d+), (\d+), (\d+)\]$/;

/** One difference as `path: description`; a routing-replay element also names its tensor, row, layer and slot. */
export function formatDifference(difference: BitwiseDifference): string {
  const replay = REPLAY_ELEMENT.exec(difference.path);
  const where = replay === null ? "" : ` (${replay[1]}: token row ${replay[2]}, layer ${replay[3]}, top-k slot ${replay[4]})`;
  return `${difference.path}: ${describeDifference(difference)}${where}`;
}

/** The part of a difference line after the path. */
function describeDifference(difference: BitwiseDifference): string {
  const { reason, left, right } = difference;
  if ((reason === "value" || reason === "type") && (isKinded(left) || isKinded(right)) && pyNumberKind(left) && pyNumberKind(right)) {
    return `${formatPyNumber(left)} vs ${formatPyNumber(right)}`;
  }
  switch (reason) {
    case "value":
      if (typeof left === "string" && typeof right === "string") return describeStringDifference(left, right);
      return `${formatLeaf(left, difference.leftBits, difference.elementKind)} vs ${formatLeaf(right, difference.rightBits, difference.elementKind)}`;
    case "type":
      return `${describeTyped(left)} vs ${describeTyped(right)}${sampleVersusPlainHint(left, right)}`;
    case "missing":
      return left === MISSING ? "missing on the left" : "missing on the right";
    case "length":
      return `length ${lengthOf(left)} vs ${lengthOf(right)}`;
    case "dtype":
      return `dtype ${String(left)} vs ${String(right)}`;
    case "shape":
      return `shape ${formatShape(left)} vs ${formatShape(right)}`;
    case "undeclared":
    case "projection":
      return difference.detail ?? reason;
  }
}

function isKinded(value: unknown): boolean {
  return value instanceof PyFloat || value instanceof PyBigInt;
}

/**
 * A number with the kind Python holds for it, as the seed's bit tree tells them apart: `int 1`,
 * `int 9007199254740993`, `float 1.0 (0x3ff0000000000000)`, `float -0.0 (0x8000000000000000)`.
 */
function formatPyNumber(value: unknown): string {
  if (value instanceof PyBigInt) return `int ${value.value}`;
  const number = value instanceof PyFloat ? value.value : (value as number);
  if (pyNumberKind(value) === "int") return `int ${Number.isSafeInteger(number) ? String(number) : BigInt(number).toString()}`;
  return `float ${pythonFloatRepr(number)} (0x${float64Hex(number)})`;
}

/**
 * A leaf value as reports print it: numbers as float64 bits in hex with the decimal value
 * (`0x3fe0000000000000 (0.5)`), zeros as `+0`/`-0`; integer typed-array elements in decimal;
 * strings JSON-quoted (long ones shortened); other values by a short description.
 */
function formatLeaf(value: unknown, bits?: string, elementKind?: string): string {
  if (value === MISSING) return "missing";
  if (typeof value === "number") {
    const isFloat = elementKind === undefined || FLOAT_KINDS.has(elementKind);
    if (!isFloat) return bits === undefined ? String(value) : `0x${bits} (${value})`;
    if (value === 0) return Object.is(value, -0) ? "-0" : "+0";
    return `0x${bits ?? float64Hex(value)} (${String(value)})`;
  }
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "string") return quote(value);
  if (isKinded(value)) return formatPyNumber(value);
  return describeValue(value);
}

/** Short description of any value: `Array(3)`, `Float64Array(8)`, `Tensor(I32, [2, 3])`, `Object {a, b}`, `Sample`, ... */
export function describeValue(value: unknown): string {
  if (value === MISSING) return "missing";
  if (value === null) return "null";
  switch (typeof value) {
    case "undefined":
      return "undefined";
    case "number":
    case "bigint":
    case "string":
      return formatLeaf(value);
    case "boolean":
      return String(value);
    case "symbol":
      return value.toString();
    case "function":
      return `function ${value.name || "(anonymous)"}`;
    default:
      break;
  }
  if (Array.isArray(value)) return `Array(${value.length})`;
  if (ArrayBuffer.isView(value)) {
    const kind = Object.prototype.toString.call(value).slice(8, -1);
    return "length" in value ? `${kind}(${(value as { length: number }).length})` : kind;
  }
  if (value instanceof Tensor) return `Tensor(${value.dtype}, ${formatShape(value.shape)})`;
  if (isKinded(value)) return formatPyNumber(value);
  if (value instanceof Map) return `Map(${value.size})`;
  const proto: unknown = Object.getPrototypeOf(value);
  const ctorName = (proto as { constructor?: { name?: string } } | null)?.constructor?.name;
  if (proto === null || ctorName === "Object") {
    const keys = Object.keys(value);
    const shown = keys.slice(0, 5).join(", ");
    return keys.length === 0 ? "Object {}" : `Object {${shown}${keys.length > 5 ? `, … ${keys.length - 5} more` : ""}}`;
  }
  return ctorName || Object.prototype.toString.call(value).slice(8, -1);
}

function describeTyped(value: unknown): string {
  switch (typeof value) {
    case "number":
    case "string":
    case "boolean":
    case "bigint":
      return `${typeof value} ${formatLeaf(value)}`;
    default:
      return describeValue(value);
  }
}

function describeStringDifference(left: string, right: string): string {
  if (left.length <= STRING_PREVIEW && right.length <= STRING_PREVIEW) return `${quote(left)} vs ${quote(right)}`;
  let at = 0;
  while (at < left.length && at < right.length && left.charCodeAt(at) === right.charCodeAt(at)) at++;
  const from = Math.max(0, at - STRING_CONTEXT);
  const excerpt = (s: string): string =>
    `${from > 0 ? "…" : ""}${JSON.stringify(s.slice(from, at + STRING_CONTEXT))}${at + STRING_CONTEXT < s.length ? "…" : ""}`;
  return `strings differ at index ${at} (lengths ${left.length} vs ${right.length}): ${excerpt(left)} vs ${excerpt(right)}`;
}

function quote(value: string): string {
  if (value.length <= STRING_PREVIEW) return JSON.stringify(value);
  return `${JSON.stringify(value.slice(0, STRING_PREVIEW))}… (${value.length} chars)`;
}

function lengthOf(value: unknown): string {
  const length = (value as { length?: unknown } | null)?.length;
  return typeof length === "number" ? String(length) : describeValue(value);
}

function formatShape(shape: unknown): string {
  return Array.isArray(shape) ? `[${shape.join(", ")}]` : String(shape);
}
