// The tito_session_mismatch report: clean trajectories report nothing, each crafted fault reports its one type.
import { beforeAll, describe, expect, it } from "@jest/globals";
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../src/agent/texts";
import {
  createTito,
  loadTokenizer,
  MismatchComparator,
  segmentBySpecialIds,
  type ChatMessage,
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
    expect(report[0]!.detail).toMatch(/^segment count differs: expected \d+, got \d+$/);
    expect(report[0]!.expected_text).toContain("[<|im_start|>]");
  });

  it("reports special_token_type when a special token is swapped for another", () => {
    const userEnd = clean.ids.indexOf(IM_END, clean.ids.indexOf(IM_START, 1) + 1);
    const ids = [...clean.ids];
    ids[userEnd] = END_OF_TEXT;
    const report = tito.compareWithCanonical(clean.messages, ids, WEATHER_TOOLS, {});
    expect(report).toEqual([
      expect.objectContaining({ type: "special_token_type", expected_text: "<|im_end|>", actual_text: "<|endoftext|>" }),
    ]);
    expect(report[0]!.segment_index).toBeGreaterThan(0);
  });

  it("reports assistant_text when an assistant turn's content differs", () => {
    const ids = replaceRun(clean.ids, tokenizer.encode(" sunny."), tokenizer.encode(" rainy."));
    const report = tito.compareWithCanonical(clean.messages, ids, WEATHER_TOOLS, {});
    expect(report).toHaveLength(1);
    expect(report[0]).toMatchObject({ type: "assistant_text" });
    expect(report[0]!.expected_text).toContain("Beijing is 22 degrees and sunny.");
    expect(report[0]!.actual_text).toContain("Beijing is 22 degrees and rainy.");
    expect(report[0]!.actual_text.startsWith("assistant\n")).toBe(true);
  });

  it("reports non_assistant_text when a user or tool turn's content differs", () => {
    const ids = replaceRun(clean.ids, tokenizer.encode(" Beijing?"), tokenizer.encode(" Shanghai?"));
    const report = tito.compareWithCanonical(clean.messages, ids, WEATHER_TOOLS, {});
    expect(report).toHaveLength(1);
    expect(report[0]).toMatchObject({ type: "non_assistant_text" });
    expect(report[0]!.expected_text).toBe("user\nWhat's the weather in Beijing?");
    expect(report[0]!.actual_text).toBe("user\nWhat's the weather in Shanghai?");
    expect(Object.keys(report[0]!).sort()).toEqual(["actual_text", "detail", "expected_text", "segment_index", "type"]);
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
