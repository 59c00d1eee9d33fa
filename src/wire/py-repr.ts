// Python's repr()/str()/type().__name__ of JSON values in their JS form, for the error texts the servers copy from
// miles byte for byte. One implementation: escaping follows str.isprintable, key order the remembered Python order.
import { PyBigInt, PyFloat, pyObjectKeys } from "./py-json-values";

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

/** Python's `float.__repr__` (what json.dumps writes for a finite float): shortest round-trip digits, `1.0`, `1e-07`. */
export function pythonFloatRepr(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "Infinity";
  if (value === Number.NEGATIVE_INFINITY) return "-Infinity";
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const sign = value < 0 ? "-" : "";
  const [mantissa, exponentText] = Math.abs(value).toExponential().split("e");
  const exponent = Number(exponentText);
  const digits = mantissa.replace(".", "");
  if (exponent < -4 || exponent >= 16) {
    const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${head}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  if (digits.length <= exponent + 1) return `${sign}${digits}${"0".repeat(exponent + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
}

/** Python `repr(float)`: as {@link pythonFloatRepr}, with `nan`/`inf`/`-inf` for the non-finite values. */
function pyFloatRepr(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  return pythonFloatRepr(value);
}

/** Python `repr()` of a JSON value in its JS form (`None`, `True`, `1`, `1.0`, `'text'`, `{'a': [1, 2]}`). */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string") return pyStrRepr(value);
  if (typeof value === "number") {
    if (Number.isInteger(value) && !Object.is(value, -0)) return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
    return pyFloatRepr(value);
  }
  if (typeof value === "bigint") return value.toString();
  if (value instanceof PyFloat) return pyFloatRepr(value.value);
  if (value instanceof PyBigInt) return value.value.toString();
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (typeof value === "object") {
    return `{${pyObjectKeys(value)
      .map((key) => `${pyStrRepr(key)}: ${pyRepr((value as Record<string, unknown>)[key])}`)
      .join(", ")}}`;
  }
  return String(value);
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

/** Python truthiness of a JSON value in its JS form (`bool(x)`): empty containers, zeros, "" and None are false. */
export function isPyTruthy(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (value instanceof PyFloat) return value.value !== 0;
  if (value instanceof PyBigInt) return value.value !== 0n;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  if (typeof value === "number") return value !== 0; // NaN is truthy in Python too
  return Boolean(value);
}
