// Reads a Python literal the way `ast.literal_eval` does, for the qwen3_coder parser's last-resort value conversion.
// Pure text logic; what Python evaluates but JSON cannot hold (sets, bytes, complex, Ellipsis) is reported apart.
import { pyFloatValue, pyIntValue, pyObjectFromEntries, pythonFloatRepr, type PyJson } from "../wire/py-json";

/** The text is not a Python literal (`ast.literal_eval` raises): the caller keeps the text as a string. */
export class PyLiteralError extends Error {
  override readonly name = "PyLiteralError";
}

/**
 * The text is a Python literal, but of a type `json.dumps` refuses (set, bytes, complex, Ellipsis): SGLang's
 * detector then fails as a whole and the completion stays plain text.
 */
export class PyLiteralNotJsonError extends Error {
  override readonly name = "PyLiteralNotJsonError";
}

/** What the reader builds before it is known whether JSON can hold it (an int keeps its exact digits). */
type Literal =
  | { readonly kind: "string"; readonly value: string }
  | { readonly kind: "int"; readonly digits: string }
  | { readonly kind: "float"; readonly value: number }
  | { readonly kind: "bool"; readonly value: boolean }
  | { readonly kind: "null" }
  | { readonly kind: "list" | "tuple"; readonly items: Literal[] }
  | { readonly kind: "set" | "bytes" | "complex" | "ellipsis" }
  | { readonly kind: "dict"; readonly entries: ReadonlyArray<readonly [Literal, Literal]> };

type Token =
  | { type: "op"; text: string }
  | { type: "name"; text: string }
  | { type: "number"; value: Literal }
  | { type: "string"; text: string; bytes: boolean }
  | { type: "end" };

const DECIMAL_INT = /^(?:[1-9](?:_?\d)*|0(?:_?0)*)/;
const RADIX_INT = /^0(?:[xX](?:_?[0-9a-fA-F])+|[oO](?:_?[0-7])+|[bB](?:_?[01])+)/;
const DIGITS = String.raw`\d(?:_?\d)*`;
const FLOAT = new RegExp(String.raw`^(?:(?:${DIGITS})?\.${DIGITS}|${DIGITS}\.)(?:[eE][-+]?${DIGITS})?|^${DIGITS}[eE][-+]?${DIGITS}`);
const IMAGINARY_SUFFIX = /^[jJ]/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
const STRING_PREFIX = /^(?:[rRuUbBfF]|[bB][rR]|[rR][bB]|[fF][rR]|[rR][fF])?(?='|")/;
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\",
  "'": "'",
  '"': '"',
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
};

/** Splits source text into Python tokens; newlines count as blanks only inside brackets (as in Python). */
class Lexer {
  private position = 0;
  private depth = 0;
  private peeked: Token | undefined;

  constructor(private readonly source: string) {}

  peek(): Token {
    this.peeked ??= this.read();
    return this.peeked;
  }

  next(): Token {
    const token = this.peek();
    this.peeked = undefined;
    if (token.type === "op") {
      if ("([{".includes(token.text)) this.depth += 1;
      if (")]}".includes(token.text)) this.depth = Math.max(0, this.depth - 1);
    }
    return token;
  }

  private skipBlanks(): void {
    const text = this.source;
    while (this.position < text.length) {
      const char = text[this.position];
      if (char === " " || char === "\t" || char === "\f") this.position += 1;
      else if (char === "\\" && text[this.position + 1] === "\n") this.position += 2;
      else if (char === "#") while (this.position < text.length && text[this.position] !== "\n") this.position += 1;
      else if (char === "\n" || char === "\r") {
        // outside brackets a line break ends the expression: only empty or comment lines may follow it
        if (this.depth === 0 && !/^(?:[\r\n]|#[^\n]*)*$/.test(text.slice(this.position + 1))) {
          throw new PyLiteralError("invalid syntax (line break)");
        }
        this.position += 1;
      } else break;
    }
  }

  private read(): Token {
    this.skipBlanks();
    const rest = this.source.slice(this.position);
    if (rest.length === 0) return { type: "end" };
    const prefix = STRING_PREFIX.exec(rest);
    if (prefix) return this.readString(prefix[0]);
    const number = this.readNumber(rest);
    if (number) return number;
    const name = NAME.exec(rest);
    if (name) {
      this.position += name[0].length;
      return { type: "name", text: name[0] };
    }
    if (rest.startsWith("...")) {
      this.position += 3;
      return { type: "op", text: "..." };
    }
    const char = rest[0];
    if ("()[]{},:+-".includes(char)) {
      this.position += 1;
      return { type: "op", text: char };
    }
    throw new PyLiteralError(`invalid syntax at ${JSON.stringify(char)}`);
  }

  private readNumber(rest: string): Token | undefined {
    const float = FLOAT.exec(rest);
    const radix = float ? null : RADIX_INT.exec(rest);
    const decimal = float || radix ? null : DECIMAL_INT.exec(rest);
    const match = float ?? radix ?? decimal;
    if (!match) {
      if (/^\d/.test(rest)) throw new PyLiteralError("invalid decimal literal");
      return undefined;
    }
    const length = match[0].length;
    const after = rest.slice(length);
    if (!radix && IMAGINARY_SUFFIX.test(after)) {
      this.position += length + 1;
      return { type: "number", value: { kind: "complex" } };
    }
    if (/^[A-Za-z0-9_]/.test(after)) throw new PyLiteralError("invalid number literal");
    this.position += length;
    const text = match[0].replace(/_/g, "");
    if (float) return { type: "number", value: { kind: "float", value: Number(text) } };
    return { type: "number", value: { kind: "int", digits: BigInt(text).toString() } };
  }

  private readString(prefix: string): Token {
    const flags = prefix.toLowerCase();
    if (flags.includes("f")) throw new PyLiteralError("f-strings are not literals");
    const raw = flags.includes("r");
    const bytes = flags.includes("b");
    const text = this.source;
    let index = this.position + prefix.length;
    const quote = text.startsWith(text[index].repeat(3), index) ? text[index].repeat(3) : text[index];
    index += quote.length;
    let value = "";
    for (;;) {
      if (index >= text.length) throw new PyLiteralError("unterminated string literal");
      if (text.startsWith(quote, index)) break;
      const char = text[index];
      if (char === "\n" && quote.length === 1) throw new PyLiteralError("unterminated string literal");
      if (char !== "\\") {
        if (bytes && char.charCodeAt(0) > 0x7f) throw new PyLiteralError("bytes can only contain ASCII literal characters");
        value += char;
        index += 1;
        continue;
      }
      const escaped = text[index + 1];
      if (escaped === undefined) throw new PyLiteralError("unterminated string literal");
      if (raw) {
        value += char + escaped;
        index += 2;
        continue;
      }
      const [decoded, used] = decodeEscape(text, index, bytes);
      value += decoded;
      index += used;
    }
    this.position = index + quote.length;
    return { type: "string", text: value, bytes };
  }
}

/** One backslash escape of a non-raw literal at `index`: its text and how many characters it spans. */
function decodeEscape(text: string, index: number, bytes: boolean): [string, number] {
  const escaped = text[index + 1];
  if (escaped === "\n") return ["", 2];
  if (SIMPLE_ESCAPES[escaped] !== undefined) return [SIMPLE_ESCAPES[escaped], 2];
  const octal = /^[0-7]{1,3}/.exec(text.slice(index + 1));
  if (octal) return [String.fromCodePoint(parseInt(octal[0], 8)), 1 + octal[0].length];
  const hexLength = escaped === "x" ? 2 : !bytes && escaped === "u" ? 4 : !bytes && escaped === "U" ? 8 : 0;
  if (hexLength > 0) {
    const hex = text.slice(index + 2, index + 2 + hexLength);
    if (!new RegExp(`^[0-9a-fA-F]{${hexLength}}$`).test(hex)) throw new PyLiteralError(`truncated \\${escaped} escape`);
    const code = parseInt(hex, 16);
    if (code > 0x10ffff) throw new PyLiteralError("illegal Unicode character");
    return [String.fromCodePoint(code), 2 + hexLength];
  }
  if (!bytes && escaped === "N") throw new PyLiteralError("named Unicode escapes are not supported here");
  // an unknown escape keeps its backslash (Python only warns)
  return ["\\" + escaped, 2];
}

/** Recursive-descent reader over the tokens, allowing exactly what `ast.literal_eval` allows. */
class LiteralReader {
  constructor(private readonly lexer: Lexer) {}

  readTop(): Literal {
    const value = this.readExpression();
    if (this.lexer.peek().type !== "end") throw new PyLiteralError("invalid syntax after the literal");
    return value;
  }

  /** An expression, where a bare comma list is a tuple (`1, 2`). */
  private readExpression(): Literal {
    const first = this.readOperand();
    if (!this.isOp(",")) return first;
    const items = [first];
    while (this.isOp(",")) {
      this.lexer.next();
      if (this.atClose() || this.lexer.peek().type === "end") break;
      items.push(this.readOperand());
    }
    return { kind: "tuple", items };
  }

  /** A value, possibly `real + imag j` / `real - imag j` (the only binary operation literal_eval accepts). */
  private readOperand(): Literal {
    const left = this.readSigned();
    if (!this.isOp("+") && !this.isOp("-")) return left;
    this.lexer.next();
    const right = this.readSigned();
    const isReal = left.kind === "int" || left.kind === "float";
    if (isReal && right.kind === "complex") return { kind: "complex" };
    throw new PyLiteralError("malformed node or string");
  }

  private readSigned(): Literal {
    if (this.isOp("+") || this.isOp("-")) {
      const sign = (this.lexer.next() as { text: string }).text;
      const token = this.lexer.next();
      if (token.type !== "number") throw new PyLiteralError("malformed node or string");
      return sign === "+" ? token.value : negate(token.value);
    }
    return this.readAtom();
  }

  private readAtom(): Literal {
    const token = this.lexer.next();
    switch (token.type) {
      case "number":
        return token.value;
      case "string":
        return this.readStrings(token);
      case "name":
        return this.readName(token.text);
      case "op":
        return this.readBracketed(token.text);
      case "end":
        throw new PyLiteralError("unexpected end of input");
    }
  }

  /** Adjacent string literals concatenate (`'a' 'b'`); str and bytes cannot mix. */
  private readStrings(first: { text: string; bytes: boolean }): Literal {
    let text = first.text;
    for (let next = this.lexer.peek(); next.type === "string"; next = this.lexer.peek()) {
      if (next.bytes !== first.bytes) throw new PyLiteralError("cannot mix bytes and nonbytes literals");
      text += next.text;
      this.lexer.next();
    }
    return first.bytes ? { kind: "bytes" } : { kind: "string", value: text };
  }

  private readName(name: string): Literal {
    if (name === "True") return { kind: "bool", value: true };
    if (name === "False") return { kind: "bool", value: false };
    if (name === "None") return { kind: "null" };
    if (name === "set" && this.isOp("(")) {
      this.lexer.next();
      if (!this.isOp(")")) throw new PyLiteralError("malformed node or string");
      this.lexer.next();
      return { kind: "set" };
    }
    throw new PyLiteralError(`malformed node or string: ${name}`);
  }

  private readBracketed(open: string): Literal {
    if (open === "...") return { kind: "ellipsis" };
    if (open === "(") {
      if (this.isOp(")")) {
        this.lexer.next();
        return { kind: "tuple", items: [] };
      }
      const inner = this.readExpression();
      this.expect(")");
      return inner;
    }
    if (open === "[") return { kind: "list", items: this.readItems("]") };
    if (open === "{") return this.readBraces();
    throw new PyLiteralError(`invalid syntax at ${JSON.stringify(open)}`);
  }

  private readItems(close: string): Literal[] {
    const items: Literal[] = [];
    while (!this.isOp(close)) {
      items.push(this.readOperand());
      if (this.isOp(",")) this.lexer.next();
      else if (!this.isOp(close)) throw new PyLiteralError("invalid syntax in a container");
    }
    this.lexer.next();
    return items;
  }

  /** `{}` and `{k: v, ...}` are dicts, `{a, b}` is a set. */
  private readBraces(): Literal {
    if (this.isOp("}")) {
      this.lexer.next();
      return { kind: "dict", entries: [] };
    }
    const first = this.readOperand();
    if (!this.isOp(":")) {
      const rest = this.isOp(",") ? (this.lexer.next(), this.readItems("}")) : (this.expect("}"), []);
      [first, ...rest].forEach(requireHashable);
      return { kind: "set" };
    }
    const entries: Array<readonly [Literal, Literal]> = [];
    let key = first;
    for (;;) {
      this.expect(":");
      requireHashable(key);
      entries.push([key, this.readOperand()]);
      if (this.isOp(",")) this.lexer.next();
      if (this.isOp("}")) break;
      key = this.readOperand();
    }
    this.lexer.next();
    return { kind: "dict", entries };
  }

  private isOp(text: string): boolean {
    const token = this.lexer.peek();
    return token.type === "op" && token.text === text;
  }

  private atClose(): boolean {
    return this.isOp(")") || this.isOp("]") || this.isOp("}");
  }

  private expect(text: string): void {
    if (!this.isOp(text)) throw new PyLiteralError(`expected ${JSON.stringify(text)}`);
    this.lexer.next();
  }
}

function negate(value: Literal): Literal {
  if (value.kind === "int")
    return { kind: "int", digits: value.digits === "0" ? "0" : value.digits.startsWith("-") ? value.digits.slice(1) : `-${value.digits}` };
  if (value.kind === "float") return { kind: "float", value: -value.value };
  return value;
}

/** Lists, dicts and sets cannot be dict keys or set members (Python raises TypeError, which literal_eval passes on). */
function requireHashable(value: Literal): void {
  if (value.kind === "list" || value.kind === "dict" || value.kind === "set") {
    throw new PyLiteralError("unhashable type");
  }
  if (value.kind === "tuple") value.items.forEach(requireHashable);
}

/** Python's hash-equality identity of a dict key: 1, 1.0 and True are one key, as are 0, -0.0 and False. */
function keyIdentity(key: Literal): string {
  switch (key.kind) {
    case "bool":
      return `n:${key.value ? 1 : 0}`;
    case "int":
      return `n:${key.digits}`;
    case "float":
      return Number.isInteger(key.value) ? `n:${BigInt(key.value).toString()}` : `f:${key.value}`;
    case "string":
      return `s:${key.value}`;
    case "null":
      return "none";
    case "tuple":
      return `t:(${key.items.map(keyIdentity).join(",")})`;
    default:
      return `o:${key.kind}`;
  }
}

/** How `json.dumps` spells a dict key (it turns numbers, booleans and None into strings, refuses tuples). */
function jsonKey(key: Literal): string {
  switch (key.kind) {
    case "string":
      return key.value;
    case "bool":
      return key.value ? "true" : "false";
    case "null":
      return "null";
    case "int":
      return key.digits;
    case "float":
      return pythonFloatRepr(key.value);
    default:
      throw new PyLiteralNotJsonError(`keys must be str, int, float, bool or None, not ${key.kind}`);
  }
}

/** Converts what the reader built into a JSON value, or throws {@link PyLiteralNotJsonError}. */
function toJson(value: Literal): PyJson {
  switch (value.kind) {
    case "list":
    case "tuple":
      return value.items.map(toJson);
    case "dict": {
      // a later equal key replaces the value but keeps the first key's place and spelling, as a Python dict does
      const byIdentity = new Map<string, { key: Literal; value: Literal }>();
      for (const [key, item] of value.entries) {
        const identity = keyIdentity(key);
        const existing = byIdentity.get(identity);
        if (existing) existing.value = item;
        else byIdentity.set(identity, { key, value: item });
      }
      const entries = new Map<string, PyJson>();
      for (const { key, value: item } of byIdentity.values()) {
        const converted = toJson(item);
        const name = jsonKey(key);
        // json.dumps would write both of two keys it spells alike (1 and "1"); a JSON object holds the first only
        if (!entries.has(name)) entries.set(name, converted);
      }
      return pyObjectFromEntries(entries);
    }
    case "set":
    case "bytes":
    case "complex":
    case "ellipsis":
      throw new PyLiteralNotJsonError(`Object of type ${value.kind} is not JSON serializable`);
    case "string":
    case "bool":
      return value.value;
    case "int":
      return pyIntValue(BigInt(value.digits));
    case "float":
      return pyFloatValue(value.value);
    case "null":
      return null;
  }
}

/**
 * `ast.literal_eval(text)` as a {@link PyJson} value (py-json's JS form): Python literals (numbers in every base, strings with escapes and
 * implicit concatenation, True/False/None, lists, tuples, dicts) read the way Python reads them.
 * @throws PyLiteralError when Python's literal_eval would raise (not a literal)
 * @throws PyLiteralNotJsonError when it evaluates to something json.dumps refuses
 */
export function literalEvalToJson(text: string): PyJson {
  // literal_eval strips leading spaces and tabs before parsing
  let source = text.replace(/^[ \t]+/, "");
  // blank and comment lines may come first, but the first line with code must not be indented
  for (let blank = /^[ \t\f]*(?:#[^\n]*)?\r?\n/.exec(source); blank; blank = /^[ \t\f]*(?:#[^\n]*)?\r?\n/.exec(source)) {
    source = source.slice(blank[0].length);
  }
  if (/^[ \t]/.test(source)) throw new PyLiteralError("unexpected indent");
  const value = new LiteralReader(new Lexer(source)).readTop();
  return toJson(value);
}
