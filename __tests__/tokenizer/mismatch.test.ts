// The tito_session_mismatch report: clean trajectories report nothing, each crafted fault reports its one type.
// Trajectories are built with the real tokenizer and template, then one segment is corrupted per case.
import { beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import {
  createTito,
  loadTokenizer,
  MismatchComparator,
  segmentBySpecialIds,
  type ChatMessage,
  type TitoMismatchEntry,
  type TokenSegment,
  type Qwen3Tito,
  type Qwen3Tokenizer,
} from "../../src/tokenizer";
import { firstTurn, type StoredTurn } from "./conversation";

const IM_START = 151644;
const IM_END = 151645;
const END_OF_TEXT = 151643;

let tokenizer: Qwen3Tokenizer;
let tito: Qwen3Tito;
let clean: StoredTurn;

/** Replaces the first occurrence of `find` (a run of ids) inside `ids` at or after `from`. */
function replaceRun(ids: number[], find: number[], replacement: number[], from = 0): number[] {
  for (let i = from; i + find.length <= ids.length; i += 1) {
    if (find.every((id, k) => ids[i + k] === id)) return [...ids.slice(0, i), ...replacement, ...ids.slice(i + find.length)];
  }
  throw new Error(`run ${JSON.stringify(find)} not found`);
}

/** Index of the segment (special ids cut, trailing "\n" kept out) that holds position `position` of `ids`. */
function segmentIndexAt(ids: number[], position: number): number {
  let end = 0;
  const segments = segmentBySpecialIds(ids, tokenizer.specialIds);
  for (let index = 0; index < segments.length; index += 1) {
    end += segments[index].ids.length;
    if (position < end) return index;
  }
  throw new Error(`position ${position} is past the last segment`);
}

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  tito = createTito(tokenizer, { enable_thinking: false });
  const call: ChatMessage = {
    role: "assistant",
    content: "",
    tool_calls: [{ id: "call00000", type: "function", function: { name: "get_weather", arguments: '{"location": "Beijing"}' } }],
  };
  const first = firstTurn(tito, tokenizer, buildInitialMessages(), call, WEATHER_TOOLS, {});
  const withTool = [...first.messages, { role: "tool", content: MOCK_TOOL_RESULTS[0] }];
  const prompt = tito.mergeTokens(first.messages, withTool, first.ids, WEATHER_TOOLS, {});
  const answer = "Beijing is 22 degrees and sunny.";
  clean = {
    messages: [...withTool, { role: "assistant", content: answer }],
    ids: [...prompt, ...tokenizer.encode(answer), IM_END],
  };
});

describe("compareWithCanonical", () => {
  it("reports nothing for a clean trajectory (trailing newlines ignored on both sides)", () => {
    expect(tito.compareWithCanonical(clean.messages, clean.ids, WEATHER_TOOLS, {})).toEqual([]);
    expect(tito.compareWithCanonical(clean.messages, [...clean.ids, 198], WEATHER_TOOLS, {})).toEqual([]);
  });

  it("reports special_token_count when a special token is missing", () => {
    const lastStart = clean.ids.lastIndexOf(IM_START);
    const ids = [...clean.ids.slice(0, lastStart), ...clean.ids.slice(lastStart + 1)];
    const report = tito.compareWithCanonical(clean.messages, ids, WEATHER_TOOLS, {});
    expect(report).toHaveLength(1);
    expect(report[0]).toMatchObject({ type: "special_token_count", segment_index: -1 });
    expect(report[0].detail).toMatch(/^segment count differs: expected \d+, got \d+$/);
    expect(report[0].expected_text).toContain("[<|im_start|>]");
  });

  it("reports special_token_type when a special token is swapped for another", () => {
    const userEnd = clean.ids.indexOf(IM_END, clean.ids.indexOf(IM_START, 1) + 1);
    const ids = [...clean.ids];
    ids[userEnd] = END_OF_TEXT;
    const report = tito.compareWithCanonical(clean.messages, ids, WEATHER_TOOLS, {});
    expect(report).toEqual([expect.objectContaining({ type: "special_token_type", expected_text: "<|im_end|>", actual_text: "<|endoftext|>" })]);
    expect(report[0].segment_index).toBe(segmentIndexAt(clean.ids, userEnd));
    expect(report[0].segment_index).toBe(6); // [im_start] system [im_end] "\n" [im_start] user [im_end]
  });

  it("reports assistant_text when an assistant turn's content differs", () => {
    const ids = replaceRun(clean.ids, tokenizer.encode(" sunny."), tokenizer.encode(" rainy."));
    const report = tito.compareWithCanonical(clean.messages, ids, WEATHER_TOOLS, {});
    expect(report).toHaveLength(1);
    expect(report[0]).toMatchObject({ type: "assistant_text", segment_index: segmentIndexAt(clean.ids, clean.ids.length - 2) });
    expect(report[0].expected_text).toContain("Beijing is 22 degrees and sunny.");
    expect(report[0].actual_text).toContain("Beijing is 22 degrees and rainy.");
    expect(report[0].actual_text.startsWith("assistant\n")).toBe(true);
  });

  it("reports non_assistant_text when a user or tool turn's content differs", () => {
    const ids = replaceRun(clean.ids, tokenizer.encode(" Beijing?"), tokenizer.encode(" Shanghai?"));
    const report = tito.compareWithCanonical(clean.messages, ids, WEATHER_TOOLS, {});
    expect(report).toHaveLength(1);
    expect(report[0]).toMatchObject({ type: "non_assistant_text", segment_index: 5 }); // the user turn's content
    expect(report[0].expected_text).toBe("user\nWhat's the weather in Beijing?");
    expect(report[0].actual_text).toBe("user\nWhat's the weather in Shanghai?");
    expect(Object.keys(report[0]).sort()).toEqual(["actual_text", "detail", "expected_text", "segment_index", "type"]);
    // mirrors tests/fast/utils/chat_template_utils/test_token_seq_comparator.py::test_non_assistant_content_diff and
    // token_seq_comparator.py Mismatch.to_dict (detail defaults to ""; only the
    // structural special_token_count entry fills it), so a report from us and from miles is the same payload.
    expect(report[0].detail).toBe("");
    expect(JSON.stringify(report[0])).toBe(
      JSON.stringify({ type: "non_assistant_text", segment_index: 5, expected_text: report[0].expected_text, actual_text: report[0].actual_text, detail: "" }),
    );
  });
});

describe("segments", () => {
  it("cut at special ids, each special id alone", () => {
    const specials = new Set([IM_START, IM_END]);
    expect(segmentBySpecialIds([IM_START, 1, 2, IM_END, IM_END, 3], specials)).toEqual([
      { ids: [IM_START], special: true },
      { ids: [1, 2], special: false },
      { ids: [IM_END], special: true },
      { ids: [IM_END], special: true },
      { ids: [3], special: false },
    ]);
    expect(segmentBySpecialIds([], specials)).toEqual([]);
  });

  it("a different special/content pattern with the same count is structural", () => {
    const comparator = new MismatchComparator({
      specialIds: new Set([IM_START]),
      trailingIds: new Set(),
      assistantStart: "S",
      decode: (ids) => ids.map((id) => (id === IM_START ? "S" : String(id))).join(","),
    });
    expect(comparator.compare([IM_START, 1], [1, IM_START])).toEqual([
      {
        type: "special_token_count",
        segment_index: -1,
        expected_text: "[S] (1 tokens)",
        actual_text: "(1 tokens) [S]",
        detail: "segment structure (special/content pattern) differs",
      },
    ]);
  });
});

/**
 * Test oracle: the report computed the plain way (copy every segment, decode every differing one), to check the
 * linear comparator against. Written from SPEC §8 independently of the comparator's offset-based code.
 */
function referenceReport(expectedIds: readonly number[], actualIds: readonly number[]): TitoMismatchEntry[] {
  const specials = tokenizer.specialIds;
  const decode = (ids: readonly number[]) => tokenizer.decode(ids, { skipSpecialTokens: false });
  const strip = (ids: readonly number[]) => {
    let end = ids.length;
    while (end > 0 && ids[end - 1] === 198) end -= 1;
    return ids.slice(0, end);
  };
  const expected = segmentBySpecialIds(strip(expectedIds), specials);
  const actual = segmentBySpecialIds(strip(actualIds), specials);
  const describeSegments = (segments: TokenSegment[]) => segments.map((s) => (s.special ? `[${decode(s.ids)}]` : `(${s.ids.length} tokens)`)).join(" ");
  const structural = (detail: string): TitoMismatchEntry[] => [
    { type: "special_token_count", segment_index: -1, expected_text: describeSegments(expected), actual_text: describeSegments(actual), detail },
  ];
  if (expected.length !== actual.length) return structural(`segment count differs: expected ${expected.length}, got ${actual.length}`);
  if (expected.some((s, i) => s.special !== actual[i].special)) return structural("segment structure (special/content pattern) differs");
  const isAssistant = (segments: TokenSegment[], i: number) =>
    i > 0 &&
    !segments[i].special &&
    segments[i - 1].special &&
    (decode(segments[i - 1].ids) + decode(segments[i].ids.slice(0, 20))).startsWith("<|im_start|>assistant");
  const entries: TitoMismatchEntry[] = [];
  expected.forEach((exp, i) => {
    const act = actual[i];
    if (JSON.stringify(exp.ids) === JSON.stringify(act.ids)) return;
    const [expectedText, actualText] = [decode(exp.ids), decode(act.ids)];
    if (exp.special) {
      entries.push({ type: "special_token_type", segment_index: i, expected_text: expectedText, actual_text: actualText, detail: "" });
    } else if (expectedText !== actualText) {
      const assistant = isAssistant(expected, i) && isAssistant(actual, i);
      entries.push({
        type: assistant ? "assistant_text" : "non_assistant_text",
        segment_index: i,
        expected_text: expectedText,
        actual_text: actualText,
        // mirrors miles/utils/chat_template_utils/token_seq_comparator.py: per-segment entries carry detail ""
        detail: "",
      });
    }
  });
  return entries;
}

describe("the linear comparator", () => {
  it("compareIds on the canonical ids is compareWithCanonical", () => {
    const canonical = tito.canonicalIds(clean.messages, WEATHER_TOOLS, {});
    const edited = replaceRun(clean.ids, tokenizer.encode(" sunny."), tokenizer.encode(" rainy."));
    expect(tito.compareIds(canonical, clean.ids)).toEqual([]);
    expect(tito.compareIds(canonical, edited)).toEqual(tito.compareWithCanonical(clean.messages, edited, WEATHER_TOOLS, {}));
    expect(tito.compareIds(canonical, edited)).toHaveLength(1);
  });

  it("gives the plain segment-by-segment report for random edits of a real trajectory", () => {
    const canonical = tito.canonicalIds(clean.messages, WEATHER_TOOLS, {});
    const pool = [IM_START, IM_END, END_OF_TEXT, 198, 151667, 151668, ...tokenizer.encode(" rainy, 北京 😀 assistant")];
    const edit = fc.record({
      kind: fc.constantFrom("replace", "insert", "delete", "trailing"),
      at: fc.nat(),
      id: fc.constantFrom(...pool),
    });
    fc.assert(
      fc.property(fc.array(edit, { maxLength: 4 }), fc.boolean(), (edits, onExpected) => {
        const ids = [...clean.ids];
        for (const { kind, at, id } of edits) {
          const position = at % (ids.length + 1);
          if (kind === "replace" && position < ids.length) ids[position] = id;
          else if (kind === "insert") ids.splice(position, 0, id);
          else if (kind === "delete" && position < ids.length) ids.splice(position, 1);
          else if (kind === "trailing") ids.push(198);
        }
        const [expected, actual] = onExpected ? [ids, clean.ids] : [canonical, ids];
        expect(tito.compareIds(expected, actual)).toEqual(referenceReport(expected, actual));
      }),
      { numRuns: 400, seed: 4242 },
    );
  });
});
