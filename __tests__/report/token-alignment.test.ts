// The aligned token view: differences marked by id, mask and log-prob bits (so -0 vs +0 counts), long equal
// stretches folded with context kept around every difference and at both ends.
import { describe, expect, test } from "@jest/globals";
import { alignSamples, alignTokens, firstDifferingToken } from "../../src/report/token-alignment";
import { sampleView } from "../../src/report/run-view";
import type { ReportSampleView } from "../../src/report/types";

function sample(tokens: number[], responseLength: number, logProbs: number[] = Array.from({ length: responseLength }, () => -0.5)): ReportSampleView {
  const view = sampleView({ tokens, response_length: responseLength, loss_mask: Array.from({ length: responseLength }, () => 1), rollout_log_probs: logProbs });
  if (view === null) throw new Error("no view");
  return view;
}

describe("alignTokens", () => {
  test("equal samples have no differing position; prompt tokens carry no mask or log-prob", () => {
    const tokens = alignTokens(sample([1, 2, 3, 4], 2), sample([1, 2, 3, 4], 2));
    expect(tokens.map((token) => token.differs)).toEqual([false, false, false, false]);
    expect(tokens[0].left).toEqual({ id: 1, text: null, mask: null, logProbBits: null });
    expect(tokens[3].left).toEqual({ id: 4, text: null, mask: 1, logProbBits: "bfe0000000000000" });
    expect(firstDifferingToken(tokens)).toBe(-1);
  });

  test("a negative zero log-prob differs from a positive zero one", () => {
    const tokens = alignTokens(sample([1, 2, 3], 1, [0]), sample([1, 2, 3], 1, [-0]));
    expect(firstDifferingToken(tokens)).toBe(2);
    expect(tokens[2].left?.logProbBits).toBe("0000000000000000");
    expect(tokens[2].right?.logProbBits).toBe("8000000000000000");
  });

  test("a longer side differs where the other has no token; a changed mask entry differs", () => {
    const left = sample([1, 2, 3], 2);
    const right = sampleView({ tokens: [1, 2, 3, 9], response_length: 3, loss_mask: [1, 0, 1], rollout_log_probs: [-0.5, -0.5, -0.5] });
    const tokens = alignTokens(left, right);
    expect(tokens.map((token) => token.differs)).toEqual([false, false, true, true]);
    expect([tokens[2].left?.mask, tokens[2].right?.mask]).toEqual([1, 0]);
    expect(tokens[3].left).toBeNull();
  });
});

test("an inserted think block is marked as v1's tokens alone; the tokens after it pair with their equals (no shift)", () => {
  const base = Array.from({ length: 600 }, (_, i) => 1000 + i);
  const withBlock = [...base.slice(0, 242), 151667, 271, 151668, 271, ...base.slice(242)];
  const tokens = alignTokens(sample(withBlock, 4), sample(base, 4));
  const differing = tokens.filter((token) => token.differs);
  expect(differing.map((token) => [token.index, token.left?.id, token.right])).toEqual([
    [242, 151667, null],
    [243, 271, null],
    [244, 151668, null],
    [245, 271, null],
  ]);
  expect(tokens).toHaveLength(604);
  expect(tokens[246]).toMatchObject({ index: 246, rightIndex: 242, differs: false });
  expect(firstDifferingToken(tokens)).toBe(242);
  // folded: context around the four tokens and at both ends, the rest as two equal stretches
  const segments = alignSamples(sample(withBlock, 4), sample(base, 4), { context: 3, foldAbove: 100 });
  expect(segments.map((segment) => segment.kind)).toEqual(["tokens", "folded", "tokens", "folded", "tokens"]);
});

describe("alignSamples", () => {
  test("short samples are one unfolded stretch", () => {
    const segments = alignSamples(sample([1, 2, 3], 1), sample([1, 2, 3], 1));
    expect(segments).toHaveLength(1);
    expect(segments[0].kind).toBe("tokens");
  });

  test("a long sample keeps context around its one difference and at both ends, folding the rest", () => {
    const n = 2000;
    const base = Array.from({ length: n }, (_, i) => 100 + i);
    const changed = [...base];
    changed[1000] = 7;
    const segments = alignSamples(sample(base, 10), sample(changed, 10), { context: 5, foldAbove: 100 });
    expect(
      segments.map((segment) =>
        segment.kind === "folded" ? `fold ${segment.from}-${segment.to}` : `show ${segment.tokens[0].index}-${segment.tokens.at(-1)?.index}`,
      ),
    ).toEqual(["show 0-4", "fold 5-995", "show 995-1005", "fold 1006-1995", "show 1995-1999"]);
  });
});
