// Token differences as aligned runs: the alignment covers both sequences exactly, one insertion is one run, the
// budget bounds the work, and a loss mask aligns through its sample's tokens. Decoded with the real Qwen3 tokenizer.
import fc from "fast-check";
import { alignSequences, type AlignmentHunk } from "../../src/matchers/sequence-alignment";
import { alignDifferingSequences, describeSequenceHunks } from "../../src/matchers/sequence-hunks";
import { formatVerdict, VerdictBuilder } from "../../src/matchers/parity-verdict";
import { loadTokenizer } from "../../src/tokenizer/load";
import type { Tokenizer } from "../../src/tokenizer/types";

let tokenizer: Tokenizer;
beforeAll(async () => {
  tokenizer = await loadTokenizer();
});

/** Checks that the runs tile both sequences in order and that equal runs hold equal elements. */
function checkCover(left: readonly number[], right: readonly number[], hunks: AlignmentHunk[]): void {
  let i = 0;
  let j = 0;
  for (const hunk of hunks) {
    expect([hunk.leftStart, hunk.rightStart]).toEqual([i, j]);
    if (hunk.kind === "equal") {
      expect(hunk.leftEnd - hunk.leftStart).toBe(hunk.rightEnd - hunk.rightStart);
      expect(left.slice(hunk.leftStart, hunk.leftEnd)).toEqual(right.slice(hunk.rightStart, hunk.rightEnd));
    }
    if (hunk.kind === "insert") expect(hunk.leftEnd).toBe(hunk.leftStart);
    if (hunk.kind === "delete") expect(hunk.rightEnd).toBe(hunk.rightStart);
    i = hunk.leftEnd;
    j = hunk.rightEnd;
  }
  expect([i, j]).toEqual([left.length, right.length]);
}

test("a 4-token think block only v1 has reads as one run with its decoded text, then the equal rest", () => {
  const before = tokenizer.encode("The weather in Beijing is sunny. ".repeat(80)).slice(0, 242);
  const after = tokenizer.encode("Shanghai is rainy today, take an umbrella. ".repeat(80)).slice(0, 360);
  const think = tokenizer.encode("<think>\n\n</think>\n\n");
  expect(think).toHaveLength(4);
  const v1 = [...before, ...think, ...after];
  const v2 = [...before, ...after];
  const alignment = alignSequences(v1, v2);
  expect(alignment).toEqual({
    complete: true,
    hunks: [
      { kind: "equal", leftStart: 0, leftEnd: 242, rightStart: 0, rightEnd: 242 },
      { kind: "delete", leftStart: 242, leftEnd: 246, rightStart: 242, rightEnd: 242 },
      { kind: "equal", leftStart: 246, leftEnd: 606, rightStart: 242, rightEnd: 602 },
    ],
  });
  const [sequence] = alignDifferingSequences({ tokens: v1 }, { tokens: v2 }, "sample");
  expect(describeSequenceHunks(sequence, { leftName: "v1", rightName: "v2", decode: (ids) => tokenizer.decode(ids) })).toBe(
    'sample.tokens: +4 tokens in v1 at 242 ("<think>\\n\\n</think>\\n\\n"), then equal for 360',
  );
  // the other way round it is an insertion on the right
  const [reverse] = alignDifferingSequences({ tokens: v2 }, { tokens: v1 }, "sample");
  expect(describeSequenceHunks(reverse, { decode: (ids) => tokenizer.decode(ids) })).toBe(
    'sample.tokens: +4 tokens in right at 242 ("<think>\\n\\n</think>\\n\\n"), then equal for 360',
  );
});

test("the runs always tile both sequences, equal runs hold equal elements, and no two neighbours share a kind", () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 60 }), fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 60 }), (left, right) => {
      const { hunks, complete } = alignSequences(left, right);
      expect(complete).toBe(true);
      checkCover(left, right, hunks);
      for (let k = 1; k < hunks.length; k++) expect(hunks[k].kind === "equal" || hunks[k - 1].kind === "equal").toBe(true);
    }),
    { numRuns: 300 },
  );
});

test("over the comparison budget the differing middle is one changed run, and the common prefix and suffix stay exact", () => {
  const left = [1, 2, ...Array.from({ length: 400 }, (_, k) => k % 7), 9, 9];
  const right = [1, 2, ...Array.from({ length: 380 }, (_, k) => (k * 5) % 11), 9, 9];
  const bounded = alignSequences(left, right, { maxComparisons: 50 });
  expect(bounded.complete).toBe(false);
  expect(bounded.hunks.map((hunk) => hunk.kind)).toEqual(["equal", "replace", "equal"]);
  checkCover(left, right, bounded.hunks);
  const [sequence] = alignDifferingSequences({ tokens: left }, { tokens: right }, "sample");
  expect(describeSequenceHunks({ ...sequence, alignment: bounded })).toContain("too many differences to align within the budget");
});

test("a loss mask aligns through its sample's tokens (the response's last tokens), and a change in place stays a one-element run", () => {
  // prompt 3 tokens, response 6 on the left; the right lacks response tokens 2..3 and its mask differs at the end
  const left = { tokens: [5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17], loss_mask: [1, 1, 0, 0, 1, 1, 1, 1] };
  const right = { tokens: [5, 6, 7, 10, 11, 14, 15, 16, 17], loss_mask: [1, 1, 1, 1, 1, 0] };
  const sequences = alignDifferingSequences(left, right, "sample");
  expect(sequences.map((sequence) => sequence.path)).toEqual(["sample.tokens", "sample.loss_mask"]);
  const mask = sequences[1];
  expect(mask.alignment.hunks).toEqual([
    { kind: "equal", leftStart: 0, leftEnd: 2, rightStart: 0, rightEnd: 2 },
    { kind: "delete", leftStart: 2, leftEnd: 4, rightStart: 2, rightEnd: 2 },
    { kind: "equal", leftStart: 4, leftEnd: 7, rightStart: 2, rightEnd: 5 },
    { kind: "replace", leftStart: 7, leftEnd: 8, rightStart: 5, rightEnd: 6 },
  ]);
  expect(describeSequenceHunks(mask)).toBe(
    "sample.loss_mask: +2 elements in left at 2 ([0, 0]), then equal for 3, then 1 element of left vs 1 of right at 7 (right 5) ([1] vs [0])",
  );
});

test("a failing bitwise part prints the runs instead of the shifted positions and still counts every differing leaf", () => {
  const v1 = { tokens: [1, 2, 3, 151667, 271, 151668, 271, 4, 5, 6, 7, 8], reward: 1 };
  const v2 = { tokens: [1, 2, 3, 4, 5, 6, 7, 8], reward: 2 };
  const builder = new VerdictBuilder();
  expect(builder.compare("training sample", "v1 (left) is not bitwise equal to v2 (right)", v1, v2, { rootPath: "sample" })).toBe(false);
  const verdict = builder.verdict();
  expect(verdict.pass).toBe(false);
  expect(verdict.failures[0].totalDifferences).toBe(7); // the length, 5 shifted positions and the reward: unchanged
  expect(formatVerdict(verdict, { sides: { leftName: "v1", rightName: "v2" } })).toBe(
    [
      "  [training sample] v1 (left) is not bitwise equal to v2 (right)",
      "    sample.tokens: +4 tokens in v1 at 3 ([151667, 271, 151668, 271]), then equal for 5",
      "    sample.reward: 0x3ff0000000000000 (1) vs 0x4000000000000000 (2)",
      "    7 differences in total, position by position (1 listed; the rest inside the aligned runs above or past the first ones kept)",
    ].join("\n"),
  );
  // the same tokens changed in place (equal lengths) keep the positional listing
  expect(alignDifferingSequences({ tokens: [1, 2, 3, 4, 5, 6, 7, 8] }, { tokens: [1, 2, 3, 9, 5, 6, 7, 8] }, "sample")).toEqual([]);
});
