// Reads JSON the way Python's json.loads does and writes it back the way json.dumps(ensure_ascii=False) does.
// SGLang re-serializes tool-call arguments in Python, so the mock must reproduce its key order, spacing and numbers.
import { pythonFloatRepr } from "../wire/py-json";

export { pythonFloatRepr };

/** A parsed JSON value that keeps what Python would keep: key order, exact integers, float-ness. */
export type PyJsonValue =
  | { readonly kind: "object"; readonly entries: Map<string, PyJsonValue> }
  | { readonly kind: "array"; readonly items: PyJsonValue[] }
  | { readonly kind: "string"; readonly value: string }
  | { readonly kind: "int"; readonly digits: string }
  | { readonly kind: "float"; readonly value: number }
  | { readonly kind: "bool"; readonly value: boolean }
  | { readonly kind: "null" };

/** Thrown by {@link parsePyJson} for text Python's `json.loads` would reject. */
export class PyJsonDecodeError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at char ${position}`);
    this.name = "PyJsonDecodeError";
  }
}

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const NUMBER_PATTERN = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;

/** Parses JSON text with Python's rules (NaN/Infinity accepted, duplicate keys keep the first position). */
export function parsePyJson(text: string): PyJsonValue {
  const reader = new Reader(text);
  reader.skipWhitespace();
  const value = reader.readValue();
  reader.skipWhitespace();
  if (reader.position !== text.length) throw new PyJsonDecodeError("Extra data", reader.position);
  return value;
}

class Reader {
  position = 0;
  constructor(private readonly text: string) {}

  skipWhitespace(): void {
    while (this.position < this.text.length && WHITESPACE.has(this.text[this.position])) this.position += 1;
  }

  readValue(): PyJsonValue {
    const char = this.text[this.position];
    if (char === "{") return this.readObject();
    if (char === "[") return this.readArray();
    if (char === '"') return { kind: "string", value: this.readString() };
    for (const [literal, value] of LITERALS) {
      if (this.text.startsWith(literal, this.position)) {
        this.position += literal.length;
        return value;
      }
    }
    return this.readNumber();
  }

  private readObject(): PyJsonValue {
    const entries = new Map<string, PyJsonValue>();
    this.position += 1;
    this.skipWhitespace();
    if (this.text[this.position] === "}") {
      this.position += 1;
      return { kind: "object", entries };
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text[this.position] !== '"') throw new PyJsonDecodeError("Expecting property name enclosed in double quotes", this.position);
      const key = this.readString();
      this.skipWhitespace();
      if (this.text[this.position] !== ":") throw new PyJsonDecodeError("Expecting ':' delimiter", this.position);
      this.position += 1;
      this.skipWhitespace();
      entries.set(key, this.readValue());
      this.skipWhitespace();
      const separator = this.text[this.position];
      this.position += 1;
      if (separator === "}") return { kind: "object", entries };
      if (separator !== ",") throw new PyJsonDecodeError("Expecting ',' delimiter", this.position - 1);
    }
  }

  private readArray(): PyJsonValue {
    const items: PyJsonValue[] = [];
    this.position += 1;
    this.skipWhitespace();
    if (this.text[this.position] === "]") {
      this.position += 1;
      return { kind: "array", items };
    }
    for (;;) {
      this.skipWhitespace();
      items.push(this.readValue());
      this.skipWhitespace();
      const separator = this.text[this.position];
      this.position += 1;
      if (separator === "]") return { kind: "array", items };
      if (separator !== ",") throw new PyJsonDecodeError("Expecting ',' delimiter", this.position - 1);
    }
  }

  private readString(): string {
    const start = this.position;
    let index = start + 1;
    while (index < this.text.length) {
      const char = this.text[index];
      if (char === "\\") index += 2;
      else if (char === '"') break;
      else index += 1;
    }
    if (index >= this.text.length) throw new PyJsonDecodeError("Unterminated string starting", start);
    this.position = index + 1;
    try {
      return JSON.parse(this.text.slice(start, index + 1)) as string;
    } catch {
      throw new PyJsonDecodeError("Invalid string", start);
    }
  }

  private readNumber(): PyJsonValue {
    NUMBER_PATTERN.lastIndex = this.position;
    const match = NUMBER_PATTERN.exec(this.text);
    if (!match) throw new PyJsonDecodeError("Expecting value", this.position);
    this.position += match[0].length;
    if (match[1] === undefined && match[2] === undefined) {
      return { kind: "int", digits: match[0] === "-0" ? "0" : match[0] };
    }
    return { kind: "float", value: Number(match[0]) };
  }
}

const LITERALS: ReadonlyArray<readonly [string, PyJsonValue]> = [
  ["true", { kind: "bool", value: true }],
  ["false", { kind: "bool", value: false }],
  ["null", { kind: "null" }],
  ["NaN", { kind: "float", value: Number.NaN }],
  ["Infinity", { kind: "float", value: Number.POSITIVE_INFINITY }],
  ["-Infinity", { kind: "float", value: Number.NEGATIVE_INFINITY }],
];

/** Serializes like Python's `json.dumps(value, ensure_ascii=False)`: `", "` and `": "` separators, repr floats. */
export function dumpPyJson(value: PyJsonValue): string {
  switch (value.kind) {
    case "object": {
      const parts: string[] = [];
      for (const [key, item] of value.entries) parts.push(`${JSON.stringify(key)}: ${dumpPyJson(item)}`);
      return `{${parts.join(", ")}}`;
    }
    case "array":
      return `[${value.items.map(dumpPyJson).join(", ")}]`;
    case "string":
      return JSON.stringify(value.value);
    case "int":
      return value.digits;
    case "float":
      return pythonFloatRepr(value.value);
    case "bool":
      return value.value ? "true" : "false";
    case "null":
      return "null";
  }
}

/** Python truthiness of a parsed value (`bool(x)`). */
export function isPyTruthy(value: PyJsonValue | undefined): boolean {
  if (value === undefined) return false;
  switch (value.kind) {
    case "object":
      return value.entries.size > 0;
    case "array":
      return value.items.length > 0;
    case "string":
      return value.value.length > 0;
    case "int":
      return value.digits !== "0";
    case "float":
      return value.value !== 0;
    case "bool":
      return value.value;
    case "null":
      return false;
  }
}
