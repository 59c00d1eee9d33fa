// Reads bit-tree snapshot text back into values, so a mismatch lists differing leaves and edge cases round-trip.
// Pure; a line that is not the format throws SnapshotTextError with the line number (the matcher adds the file).
import { ArrayDigest, TYPED_ARRAY_DTYPES } from "./array-digest";
import { readable } from "./bit-tree-text";
import { decodeBfloat16, decodeFloat16 } from "../matchers/float-bits";
import { PrefixCacheInfo, Sample, SpecInfo } from "../wire/sample";
import { DTYPE_ARRAY, Tensor, isDtype, type Dtype } from "../wire/tensor";
import { PyBigInt, PyFloat } from "../wire/py-json-values";
import { pythonFloatRepr } from "../wire/py-repr";

/** A snapshot text that is not in the bit-tree format; `line` is 1-based within the text. */
export class SnapshotTextError extends Error {
  constructor(
    /** 1-based line of the text where reading stopped. */
    readonly line: number,
    /** What is wrong there. */
    readonly problem: string,
  ) {
    super(`line ${line}: ${problem}`);
    this.name = "SnapshotTextError";
  }
}

/** Classes the reader rebuilds by name (others become a synthesized class with the same name and fields). */
const KNOWN_CLASSES: ReadonlyMap<string, { prototype: object; FIELDS: readonly string[] }> = new Map<string, { prototype: object; FIELDS: readonly string[] }>([
  ["Sample", Sample],
  ["SpecInfo", SpecInfo],
  ["PrefixCacheInfo", PrefixCacheInfo],
]);

const synthesized = new Map<string, { prototype: object }>();

const TYPED_NAMES = Object.keys(TYPED_ARRAY_DTYPES);
const ARRAY_LIKE = new RegExp(`^(Array|${TYPED_NAMES.join("|")})\\((\\d+)\\)( \\[\\]| \\[| length (\\d+) sha256 ([0-9a-f]{64})( stored)?)$`);
const TENSOR = /^Tensor ([A-Z0-9]+) \[([\d, ]*)\]( \[\]| \[| length (\d+) sha256 ([0-9a-f]{64})( stored)?)$/;
const BRACED = /^(Object|Map\((\d+)\)|[A-Za-z_$][\w$]*) (\{\}|\{)$/;
const BITS = /^0x([0-9a-f]{4}|[0-9a-f]{8}|[0-9a-f]{16}) \(([^()]*)\)/;
/** A Python float whose value is integral: `float 0x3ff0000000000000 (1.0)` (bits, then Python's repr). */
const PY_FLOAT = /^float 0x([0-9a-f]{16}) \(([^()]*)\)/;
/** A Python int past 2^53: `int 9007199254740993`. */
const PY_INT = /^int (-?(?:0|[1-9][0-9]*))(?![\w$])/;
const SCRATCH = new Float64Array(1);
const SCRATCH_WORDS = new Uint32Array(SCRATCH.buffer);

/** Reads a text written by `serializeBitTree` back into its bit tree (large values as {@link ArrayDigest}). */
export function parseBitTree(text: string): unknown {
  const reader = new BitTreeReader(text.split("\n"));
  const value = reader.valueAt(0, "", reader.content(0, ""));
  if (reader.cursor !== reader.lines.length) throw new SnapshotTextError(reader.cursor + 1, "text continues after the end of the root value");
  return value;
}

class BitTreeReader {
  cursor = 0;
  constructor(readonly lines: readonly string[]) {}

  /** The text of line `at` after exactly `indent`. */
  content(at: number, indent: string): string {
    if (at >= this.lines.length) throw new SnapshotTextError(this.lines.length, "the text ends inside a value (a closing bracket is missing)");
    const line = this.lines[at];
    if (!line.startsWith(indent) || line[indent.length] === " ") {
      throw new SnapshotTextError(at + 1, `expected ${indent.length} spaces of indentation, got ${line.length - line.trimStart().length}`);
    }
    return line.slice(indent.length);
  }

  fail(problem: string, at = this.cursor): never {
    throw new SnapshotTextError(at + 1, problem);
  }

  /** Reads the value whose first line is `at` (its text after indent and key is `rest`); leaves the cursor after it. */
  valueAt(at: number, indent: string, rest: string): unknown {
    this.cursor = at;
    const bits = BITS.exec(rest);
    if (bits !== null && bits[1].length === 16) {
      SCRATCH_WORDS[1] = parseInt(bits[1].slice(0, 8), 16);
      SCRATCH_WORDS[0] = parseInt(bits[1].slice(8), 16);
      checkReadable(bits[2], SCRATCH[0], at);
    }
    const leaf = readLeaf(rest, 0);
    if (leaf !== null) {
      if (leaf.end !== rest.length) this.fail(`unexpected text after the value: ${JSON.stringify(rest.slice(leaf.end))}`);
      this.cursor = at + 1;
      return leaf.value;
    }
    const arrayLike = ARRAY_LIKE.exec(rest);
    if (arrayLike !== null) return this.arrayLike(at, indent, arrayLike);
    const tensor = TENSOR.exec(rest);
    if (tensor !== null) return this.tensor(at, indent, tensor);
    const braced = BRACED.exec(rest);
    if (braced !== null) return this.braced(at, indent, braced);
    return this.fail(`not a bit-tree value: ${JSON.stringify(rest.slice(0, 60))}`, at);
  }

  private closing(indent: string, bracket: string): void {
    if (this.content(this.cursor, indent) !== bracket) this.fail(`expected ${JSON.stringify(bracket)} closing the value opened above`);
    this.cursor += 1;
  }

  /** Calls `item` for each line nested under the opening line at `at`, until the closing bracket. */
  private items(at: number, indent: string, bracket: string, item: (rest: string, line: number) => void): void {
    const inner = indent + "  ";
    this.cursor = at + 1;
    while (this.cursor < this.lines.length && this.lines[this.cursor].startsWith(inner)) {
      const line = this.cursor;
      item(this.content(line, inner), line);
    }
    this.closing(indent, bracket);
  }

  private arrayLike(at: number, indent: string, match: RegExpExecArray): unknown {
    const [, kind, countText, tail, digestLength, sha256, stored] = match;
    const count = Number(countText);
    if (sha256 !== undefined) {
      if (Number(digestLength) !== count) this.fail(`${kind}(${count}) says length ${digestLength}`, at);
      this.cursor = at + 1;
      return new ArrayDigest(kind, [count], count, sha256, stored !== undefined);
    }
    if (tail === " []") {
      if (count !== 0) this.fail(`${kind}(${count}) is written empty`, at);
      this.cursor = at + 1;
      return kind === "Array" ? [] : new (typedArrayCtor(kind))(0);
    }
    if (kind === "Array") {
      const array: unknown[] = new Array(count);
      let i = 0;
      this.items(at, indent, "]", (rest, line) => {
        if (i >= count) this.fail(`more than the ${count} elements Array(${count}) announces`, line);
        if (rest === "<hole>") this.cursor = line + 1;
        else array[i] = this.valueAt(line, indent + "  ", rest);
        i += 1;
      });
      if (i !== count) this.fail(`Array(${count}) holds ${i} elements`, at);
      return array;
    }
    const dtype = TYPED_ARRAY_DTYPES[kind];
    const target = new (typedArrayCtor(kind))(count);
    this.elements(at, indent, dtype, kind, target, count);
    return target;
  }

  private tensor(at: number, indent: string, match: RegExpExecArray): unknown {
    const [, dtypeText, shapeText, tail, digestLength, sha256, stored] = match;
    if (!isDtype(dtypeText)) this.fail(`unknown tensor dtype ${dtypeText}`, at);
    const dtype: Dtype = dtypeText;
    const shape =
      shapeText.trim() === ""
        ? []
        : shapeText.split(", ").map((dim) => (/^\d+$/.test(dim) ? Number(dim) : this.fail(`bad tensor dimension ${JSON.stringify(dim)}`, at)));
    const size = shape.reduce((a, b) => a * b, 1);
    if (sha256 !== undefined) {
      if (Number(digestLength) !== size) this.fail(`tensor shape [${shape.join(", ")}] holds ${size} elements, the line says length ${digestLength}`, at);
      this.cursor = at + 1;
      return new ArrayDigest(`Tensor<${dtype}>`, shape, size, sha256, stored !== undefined);
    }
    const data = new DTYPE_ARRAY[dtype](size);
    if (tail === " []") {
      if (size !== 0) this.fail(`tensor of shape [${shape.join(", ")}] is written empty`, at);
      this.cursor = at + 1;
    } else {
      this.elements(at, indent, dtype, dtype === "F16" || dtype === "BF16" ? dtype : Object.prototype.toString.call(data).slice(8, -1), data, size);
    }
    return new Tensor(dtype, shape, data);
  }

  private elements(at: number, indent: string, dtype: Dtype, kind: string, target: ArrayBufferView, count: number): void {
    let i = 0;
    const words =
      kind === "Float64Array"
        ? new Uint32Array(target.buffer, target.byteOffset, count * 2)
        : kind === "Float32Array"
          ? new Uint32Array(target.buffer, target.byteOffset, count)
          : null;
    const values = target as unknown as { [index: number]: number | bigint };
    this.items(at, indent, "]", (rest, line) => {
      if (i >= count) this.fail(`more than the ${count} elements announced`, line);
      if (kind === "Float64Array" || kind === "Float32Array" || kind === "F16" || kind === "BF16") {
        const bits = BITS.exec(rest);
        const width = kind === "Float64Array" ? 16 : kind === "Float32Array" ? 8 : 4;
        if (bits === null || bits[0].length !== rest.length || bits[1].length !== width)
          this.fail(`expected a ${kind} element as 0x<${width} hex digits> (value), got ${JSON.stringify(rest)}`, line);
        const hex = bits[1];
        let value: number;
        if (kind === "Float64Array") {
          words![2 * i] = parseInt(hex.slice(8), 16);
          words![2 * i + 1] = parseInt(hex.slice(0, 8), 16);
          value = (target as Float64Array)[i];
        } else if (kind === "Float32Array") {
          words![i] = parseInt(hex, 16);
          value = (target as Float32Array)[i];
        } else {
          values[i] = parseInt(hex, 16);
          value = kind === "F16" ? decodeFloat16(parseInt(hex, 16)) : decodeBfloat16(parseInt(hex, 16));
        }
        checkReadable(bits[2], value, line);
      } else if (dtype === "I64" || dtype === "U64") {
        if (!/^-?\d+$/.test(rest)) this.fail(`expected an integer element, got ${JSON.stringify(rest)}`, line);
        values[i] = BigInt(rest);
      } else {
        if (!/^-?\d+$/.test(rest)) this.fail(`expected an integer element, got ${JSON.stringify(rest)}`, line);
        values[i] = Number(rest);
        if (values[i] !== Number(rest)) this.fail(`${rest} does not fit a ${kind} element`, line);
      }
      i += 1;
      this.cursor = line + 1;
    });
    if (i !== count) this.fail(`${count} elements announced, ${i} written`, at);
  }

  private braced(at: number, indent: string, match: RegExpExecArray): unknown {
    const [, name, mapSize, tail] = match;
    const empty = tail === "{}";
    if (name === "Object") {
      const object: Record<string, unknown> = {};
      if (empty) this.cursor = at + 1;
      else {
        this.items(at, indent, "}", (rest, line) => {
          const key = readLeaf(rest, 0);
          if (key === null || typeof key.value !== "string" || rest.slice(key.end, key.end + 2) !== ": ")
            this.fail(`expected "key": value, got ${JSON.stringify(rest.slice(0, 60))}`, line);
          if (Object.prototype.hasOwnProperty.call(object, key.value)) this.fail(`key ${JSON.stringify(key.value)} appears twice`, line);
          Object.defineProperty(object, key.value, {
            value: this.valueAt(line, indent + "  ", rest.slice(key.end + 2)),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        });
      }
      return object;
    }
    if (mapSize !== undefined) {
      const map = new Map<unknown, unknown>();
      if (empty) this.cursor = at + 1;
      else {
        this.items(at, indent, "}", (rest, line) => {
          const key = readLeaf(rest, 0);
          if (key === null || rest.slice(key.end, key.end + 4) !== " => ") this.fail(`expected key => value, got ${JSON.stringify(rest.slice(0, 60))}`, line);
          if (map.has(key.value)) this.fail("a Map key appears twice", line);
          map.set(key.value, this.valueAt(line, indent + "  ", rest.slice(key.end + 4)));
        });
      }
      if (map.size !== Number(mapSize)) this.fail(`Map(${mapSize}) holds ${map.size} entries`, at);
      return map;
    }
    const fields: Array<[string, unknown]> = [];
    if (empty) this.cursor = at + 1;
    else {
      this.items(at, indent, "}", (rest, line) => {
        const field = /^([A-Za-z_$][\w$]*): /.exec(rest);
        if (field === null) this.fail(`expected field: value, got ${JSON.stringify(rest.slice(0, 60))}`, line);
        if (fields.some(([seen]) => seen === field[1])) this.fail(`field ${field[1]} appears twice`, line);
        fields.push([field[1], this.valueAt(line, indent + "  ", rest.slice(field[0].length))]);
      });
    }
    const instance = Object.create(
      classFor(
        name,
        fields.map(([field]) => field),
      ).prototype,
    ) as Record<string, unknown>;
    for (const [field, value] of fields) Object.defineProperty(instance, field, { value, enumerable: true, writable: true, configurable: true });
    return instance;
  }
}

/** The class a declared-field instance is rebuilt as: the package's own by name, else one made for that name and fields. */
function classFor(name: string, fields: readonly string[]): { prototype: object } {
  const known = KNOWN_CLASSES.get(name);
  if (known !== undefined) return known;
  const key = `${name}(${fields.join(",")})`;
  let made = synthesized.get(key);
  if (made === undefined) {
    const holder = { [name]: class {} } as Record<string, { prototype: object }>;
    made = holder[name];
    Object.defineProperty(made, "FIELDS", { value: Object.freeze([...fields]) });
    synthesized.set(key, made);
  }
  return made;
}

function typedArrayCtor(kind: string): new (length: number) => ArrayBufferView {
  const ctor = (globalThis as unknown as Record<string, unknown>)[kind];
  return ctor as new (length: number) => ArrayBufferView;
}

function checkReadable(written: string, value: number, line: number): void {
  if (written !== readable(value))
    throw new SnapshotTextError(line + 1, `the value beside the bits (${written}) is not what the bits hold (${readable(value)})`);
}

/** Reads one primitive at `pos` of `text`: a JSON string, float64 bits with value, bigint, boolean, null, undefined. */
function readLeaf(text: string, pos: number): { value: unknown; end: number } | null {
  const first = text[pos];
  if (first === '"') {
    let i = pos + 1;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    if (i >= text.length) return null;
    try {
      return { value: JSON.parse(text.slice(pos, i + 1)) as string, end: i + 1 };
    } catch {
      return null;
    }
  }
  const rest = text.slice(pos);
  const bits = BITS.exec(rest);
  if (bits !== null && bits[1].length === 16) {
    SCRATCH_WORDS[1] = parseInt(bits[1].slice(0, 8), 16);
    SCRATCH_WORDS[0] = parseInt(bits[1].slice(8), 16);
    const value = SCRATCH[0];
    if (bits[2] !== readable(value)) return null;
    return { value, end: pos + bits[0].length };
  }
  const float = PY_FLOAT.exec(rest);
  if (float !== null) {
    SCRATCH_WORDS[1] = parseInt(float[1].slice(0, 8), 16);
    SCRATCH_WORDS[0] = parseInt(float[1].slice(8), 16);
    const value = SCRATCH[0];
    if (float[2] !== pythonFloatRepr(value)) return null;
    return { value: new PyFloat(value), end: pos + float[0].length };
  }
  const int = PY_INT.exec(rest);
  if (int !== null) return { value: new PyBigInt(int[1]), end: pos + int[0].length };
  const word = /^(null|undefined|true|false|-?\d+n)(?![\w$])/.exec(rest);
  if (word === null) return null;
  const literal = word[1];
  const value =
    literal === "null" ? null : literal === "undefined" ? undefined : literal === "true" ? true : literal === "false" ? false : BigInt(literal.slice(0, -1));
  return { value, end: pos + literal.length };
}
