// Safetensors container: round trips of every dtype, the writer's exact layout, views vs copies,
// a hand-written container read byte by byte, and each malformed-container rule with its own message.
import { MAX_SAFETENSORS_HEADER_BYTES, SafetensorsFormatError, readSafetensors, writeSafetensors } from "../../src/wire";
import { DTYPE_ARRAY, Tensor, type Dtype } from "../../src/wire/tensor";
import { buildContainer, int32Bytes } from "./wire-test-helpers";

const ALL_DTYPES: Dtype[] = ["BOOL", "U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64", "F16", "BF16", "F32", "F64"];

function sampleTensor(dtype: Dtype, shape: number[], seed: number): Tensor {
  const count = shape.reduce((a, b) => a * b, 1);
  const data = new DTYPE_ARRAY[dtype](count);
  for (let i = 0; i < count; i++) {
    const raw = (i * 37 + seed * 11) % 251;
    if (data instanceof BigInt64Array) data[i] = BigInt(raw) * (i % 2 === 0 ? -1n : 1n) * 4_000_000_000_000n;
    else if (data instanceof BigUint64Array) data[i] = (BigInt(raw) * 9_000_000_000_000_000n) / 251n;
    else if (data instanceof Float32Array || data instanceof Float64Array) data[i] = raw / 7 - 3;
    else if (data instanceof Int8Array || data instanceof Int16Array || data instanceof Int32Array) data[i] = raw - 125;
    else if (dtype === "BOOL") data[i] = raw % 2;
    else data[i] = raw;
  }
  return new Tensor(dtype, shape, data);
}

function headerOf(bytes: Uint8Array): string {
  const size = Number(Buffer.from(bytes).readBigUInt64LE(0));
  return Buffer.from(bytes.subarray(8, 8 + size)).toString("utf8");
}

function expectFormatError(bytes: Uint8Array, message: RegExp): void {
  let caught: unknown;
  try {
    readSafetensors(bytes);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(SafetensorsFormatError);
  expect((caught as Error).message).toMatch(message);
}

describe("writeSafetensors / readSafetensors round trip", () => {
  test("every dtype keeps dtype, shape and values bit for bit", () => {
    const input = new Map<string, Tensor>();
    ALL_DTYPES.forEach((dtype, i) => input.set(`t.${dtype}`, sampleTensor(dtype, [3, 2], i)));
    input.set("scalar", sampleTensor("F64", [], 99));
    input.set("empty", new Tensor("I32", [0, 5], new Int32Array(0)));
    const { tensors, metadata } = readSafetensors(writeSafetensors(input));
    expect(metadata).toBeNull();
    expect([...tensors.keys()].sort()).toEqual([...input.keys()].sort());
    for (const [name, tensor] of input) {
      const back = tensors.get(name) as Tensor;
      expect(back.dtype).toBe(tensor.dtype);
      expect(back.shape).toEqual(tensor.shape);
      expect(back.data).toBeInstanceOf(DTYPE_ARRAY[tensor.dtype]);
      expect(Buffer.from(back.bytes()).equals(Buffer.from(tensor.bytes()))).toBe(true);
    }
  });

  test("metadata round trips as a string map and sits first in the header with sorted keys", () => {
    const bytes = writeSafetensors({ x: sampleTensor("U8", [2], 1) }, { zeta: "1", alpha: 'é"q' });
    expect(readSafetensors(bytes).metadata).toEqual({ zeta: "1", alpha: 'é"q' });
    expect(headerOf(bytes).startsWith('{"__metadata__":{"alpha":"é\\"q","zeta":"1"},"x":')).toBe(true);
  });

  test("layout: descending dtype alignment then name, exact contiguous offsets, header padded with spaces to 8", () => {
    const bytes = writeSafetensors({
      "b.u8": sampleTensor("U8", [3], 1),
      "a.u8": sampleTensor("U8", [1], 2),
      "z.i64": sampleTensor("I64", [2], 3),
      "m.i32": sampleTensor("I32", [1], 4),
      "10": sampleTensor("F64", [1], 5),
    });
    const size = Number(Buffer.from(bytes).readBigUInt64LE(0));
    expect(size % 8).toBe(0);
    const header = headerOf(bytes);
    expect(header.trimEnd()).toBe(
      '{"z.i64":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},' +
        '"10":{"dtype":"F64","shape":[1],"data_offsets":[16,24]},' +
        '"m.i32":{"dtype":"I32","shape":[1],"data_offsets":[24,28]},' +
        '"a.u8":{"dtype":"U8","shape":[1],"data_offsets":[28,29]},' +
        '"b.u8":{"dtype":"U8","shape":[3],"data_offsets":[29,32]}}',
    );
    expect(/^ *$/.test(header.slice(header.trimEnd().length))).toBe(true);
    expect(bytes.length).toBe(8 + size + 32);
  });

  test("a tensor that is a view on a larger buffer contributes only its own bytes", () => {
    const backing = Int32Array.from({ length: 40 }, (_, i) => 1000 + i);
    const view = new Tensor("I32", [2, 3], backing.subarray(5, 11));
    const back = readSafetensors(writeSafetensors({ v: view })).tensors.get("v") as Tensor<"I32">;
    expect([...back.data]).toEqual([1005, 1006, 1007, 1008, 1009, 1010]);
  });

  test("decoded tensors are views on the payload when aligned, copies when not", () => {
    const bytes = writeSafetensors({ a: sampleTensor("I32", [4], 1) });
    const aligned = readSafetensors(bytes).tensors.get("a") as Tensor;
    expect(aligned.data.buffer).toBe(bytes.buffer);

    const shifted = new Uint8Array(bytes.length + 1);
    shifted.set(bytes, 1);
    const misaligned = shifted.subarray(1);
    const copied = readSafetensors(misaligned).tensors.get("a") as Tensor;
    expect(copied.data.buffer).not.toBe(shifted.buffer);
    expect([...copied.data]).toEqual([...aligned.data]);
  });

  test("writer refuses a non-Tensor value, the reserved name and non-string metadata", () => {
    expect(() => writeSafetensors({ x: [1, 2] as unknown as Tensor })).toThrow(/"x" is not a Tensor/);
    expect(() => writeSafetensors({ __metadata__: sampleTensor("U8", [1], 0) })).toThrow(/invalid tensor name "__metadata__"/);
    expect(() => writeSafetensors({}, { k: 1 as unknown as string })).toThrow(/metadata "k" must be a string/);
  });
});

describe("a container written by hand, byte by byte", () => {
  test("decodes to the expected tensors whatever the header order", () => {
    // Header lists the U8 tensor first though its data comes last; offsets are what count.
    const header =
      '{"mask":{"dtype":"U8","shape":[3],"data_offsets":[8,11]},"__metadata__":{"who":"hand"},"ids":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}}';
    const padded = header + " ".repeat((8 - (header.length % 8)) % 8);
    const bytes = buildContainer(padded, [...int32Bytes([7, -2]), 1, 0, 1]);
    // Check the hand-made framing itself: size field little-endian, JSON right after it.
    expect(bytes[0] + bytes[1] * 256).toBe(padded.length);
    expect(bytes[8]).toBe("{".charCodeAt(0));
    const { tensors, metadata } = readSafetensors(bytes);
    expect(metadata).toEqual({ who: "hand" });
    expect([...tensors.keys()]).toEqual(["ids", "mask"]);
    const ids = tensors.get("ids") as Tensor;
    expect(ids.dtype).toBe("I32");
    expect(ids.shape).toEqual([2]);
    expect([...ids.data]).toEqual([7, -2]);
    const mask = tensors.get("mask") as Tensor;
    expect(mask.dtype).toBe("U8");
    expect([...mask.data]).toEqual([1, 0, 1]);
  });

  test("an unpadded header (legal for other writers) still reads, copying misaligned data", () => {
    const bytes = buildContainer('{"x":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}', [...new Uint8Array(Float64Array.of(-1.5).buffer)]);
    expect([...(readSafetensors(bytes).tensors.get("x") as Tensor).data]).toEqual([-1.5]);
  });
});

describe("malformed containers", () => {
  const entry = (dtype: string, shape: number[], begin: number, end: number): string =>
    `{"dtype":"${dtype}","shape":[${shape.join(",")}],"data_offsets":[${begin},${end}]}`;

  test("fewer than 8 bytes", () => {
    expectFormatError(new Uint8Array([1, 0, 0]), /3 bytes, fewer than the 8-byte header size field/);
  });

  test("empty payload", () => {
    expectFormatError(new Uint8Array(0), /0 bytes, fewer than the 8-byte header size field/);
  });

  test("header size beyond the payload", () => {
    const bytes = buildContainer("{}      ");
    new DataView(bytes.buffer).setUint32(0, 9, true);
    expectFormatError(bytes, /header size 9 runs past the payload \(8 bytes after the size field\)/);
  });

  test("a 2^40 header size is refused by the limit before any allocation", () => {
    const bytes = new Uint8Array(16);
    new DataView(bytes.buffer).setUint32(4, 256, true);
    expectFormatError(bytes, /header size 1099511627776 exceeds the 100000000-byte limit/);
  });

  test("header size just above the limit", () => {
    expect(MAX_SAFETENSORS_HEADER_BYTES).toBe(100_000_000);
    const bytes = new Uint8Array(16);
    new DataView(bytes.buffer).setUint32(0, MAX_SAFETENSORS_HEADER_BYTES + 1, true);
    expectFormatError(bytes, /header size 100000001 exceeds the 100000000-byte limit/);
  });

  test("header not UTF-8", () => {
    expectFormatError(
      buildContainer("{}", []).map((b, i) => (i === 9 ? 0xff : b)),
      /header is not valid UTF-8/,
    );
  });

  test("header not JSON", () => {
    expectFormatError(buildContainer('{"x":'), /header is not valid JSON/);
  });

  test("header not an object", () => {
    expectFormatError(buildContainer("[1,2]   "), /header must be a JSON object/);
  });

  test("tensor entry not an object", () => {
    expectFormatError(buildContainer('{"x":3}'), /tensor "x": entry must be an object/);
  });

  test("unknown dtype", () => {
    expectFormatError(buildContainer(`{"x":${entry("F8_E4M3", [1], 0, 1)}}`, [0]), /tensor "x": unknown dtype "F8_E4M3"/);
  });

  test("negative or fractional shape", () => {
    expectFormatError(buildContainer(`{"x":${entry("U8", [-1], 0, 0)}}`), /tensor "x": shape must be an array of non-negative integers/);
    expectFormatError(buildContainer(`{"x":${entry("U8", [1.5], 0, 0)}}`), /tensor "x": shape must be an array of non-negative integers/);
  });

  test("malformed data_offsets", () => {
    expectFormatError(buildContainer('{"x":{"dtype":"U8","shape":[1],"data_offsets":[0]}}', [0]), /data_offsets must be \[begin, end\]/);
  });

  test("data_offsets out of range", () => {
    expectFormatError(buildContainer(`{"x":${entry("U8", [4], 0, 4)}}`, [1, 2]), /data_offsets \[0, 4\] out of range of the 2-byte data section/);
  });

  test("data_offsets reversed", () => {
    expectFormatError(buildContainer(`{"x":${entry("U8", [2], 2, 0)}}`, [1, 2]), /data_offsets \[2, 0\] are reversed/);
  });

  test("data_offsets overlapping", () => {
    const header = `{"a":${entry("U8", [3], 0, 3)},"b":${entry("U8", [2], 2, 4)}}`;
    expectFormatError(buildContainer(header, [1, 2, 3, 4]), /tensor "b" \[2, 4\] overlaps tensor "a" \[0, 3\]/);
  });

  test("a gap between tensors", () => {
    const header = `{"a":${entry("U8", [1], 0, 1)},"b":${entry("U8", [1], 2, 3)}}`;
    expectFormatError(buildContainer(header, [1, 2, 3]), /1-byte gap in the data section before tensor "b"/);
  });

  test("trailing bytes after the last tensor", () => {
    expectFormatError(buildContainer(`{"a":${entry("U8", [1], 0, 1)}}`, [1, 2, 3]), /2 trailing bytes in the data section are not covered/);
  });

  test("byte length not dtype size × shape", () => {
    expectFormatError(buildContainer(`{"a":${entry("I32", [2], 0, 4)}}`, [1, 2, 3, 4]), /byte length 4 does not match dtype I32 \(4 bytes\) × shape \[2\]/);
  });

  test("shape product overflowing the safe-integer range", () => {
    expectFormatError(buildContainer(`{"a":${entry("U8", [2 ** 30, 2 ** 30, 2 ** 30], 0, 0)}}`), /byte length 0 does not match dtype U8/);
  });

  test("__metadata__ not a string map", () => {
    expectFormatError(buildContainer('{"__metadata__":{"k":1}}'), /__metadata__\.k must be a string/);
  });
});
