// The samples decoder's cheaper steps held to their references: the native count of "nulls" keys against the byte
// loop, the count of opening brackets that spares the nesting scan against that scan, and the whole decode with both
// swapped for their references, on replies of the reference servers and on adversarial metadata texts and bytes.
import { afterEach, beforeAll, describe, expect, jest, test } from "@jest/globals";
import fc from "fast-check";
import { buildWeatherInputSamples, DEFAULT_PARITY_SAMPLING, startParityEnvironment } from "../../src";
import { runWeatherAgent, type ToolCallFailureMode } from "../../src/agent";
import { SessionClient } from "../../src/fixture/session-client";
import * as decodeLimits from "../../src/wire/decode-limits";
import * as jsonDepth from "../../src/wire/json-depth";
import {
  DecodeWork,
  SAMPLES_META_TENSOR,
  WIRE_FIELDS_V1,
  WIRE_FIELDS_V2,
  decodeSamplesReply,
  encodeSamples,
  readSafetensors,
  writeSafetensors,
  type DecodeSamplesOptions,
} from "../../src/wire";
import { Sample } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";
import { isLossyForNativeParse, parsePyJson, parsePyJsonBytes, PyFloat } from "../../src/wire/py-json";
import { computedSample, valueStructure } from "./wire-test-helpers";
import { expectEqual, expectSame } from "../support/fast-expect";

const { countByLoop, countOccurrences } = decodeLimits;
const { cannotNestPast, findJsonDepthExcess, MAX_JSON_DEPTH } = jsonDepth;

/** What a decode gives: the reply's structure, or the error's class and message. */
function outcomeOf(decode: () => unknown): unknown {
  try {
    return { value: valueStructure(decode()) };
  } catch (error) {
    return { error: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
}

/** The decode as the reference path runs it: every "nulls" counted by the byte loop, every nesting scanned. */
function referenceOutcome(decode: () => unknown): unknown {
  const count = jest.spyOn(decodeLimits, "countOccurrences").mockImplementation((...args) => decodeLimits.countByLoop(...args));
  const bound = jest.spyOn(jsonDepth, "cannotNestPast").mockReturnValue(false);
  try {
    return outcomeOf(decode);
  } finally {
    count.mockRestore();
    bound.mockRestore();
  }
}

/** Decodes `payload` both ways; the outcomes must be the same, and the fast one is returned. */
function expectSameDecoding(payload: Uint8Array, options: DecodeSamplesOptions, input: Sample = new Sample()): unknown {
  const decode = (): unknown => decodeSamplesReply(payload, input, options);
  const fast = outcomeOf(decode);
  expectEqual(fast, referenceOutcome(decode));
  return fast;
}

/** A payload holding `metaText` as its `_samples_meta` (and `tensors`, when given). */
function withMeta(metaText: string | Uint8Array, tensors: Map<string, Tensor> = new Map()): Uint8Array {
  const bytes = typeof metaText === "string" ? new Uint8Array(Buffer.from(metaText, "utf8")) : metaText;
  const all = new Map(tensors);
  all.set(SAMPLES_META_TENSOR, new Tensor("U8", [bytes.length], bytes));
  return writeSafetensors(all);
}

/** The meta text and the other tensors of a payload. */
function splitPayload(payload: Uint8Array): { meta: string; tensors: Map<string, Tensor> } {
  const { tensors } = readSafetensors(payload);
  const meta = Buffer.from((tensors.get(SAMPLES_META_TENSOR) as Tensor<"U8">).data).toString("utf8");
  tensors.delete(SAMPLES_META_TENSOR);
  return { meta, tensors };
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe("countOccurrences (native search) against the byte loop", () => {
  const bytesOf = (parts: string[]): Uint8Array => new Uint8Array(Buffer.from(parts.join(""), "latin1"));
  const piece = fc.constantFrom('"', "n", "u", "l", "s", '"nulls"', '"nulls"nulls"', "nulls", "a", "aa", "\\", ",", "\u00e9");

  test("the same count and the same bytes read, for every needle, stop and view offset", () => {
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 40 }),
        fc.constantFrom('"nulls"', '"', "aa", "aaa", "n", '"data_offsets"', 's"'),
        fc.nat({ max: 8 }),
        fc.nat({ max: 5 }),
        fc.nat({ max: 5 }),
        (parts, needleText, stop, before, after) => {
          // a view with bytes on both sides of it that hold the needle: they must not count
          const inner = bytesOf(parts);
          const needle = bytesOf([needleText]);
          const outer = new Uint8Array(before * needle.length + inner.length + after * needle.length);
          for (let i = 0; i < before; i++) outer.set(needle, i * needle.length);
          outer.set(inner, before * needle.length);
          for (let i = 0; i < after; i++) outer.set(needle, before * needle.length + inner.length + i * needle.length);
          const view = outer.subarray(before * needle.length, before * needle.length + inner.length);
          for (const cap of [stop, Number.MAX_SAFE_INTEGER]) {
            const fastWork = new DecodeWork();
            const loopWork = new DecodeWork();
            expectSame(countOccurrences(view, needle, cap, fastWork), countByLoop(view, needle, cap, loopWork));
            expectSame(fastWork.scannedBytes, loopWork.scannedBytes);
          }
        },
      ),
      { numRuns: 1500, seed: 20261201 },
    );
  });

  test("a match at any distance from the previous one (around the looped stretch after each match) is found", () => {
    const needle = bytesOf(['"nulls"']);
    for (let gap = 0; gap < 160; gap++) {
      for (const lead of [0, 1, 63, 64, 65]) {
        const text = bytesOf(["x".repeat(lead), '"nulls"', "y".repeat(gap), '"nulls"', "z".repeat(gap % 7), '"nulls"']);
        const fastWork = new DecodeWork();
        const loopWork = new DecodeWork();
        expectEqual([gap, lead, countOccurrences(text, needle, 10, fastWork)], [gap, lead, countByLoop(text, needle, 10, loopWork)]);
        expectSame(fastWork.scannedBytes, loopWork.scannedBytes);
      }
    }
  });

  test("matches do not overlap, a stop ends the search at the match that reached it, an empty needle counts nothing", () => {
    const text = bytesOf(['"nulls"nulls"', "x", '"nulls"']);
    const needle = bytesOf(['"nulls"']);
    const work = new DecodeWork();
    expect(countOccurrences(text, needle, 10, work)).toBe(2); // the second match's opening quote is the first's closing one
    expect(work.scannedBytes).toBe(text.length);
    const stopped = new DecodeWork();
    expect(countOccurrences(text, needle, 1, stopped)).toBe(1);
    expect(stopped.scannedBytes).toBe(7);
    expect(countOccurrences(bytesOf(["abc"]), bytesOf(["abcd"]), 5)).toBe(0);
    expect(countOccurrences(text, new Uint8Array(0), 5)).toBe(countByLoop(text, new Uint8Array(0), 5));
  });
});

describe("cannotNestPast: the count of opening brackets that spares the nesting scan", () => {
  const token = fc.constantFrom("[", "]", "{", "}", '"', '\\"', "\\", "a", ",", ":", '"[["', "[1,2]");

  test("whenever it says yes, the nesting scan finds no excess (any cap, any byte string, any view)", () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 60 }), fc.nat({ max: 8 }), fc.nat({ max: 3 }), (parts, maxDepth, pad) => {
        const outer = new Uint8Array(Buffer.from(`${"[".repeat(pad)}${parts.join("")}${"{".repeat(pad)}`, "latin1"));
        const view = outer.subarray(pad, outer.length - pad);
        if (cannotNestPast(view, maxDepth)) expect(findJsonDepthExcess(view, maxDepth)).toBeNull();
        // and it says yes exactly when the view holds at most maxDepth openers (outside strings or in them)
        const openers = [...parts.join("")].filter((c) => c === "[" || c === "{").length;
        expectSame(cannotNestPast(view, maxDepth), openers <= maxDepth);
      }),
      { numRuns: 2000, seed: 20261202 },
    );
  });

  test("it counts both kinds of bracket up to the cap: 128 openers pass, a 129th of either kind sends the text to the scan", () => {
    const bytes = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, "latin1"));
    expect(cannotNestPast(bytes("[".repeat(64) + "{".repeat(64)))).toBe(true);
    expect(cannotNestPast(bytes("[".repeat(64) + "{".repeat(65)))).toBe(false);
    expect(cannotNestPast(bytes("[".repeat(65) + "{".repeat(64)))).toBe(false);
    expect(cannotNestPast(bytes('{"a":'.repeat(129) + "1" + "}".repeat(129)))).toBe(false);
    expect(cannotNestPast(bytes("[]".repeat(129)))).toBe(false); // shallow, but only the scan can tell
    expect(MAX_JSON_DEPTH).toBe(128);
  });

  test("texts longer than one search chunk: brackets at and across the chunk edges are each counted once", () => {
    const chunk = 1 << 16;
    const places = [0, chunk - 1, chunk, chunk + 1, 2 * chunk - 1, 2 * chunk, 3 * chunk + 5];
    for (const extra of [0, 1]) {
      const outer = Buffer.alloc(3 * chunk + 200 + 2, 0x61);
      outer[0] = 0x5b; // outside the view
      outer[outer.length - 1] = 0x7b; // outside the view
      const view = outer.subarray(1, outer.length - 1);
      let openers = 0;
      for (const at of places) view[at] = openers++ % 2 === 0 ? 0x5b : 0x7b;
      for (let at = 3 * chunk + 6; openers < 128 + extra; at += 1) view[at] = openers++ % 2 === 0 ? 0x7b : 0x5b;
      expect([extra, cannotNestPast(view)]).toEqual([extra, extra === 0]);
    }
    const braces = new Uint8Array(Buffer.alloc(5 * chunk, 0x7b));
    expect(cannotNestPast(braces)).toBe(false);
    expect(findJsonDepthExcess(braces)).toEqual({ offset: 128, maxDepth: 128 });
  });
});

describe("isLossyForNativeParse remembers its last long int run (v2 spells the accumulated ids twice)", () => {
  /** A space after each `[` keeps every token and so every verdict, but turns the shortcut off (it needs the bracket just before the run). */
  const withoutShortcut = (text: string): string => text.replaceAll("[", "[ ");
  /** The value parsePyJson gives beside the one of parsePyJsonBytes, whose scan decides the reader on its own. */
  const readings = (text: string): [unknown, unknown] => {
    const read = (parse: () => unknown): unknown => {
      try {
        return valueStructure(parse());
      } catch (error) {
        return `${(error as Error).name}: ${(error as Error).message}`;
      }
    };
    return [read(() => parsePyJson(text)), read(() => parsePyJsonBytes(Buffer.from(text, "utf8"), 10_000).value)];
  };
  const run = fc
    .array(fc.oneof(fc.integer({ min: 0, max: 200_000 }), fc.constantFrom(0, 1, 999_999_999_999_999)), { minLength: 60, maxLength: 90 })
    .map((ids) => ids.join(","));
  const firstTail = fc.constantFrom("", "", "", ",5", ".5", ".0");
  const tail = fc.constantFrom("", ".0", "e5", "0", "E-2", ",5", ",1.0", ",-0", ", 7", ".5", "00");

  test("a copy of the run, with any continuation, gets the verdict and the value the reference scan gives", () => {
    fc.assert(
      fc.property(
        run,
        firstTail,
        tail,
        fc.constantFrom("[", "[", "[1,", "[ "),
        fc.oneof(fc.constant(0), fc.nat({ max: 30 })),
        (ids, firstTail, secondTail, opening, cut) => {
          const second = cut === 0 ? ids : ids.slice(0, ids.length - cut);
          const text = `{"a":[${ids}${firstTail}],"b":{"accumulated_token_ids":${opening}${second}${secondTail}]},"c":[${ids}]}`;
          expectEqual([text, isLossyForNativeParse(text)], [text, isLossyForNativeParse(withoutShortcut(text))]);
          const [fast, reference] = readings(text);
          expectEqual(fast, reference);
        },
      ),
      { numRuns: 300, seed: 20261206 },
    );
  });

  test("the shortcut decides: a copy followed by .0 or by a 16th digit is lossy, the copy itself is not", () => {
    const ids = Array.from({ length: 80 }, (_, i) => 151_000 + i * 7).join(",");
    const long = `${ids},123456789012345`; // the last id has 15 digits: one more makes it lossy
    expect(isLossyForNativeParse(`[[${long}],[${long}]]`)).toBe(false);
    expect(isLossyForNativeParse(`[[${long}],[${long}.0]]`)).toBe(true);
    expect(isLossyForNativeParse(`[[${long}],[${long}6]]`)).toBe(true);
    expect(isLossyForNativeParse(`[[${long}],[${long}e0]]`)).toBe(true);
    expect(isLossyForNativeParse(`[[${long}],[${long},-0]]`)).toBe(true);
    expect(parsePyJson(`[[${long}],[${long}.0]]`)).toEqual([
      long.split(",").map(Number),
      [...long.split(",").slice(0, -1).map(Number), new PyFloat(123456789012345)],
    ]);
  });
});

describe("decodeSamplesReply with the fast steps against the reference path", () => {
  /** Replies of the reference servers: v1 and v2 sessions of the weather agent under each failure mode, collected whole and truncated. */
  const recorded: Array<{ label: string; version: "v1" | "v2"; payload: Uint8Array }> = [];

  beforeAll(async () => {
    const environment = await startParityEnvironment({ env: {}, latencyMs: 0, logger: { warn: () => {} } });
    try {
      for (const version of ["v1", "v2"] as const) {
        const client = new SessionClient(environment[`${version}Url`]);
        const modes: ToolCallFailureMode[] = ["rollback", "append_tool", "append_user"];
        for (const [index, mode] of modes.entries()) {
          const sessionId = await client.createSession();
          const agent = await runWeatherAgent({
            baseUrl: client.sessionUrl(sessionId),
            sampling: { ...DEFAULT_PARITY_SAMPLING },
            cycles: index + 1,
            toolCallFailureMode: mode,
            stream: index === 0,
          });
          for (const maxSeqLen of [null, 200, 5]) {
            const body = version === "v2" ? { max_seq_len: maxSeqLen, metadata: agent as unknown as Record<string, never> } : { max_seq_len: maxSeqLen };
            recorded.push({ label: `${version} ${mode} max_seq_len ${String(maxSeqLen)}`, version, payload: await client.collect(sessionId, body) });
          }
          await client.deleteSession(sessionId);
        }
      }
    } finally {
      await environment.stop();
    }
  }, 120_000);

  test("replies of the reference servers: the same samples, and the nesting scan never runs for them", () => {
    expect(recorded.length).toBe(18);
    const input = buildWeatherInputSamples(1)[0];
    const scan = jest.spyOn(jsonDepth, "findJsonDepthExcess");
    for (const { version, payload } of recorded) {
      const options = { fields: version === "v1" ? WIRE_FIELDS_V1 : WIRE_FIELDS_V2 };
      scan.mockClear();
      const fast = decodeSamplesReply(payload, input, options);
      expect(scan).not.toHaveBeenCalled(); // the count of brackets vouched for the header and the metadata
      expectEqual(
        outcomeOf(() => fast),
        referenceOutcome(() => decodeSamplesReply(payload, input, options)),
      );
    }
    // the replies hold samples and empty ones, and v2's carry the session's accumulated ids
    const counts = recorded.map(
      ({ payload, version }) => decodeSamplesReply(payload, input, { fields: version === "v1" ? WIRE_FIELDS_V1 : WIRE_FIELDS_V2 }).samples.length,
    );
    expect(counts.some((count) => count === 0) && counts.some((count) => count > 0)).toBe(true);
  });

  test("the reference path really runs the references: the byte loop counts and the nesting scan runs", () => {
    const { version, payload } = recorded[recorded.length - 4];
    const loop = jest.spyOn(decodeLimits, "countByLoop");
    const scan = jest.spyOn(jsonDepth, "findJsonDepthExcess");
    referenceOutcome(() => decodeSamplesReply(payload, buildWeatherInputSamples(1)[0], { fields: version === "v1" ? WIRE_FIELDS_V1 : WIRE_FIELDS_V2 }));
    expect(loop).toHaveBeenCalledTimes(2); // the header's "data_offsets" and the metadata's "nulls"
    expect(scan).toHaveBeenCalledTimes(2); // the header and the metadata
  });

  test("single-byte mutations of the recorded replies (their metadata above all): the same samples or the same error", () => {
    const input = buildWeatherInputSamples(1)[0];
    const bytes = fc.constantFrom(0x22, 0x5b, 0x5d, 0x7b, 0x7d, 0x2c, 0x3a, 0x5c, 0x2e, 0x30, 0x31, 0x2d, 0x65, 0x20, 0x80, 0xc3, 0xff, 0x00);
    fc.assert(
      fc.property(
        fc.nat({ max: recorded.length - 1 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        bytes,
        fc.constantFrom("set", "insert", "delete"),
        (which, where, byte, how) => {
          const { version, payload } = recorded[which];
          const { meta, tensors } = splitPayload(payload);
          const metaBytes = Buffer.from(meta, "utf8");
          const at = Math.min(metaBytes.length - 1, Math.floor(where * metaBytes.length));
          const mutated =
            how === "set"
              ? Buffer.concat([metaBytes.subarray(0, at), Buffer.of(byte), metaBytes.subarray(at + 1)])
              : how === "insert"
                ? Buffer.concat([metaBytes.subarray(0, at), Buffer.of(byte), metaBytes.subarray(at)])
                : Buffer.concat([metaBytes.subarray(0, at), metaBytes.subarray(at + 1)]);
          expectSameDecoding(withMeta(new Uint8Array(mutated), tensors), { fields: version === "v1" ? WIRE_FIELDS_V1 : WIRE_FIELDS_V2 }, input);
        },
      ),
      { numRuns: 400, seed: 20261203 },
    );
  });

  /** JSON value texts with Python's number kinds, big ints, repeated and integer-like keys, Python's literals. */
  const NUMBER_TOKENS = [
    "0",
    "1",
    "-1",
    "1.0",
    "-0.0",
    "0.0",
    "-0",
    "1e16",
    "1.5e-07",
    "-0.0078125",
    "12345678901234567890",
    "9007199254740993",
    "NaN",
    "-Infinity",
  ];
  const KEYS = ['"a"', '"a"', '"nulls"', '"7"', '"0"', '"__proto__"', '"\\u006eulls"', '"\u00e9"'];
  const jsonValue: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small" },
      fc.constantFrom(...NUMBER_TOKENS),
      fc.constantFrom('"x"', '""', '"[{"', '"\\"nulls\\""', "true", "null"),
      fc.array(tie("node"), { maxLength: 4 }).map((items) => `[${items.join(",")}]`),
      fc.array(fc.tuple(fc.constantFrom(...KEYS), tie("node")), { maxLength: 4 }).map((entries) => `{${entries.map(([k, v]) => `${k}:${v}`).join(",")}}`),
    ),
  })).node;
  /** A value nested `levels` deep around `core`, by arrays, objects or both. */
  const nested = fc.tuple(fc.integer({ min: 60, max: 140 }), fc.constantFrom("array", "object", "mixed"), jsonValue).map(([levels, kind, core]) => {
    const opens: string[] = [];
    const closes: string[] = [];
    for (let i = 0; i < levels; i++) {
      const object = kind === "object" || (kind === "mixed" && i % 2 === 1);
      opens.push(object ? '{"k":' : "[");
      closes.unshift(object ? "}" : "]");
    }
    return `${opens.join("")}${core}${closes.join("")}`;
  });

  test("metadata texts with Python number kinds, big ints, repeated keys and deep nesting: the same samples or the same error", () => {
    const { meta, tensors } = splitPayload(encodeSamples([computedSample()], {}, { fields: WIRE_FIELDS_V2 }));
    const wire = JSON.parse(meta) as { samples: Array<Record<string, unknown>> };
    const sampleText = JSON.stringify(wire.samples[0]);
    fc.assert(
      fc.property(
        fc.oneof(jsonValue, nested),
        fc.oneof(jsonValue, nested),
        fc.constantFrom("metadata", "reward", "session", "extra"),
        fc.nat({ max: 3 }),
        fc.constantFrom("", " ", "\n"),
        (value, other, where, maxSamples, space) => {
          const sample =
            where === "metadata"
              ? sampleText.replace('"metadata":{', `"metadata":{"x":${value},`)
              : where === "reward"
                ? sampleText.replace(/"reward":[^,]*,/, `"reward":${value},`)
                : sampleText;
          const session = where === "session" ? `{"s":${value},"t":${other}}` : `{"t":${other}}`;
          const extra = where === "extra" ? `,"extra":${value}` : "";
          const text = `{"samples":[${sample}],${space}"session_metadata":${session}${extra},"empty_reason":null}`;
          expectSameDecoding(withMeta(text, tensors), { fields: WIRE_FIELDS_V2 });
          expectSameDecoding(withMeta(text, tensors), { fields: WIRE_FIELDS_V1, limits: { maxSamples } });
        },
      ),
      { numRuns: 300, seed: 20261204 },
    );
  });

  test("the nesting cap at its edge: 128 levels decode, 129 of braces, brackets or both are refused at the same offset", () => {
    const { tensors } = splitPayload(encodeSamples([], {}, { fields: WIRE_FIELDS_V2 }));
    for (const kind of ["[", '{"k":']) {
      for (const levels of [126, 127, 128]) {
        const closing = kind === "[" ? "]" : "}";
        // the meta object and session_metadata are two levels: `levels` in all
        const text = `{"samples":[],"session_metadata":{"d":${kind.repeat(levels - 2)}1${closing.repeat(levels - 2)}},"empty_reason":null}`;
        const outcome = expectSameDecoding(withMeta(text, tensors), { fields: WIRE_FIELDS_V2 }) as { error?: string };
        expect(outcome.error).toBeUndefined();
        const deeper = `{"samples":[],"session_metadata":{"d":${kind.repeat(levels - 1)}1${closing.repeat(levels - 1)}},"empty_reason":null}`;
        const refused = expectSameDecoding(withMeta(deeper, tensors), { fields: WIRE_FIELDS_V2 }) as { error?: string };
        if (levels === 128)
          expect(refused.error).toMatch(
            /^SamplesCodecError: samples reply: _samples_meta JSON nesting exceeds the depth limit of 128 \(level 129 opens at offset \d+\)$/,
          );
      }
    }
  });

  test("invalid UTF-8 and a count over the cap keep their order of precedence with the nesting cap", () => {
    const { tensors } = splitPayload(encodeSamples([], {}, { fields: WIRE_FIELDS_V2 }));
    const deep = `${"[".repeat(130)}${"]".repeat(130)}`;
    const cases: Array<[string, Uint8Array]> = [
      [
        "deep and not UTF-8",
        new Uint8Array(Buffer.concat([Buffer.from(`{"samples":[],"session_metadata":{"d":${deep}},"x":"`), Buffer.of(0xff), Buffer.from('"}')])),
      ],
      ["shallow and not UTF-8", new Uint8Array(Buffer.concat([Buffer.from('{"samples":[],"session_metadata":{},"x":"'), Buffer.of(0xc3), Buffer.from('"}')]))],
      ["deep and over the count", new Uint8Array(Buffer.from(`{"samples":[{"nulls":[]},{"nulls":[]}],"session_metadata":{"d":${deep}},"empty_reason":null}`))],
    ];
    const errors = cases.map(
      ([, meta]) => (expectSameDecoding(withMeta(meta, tensors), { fields: WIRE_FIELDS_V2, limits: { maxSamples: 1 } }) as { error: string }).error,
    );
    expect(errors[0]).toMatch(/nesting exceeds the depth limit of 128/);
    expect(errors[1]).toMatch(/is not UTF-8 JSON/);
    expect(errors[2]).toBe("SamplesCodecError: samples reply: _samples_meta declares more than 1 samples; the limit is 1 (limits.maxSamples)");
  });

  test("with the bracket count broken (always yes), a reply nested too deep would decode: the reference comparison sees it", () => {
    const { tensors } = splitPayload(encodeSamples([], {}, { fields: WIRE_FIELDS_V2 }));
    const payload = withMeta(`{"samples":[],"session_metadata":{"d":${'{"k":'.repeat(127)}1${"}".repeat(127)}},"empty_reason":null}`, tensors);
    const reference = referenceOutcome(() => decodeSamplesReply(payload, new Sample(), { fields: WIRE_FIELDS_V2 }));
    expect(reference).toEqual({ error: expect.stringMatching(/nesting exceeds the depth limit of 128/) as unknown as string });
    jest.spyOn(jsonDepth, "cannotNestPast").mockReturnValue(true);
    expect(outcomeOf(() => decodeSamplesReply(payload, new Sample(), { fields: WIRE_FIELDS_V2 }))).not.toEqual(reference);
  });
});
