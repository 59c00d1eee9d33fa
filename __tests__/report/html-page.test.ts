// The report page as markup: one section per pair, server text escaped, the kept/superseded/failing leaves and the
// first differing token told apart, and nothing that would load from the network.
import { describe, expect, test } from "@jest/globals";
import { failingLeaves, renderHtmlReport } from "../../src/report/html-page";
import { drawRetryTree, layoutTree } from "../../src/report/tree-svg";
import type { ReportPairView, ReportRunView } from "../../src/report/types";

function run(version: string, tokens: number[], keptLeaves: number[] = [], tree: ReportRunView["tree"] = null): ReportRunView {
  return {
    version,
    sessionId: "s",
    records: [
      { responseId: "r0", promptTokens: 10, completionTokens: 3, weightVersion: "w0", finishReason: "tool_calls" },
      { responseId: "r2", promptTokens: 14, completionTokens: 2, weightVersion: "w2", finishReason: "stop" },
    ],
    tree,
    keptLeaves,
    sample: { tokens, responseLength: 2, lossMask: [1, 1], logProbBits: ["bfe0000000000000", "8000000000000000"], tokenTexts: tokens.map((id) => `<t${id}>`) },
    sampleCount: keptLeaves.length || 1,
    failure: null,
  };
}

const TREE: ReportRunView["tree"] = {
  nodes: [
    { id: 0, parent: null, numTokens: 13, responseId: "r0", weightVersion: "w0" },
    { id: 1, parent: 0, numTokens: 16, responseId: "r1", weightVersion: null },
    { id: 2, parent: 0, numTokens: 16, responseId: "r2", weightVersion: "w2" },
  ],
  leaves: [
    { nodeId: 1, path: [0, 1] },
    { nodeId: 2, path: [0, 2] },
  ],
};

function pair(pass: boolean, v2Tokens: number[], keptLeaves: number[]): ReportPairView {
  return {
    title: "trajectory <0>",
    origin: null,
    pass,
    v1: run("v1", [1, 2, 3, 4]),
    v2: run("v2", v2Tokens, keptLeaves, TREE),
    failures: pass ? [] : [{ part: "sample count", text: "[sample count] the v2 run returned 2 samples, expected 1", paths: [] }],
  };
}

describe("renderHtmlReport", () => {
  const page = renderHtmlReport({
    title: "t",
    generatedAt: "2026-01-01T00:00:00.000Z",
    summary: [["verdict", "FAIL"]],
    pairs: [pair(true, [1, 2, 3, 4], [2]), pair(false, [1, 2, 9, 4], [1, 2])],
  });

  test("one section per pair, failing pairs open and passing ones folded", () => {
    expect(page.match(/<section class="pair /g)).toHaveLength(2);
    expect(page).toContain(`<section class="pair pass" id="pair-0" data-pass="true"><details>`);
    expect(page).toContain(`<section class="pair fail" id="pair-1" data-pass="false"><details open>`);
  });

  test("server-provided text is escaped, never markup", () => {
    expect(page).not.toContain("<t1>");
    expect(page).toContain("&lt;t1&gt;");
    expect(page).toContain("trajectory &lt;0&gt;");
  });

  test("the first differing token carries an id and the diff classes, with both sides' data", () => {
    const match = /<span class="([^"]*)" id="pair-1-first-diff"([^>]*)>/.exec(page);
    expect(match?.[1]).toBe("tok loss diff first-diff");
    expect(match?.[2]).toContain(`data-i="2"`);
    expect(match?.[2]).toContain(`data-l="3"`);
    expect(match?.[2]).toContain(`data-r="9"`);
    expect(page).not.toContain("pair-0-first-diff");
  });

  test("the failing parts print as the matchers print them", () => {
    expect(page).toContain(`<pre class="failures">[sample count] the v2 run returned 2 samples, expected 1</pre>`);
  });

  test("self-contained: no external script, stylesheet, image or font", () => {
    expect(page).not.toMatch(/<script[^>]+src=|<link[^>]+href=|<img[^>]+src=|url\(|https?:\/\//);
  });
});

describe("retry tree drawing", () => {
  test("roots, kept leaves, superseded leaves and failing leaves have their own classes", () => {
    const svg = drawRetryTree(run("v2", [1, 2, 3, 4], [2], TREE), [1]);
    expect(svg).toContain(`<g class="node root"><title>node 0 (root), parent none, 13 tokens, weight version w0`);
    expect(svg).toContain(
      `<g class="node leaf superseded failing"><title>node 1 (superseded retry leaf, failing), parent 0, 16 tokens, weight version not on the active path`,
    );
    expect(svg).toContain(`<g class="node leaf kept"><title>node 2 (active leaf, kept)`);
    expect(svg.match(/<path class="edge"/g)).toHaveLength(2);
  });

  test("a kept leaf off the active path is the failing leaf; a passing pair has none", () => {
    expect(failingLeaves(pair(false, [1, 2, 9, 4], [1, 2]))).toEqual([1]);
    expect(failingLeaves(pair(true, [1, 2, 3, 4], [2]))).toEqual([]);
  });

  test("when only the compared sample differs, its leaf is the failing one", () => {
    const p = pair(false, [1, 2, 9, 4], [2]);
    p.failures = [{ part: "training sample", text: "[training sample] ...", paths: ["sample.tokens[2]"] }];
    expect(failingLeaves(p)).toEqual([2]);
  });
});

describe("layoutTree", () => {
  test("a retry chain stays one column; siblings spread left to right in commit order; parents centre over children", () => {
    const { depth, column } = layoutTree([
      { id: 0, parent: null },
      { id: 1, parent: 0 },
      { id: 2, parent: 1 },
      { id: 3, parent: 1 },
      { id: 4, parent: 1 },
      { id: 5, parent: 4 },
    ]);
    expect([0, 1, 2, 3, 4, 5].map((id) => [depth.get(id), column.get(id)])).toEqual([
      [0, 1],
      [1, 1],
      [2, 0],
      [2, 1],
      [2, 2],
      [3, 2],
    ]);
  });
});
