// Python's repr() for the few values the Python session server interpolates into its error texts (a role, a list
// of token ids, a set of roles, a type name), so our refusals carry the same bytes a client of miles sees.
import { PyBigInt, PyFloat } from "../wire/py-json";

/** Characters Python's str.isprintable() rejects (control, format, separators other than space, private, unassigned). */
const NOT_PRINTABLE = /^[\p{Cc}\p{Cf}\p{Zs}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}]$/u;

function pyEscape(code: number): string {
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, "0")}`;
  return `\\U${code.toString(16).padStart(8, "0")}`;
}

/** Python `repr(s)` of a str: single quotes unless the text holds `'` and no `"`, Python's escapes. */
export function pyStrRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (char === quote || char === "\\") out += `\\${char}`;
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (char === "\t") out += "\\t";
    else if (char !== " " && NOT_PRINTABLE.test(char)) out += pyEscape(code);
    else out += char;
  }
  return out + quote;
}

/** Python `repr()` of a JSON-like scalar or list: None, True/False, ints, str, lists of those. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string") return pyStrRepr(value);
  if (typeof value === "number") return Number.isInteger(value) && !Object.is(value, -0) ? String(value) : pyFloatRepr(value);
  if (value instanceof PyFloat) return pyFloatRepr(value.value);
  if (value instanceof PyBigInt) return value.value.toString();
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (typeof value === "object") {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([key, item]) => `${pyStrRepr(key)}: ${pyRepr(item)}`)
      .join(", ")}}`;
  }
  return String(value);
}

/** Python `repr(float)`: shortest round-trip digits, exponent from 1e16 and below 1e-4, `.0` on integral values. */
function pyFloatRepr(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  if (Object.is(value, -0)) return "-0.0";
  const abs = Math.abs(value);
  if (abs >= 1e16 || abs < 1e-4) {
    const [mantissa, exponent] = value.toExponential().split("e");
    const exp = Number(exponent);
    return `${mantissa}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  const text = String(value);
  return text.includes(".") ? text : `${text}.0`;
}

/** Python `str()` of a value formatted into an f-string: a str as is, anything else as its repr. */
export function pyStr(value: unknown): string {
  return typeof value === "string" ? value : pyRepr(value);
}

/** Python `repr(frozenset(roles))` with the roles in the given order (Python's own order depends on the hash seed). */
export function pyFrozensetRepr(items: Iterable<string>): string {
  const parts = [...items].map(pyStrRepr);
  return parts.length === 0 ? "frozenset()" : `frozenset({${parts.join(", ")}})`;
}

/** Python `type(value).__name__` of a JSON-like value as a Python matcher or hook would have returned it. */
export function pyTypeName(value: unknown): string {
  if (value === null || value === undefined) return "NoneType";
  if (typeof value === "boolean") return "bool";
  if (value instanceof PyBigInt) return "int";
  if (value instanceof PyFloat) return "float";
  if (typeof value === "number") return Number.isInteger(value) && !Object.is(value, -0) ? "int" : "float";
  if (typeof value === "string") return "str";
  if (typeof value === "bigint") return "int";
  if (Array.isArray(value)) return "list";
  if (typeof value === "function") return "function";
  return "dict";
}
