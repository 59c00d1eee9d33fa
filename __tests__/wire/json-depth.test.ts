// The JSON nesting cap (128, the depth at which the Rust safetensors reader behind SGLang stops) in every place
// JSON enters the wire component: the scan itself, the safetensors header and `_samples_meta`.
import {
  MAX_JSON_DEPTH,
  SafetensorsFormatError,
  SamplesCodecError,
  WIRE_FIELDS_V1,
  decodeSamplesReply,
  findJsonDepthExcess,
  readSafetensors,
  writeSafetensors,
} from "../../src/wire";
import { Sample } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";

function nested(depth: number, open = "[", close = "]"): string {
  return `${open.repeat(depth)}${close.repeat(depth)}`;
}

function container(headerText: string | Buffer): Uint8Array {
  const header = typeof headerText === "string" ? Buffer.from(headerText, "utf8") : headerText;
  const out = new Uint8Array(8 + header.length);
  new DataView(out.buffer).setUint32(0, header.length, true);
  out.set(header, 8);
  return out;
}

describe("findJsonDepthExcess", () => {
  test("128 levels pass, the 129th bracket is reported at its offset, for bytes and strings alike", () => {
    expect(MAX_JSON_DEPTH).toBe(128);
    expect(findJsonDepthExcess(nested(128))).toBeNull();
    expect(findJsonDepthExcess(nested(129))).toEqual({ offset: 128, maxDepth: 128 });
    expect(findJsonDepthExcess(Buffer.from(`{"a":${nested(129, '{"b":', "}")}}`))).toEqual({ offset: 5 + 127 * 5, maxDepth: 128 });
  });

  test("brackets inside strings (escaped quotes included) and closed siblings do not add depth", () => {
    const text = `["\\"[[[[", ${nested(127)}, ${nested(127)}, "${"{".repeat(1000)}"]`;
    expect(findJsonDepthExcess(text)).toBeNull();
    expect(findJsonDepthExcess(`["\\\\", ${nested(128)}]`)).toEqual({ offset: 7 + 127, maxDepth: 128 });
  });

  test("a smaller cap can be asked for", () => {
    expect(findJsonDepthExcess("[[[]]]", 2)).toEqual({ offset: 2, maxDepth: 2 });
  });
});

describe("safetensors header", () => {
  test("a header nested past 128 is refused before it is decoded or parsed", () => {
    const payload = container(`{"a":${nested(200)}}`);
    expect(() => readSafetensors(payload)).toThrow(SafetensorsFormatError);
    expect(() => readSafetensors(payload)).toThrow("safetensors: header JSON nesting exceeds the depth limit of 128 (level 129 opens at offset 132)");
  });

  test("a 24 MB header of nested arrays is refused after reading the first 133 bytes (not invalid UTF-8 checks first)", () => {
    const header = Buffer.alloc(24_000_000, 0x5b);
    header[0] = 0x7b;
    header[header.length - 1] = 0xff;
    expect(() => readSafetensors(container(header))).toThrow(/JSON nesting exceeds the depth limit of 128/);
  });
});

describe("_samples_meta", () => {
  test("metadata nested past 128 is a SamplesCodecError naming the tensor", () => {
    const text = `{"samples":[],"session_metadata":{"x":${nested(300)}},"empty_reason":null}`;
    const bytes = new Uint8Array(Buffer.from(text, "utf8"));
    const payload = writeSafetensors({ _samples_meta: new Tensor("U8", [bytes.length], bytes) });
    let error: unknown;
    try {
      decodeSamplesReply(payload, new Sample(), { fields: WIRE_FIELDS_V1 });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SamplesCodecError);
    expect((error as Error).message).toBe("samples reply: _samples_meta JSON nesting exceeds the depth limit of 128 (level 129 opens at offset 164)");
  });
});
