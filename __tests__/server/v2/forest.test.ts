// Pure tests of the v2 trajectory forest: node bookkeeping, attach-point search, cap, tree metadata.
// Synthetic forests only; the HTTP suites cover the same rules through real chat turns.
import { describe, expect, test } from "@jest/globals";
import type { ChatMessage } from "../../../src/tokenizer/types";
import { ForestCapacityError, MAX_TREE_NODES, TrajectoryForest, type TrajectoryNode } from "../../../src/server/v2/forest";
import { buildTreeMetadata } from "../../../src/server/v2/tree-metadata";
import { stubRecord } from "./support/forest-builders";

const SYS: ChatMessage = { role: "system", content: "sys" };
const U1: ChatMessage = { role: "user", content: "q1" };
const A1: ChatMessage = { role: "assistant", content: "a1" };
const T1: ChatMessage = { role: "tool", content: "t1", tool_call_id: "c1" };
const A2: ChatMessage = { role: "assistant", content: "a2" };
const T2: ChatMessage = { role: "tool", content: "t2", tool_call_id: "c2" };
const A3: ChatMessage = { role: "assistant", content: "a3" };

const same = (a: ChatMessage, b: ChatMessage): boolean => a.role === b.role && a.content === b.content;

function commit(
  forest: TrajectoryForest,
  parent: TrajectoryNode | null,
  delta: ChatMessage[],
  extra: { finishReason?: string; committedAt?: number } = {},
): TrajectoryNode {
  const id = forest.nodes.length;
  const tokens = [...(parent?.tokenIds ?? []), 100 + id];
  return forest.createNode(parent, {
    deltaMessages: delta,
    tokenIds: tokens,
    completionSpan: [tokens.length - 1, tokens.length],
    committedAt: extra.committedAt ?? id,
    responseId: `resp-${id}`,
    record: stubRecord(id),
    finishReason: extra.finishReason ?? "stop",
  });
}

function linear(): { forest: TrajectoryForest; n0: TrajectoryNode; n1: TrajectoryNode; n2: TrajectoryNode } {
  const forest = new TrajectoryForest();
  const n0 = commit(forest, null, [SYS, U1, A1]);
  const n1 = commit(forest, n0, [T1, A2]);
  const n2 = commit(forest, n1, [T2, A3]);
  return { forest, n0, n1, n2 };
}

describe("attach-point search", () => {
  test("a strict extension of the leaf attaches at the leaf", () => {
    const { forest, n2 } = linear();
    const point = forest.findAttachPoint([SYS, U1, A1, T1, A2, T2, A3, { role: "user", content: "next" }], same);
    expect(point.node).toBe(n2);
    expect(point.matchedMessages).toBe(7);
  });

  test("re-sending exactly the stored path attaches at its end (empty suffix)", () => {
    const { forest, n2 } = linear();
    const point = forest.findAttachPoint([SYS, U1, A1, T1, A2, T2, A3], same);
    expect(point.node).toBe(n2);
    expect(point.matchedMessages).toBe(7);
  });

  test("a divergence after an internal node attaches at that node", () => {
    const { forest, n1 } = linear();
    const point = forest.findAttachPoint([SYS, U1, A1, T1, A2, { ...T2, content: "other" }], same);
    expect(point.node).toBe(n1);
    expect(point.matchedMessages).toBe(5);
    expect(point.bestOverlap).toBe(5);
  });

  test("a partially matched delta is never a candidate: the parent wins", () => {
    const { forest, n0 } = linear();
    const point = forest.findAttachPoint([SYS, U1, A1, T1, { role: "assistant", content: "rewritten" }], same);
    expect(point.node).toBe(n0);
    expect(point.matchedMessages).toBe(3);
    expect(point.bestOverlap).toBe(4);
  });

  test("a divergence inside the root delta, or a pure prefix of it, opens a new root", () => {
    const { forest } = linear();
    expect(forest.findAttachPoint([SYS, { role: "user", content: "other" }], same)).toEqual({ node: null, matchedMessages: 0, bestOverlap: 1 });
    expect(forest.findAttachPoint([SYS, U1], same)).toEqual({ node: null, matchedMessages: 0, bestOverlap: 2 });
    expect(forest.findAttachPoint([], same).node).toBeNull();
  });

  test("equal depth goes to the higher commit number, even with an earlier wall clock", () => {
    const forest = new TrajectoryForest();
    const n0 = commit(forest, null, [SYS, U1, A1], { committedAt: 100 });
    const first = commit(forest, n0, [T1, A2], { committedAt: 50 });
    const second = commit(forest, n0, [T1, A2], { committedAt: 10 });
    expect(first.id).toBeLessThan(second.id);
    expect(forest.findAttachPoint([SYS, U1, A1, T1, A2, T2], same).node).toBe(second);
  });

  test("the deepest match wins across roots", () => {
    const forest = new TrajectoryForest();
    const r1 = commit(forest, null, [SYS, U1, A1]);
    const deep = commit(forest, r1, [T1, A2]);
    commit(forest, null, [SYS, U1, { role: "assistant", content: "other" }]);
    expect(forest.findAttachPoint([SYS, U1, A1, T1, A2, T2], same).node).toBe(deep);
  });

  test("searching never mutates the forest", () => {
    const { forest } = linear();
    const before = forest.nodes.map((node) => [node.id, node.children.length]);
    forest.findAttachPoint([SYS, U1, A1, T1, A2], same);
    expect(forest.nodes.map((node) => [node.id, node.children.length])).toEqual(before);
  });

  test("a chain as deep as the cap is searched without recursion", () => {
    const forest = new TrajectoryForest();
    let parent: TrajectoryNode | null = null;
    for (let i = 0; i < MAX_TREE_NODES; i += 1) parent = commit(forest, parent, [U1]);
    const point = forest.findAttachPoint(
      Array.from({ length: MAX_TREE_NODES }, () => U1),
      same,
    );
    expect(point.node).toBe(parent);
    expect(point.matchedMessages).toBe(MAX_TREE_NODES);
  });
});

describe("forest bookkeeping", () => {
  test("nodes keep full snapshots, paths and commit order; inputs are copied", () => {
    const { forest, n0, n1, n2 } = linear();
    expect(n2.tokenIds.slice(0, n1.tokenIds.length)).toEqual(n1.tokenIds);
    expect(n2.pathNodes()).toEqual([n0, n1, n2]);
    expect(n2.pathMessages()).toEqual([SYS, U1, A1, T1, A2, T2, A3]);
    expect(n2.depth).toBe(3);
    expect(n2.messageEnd).toBe(7);
    const ids = [...n0.tokenIds, 7];
    const node = forest.createNode(n0, {
      deltaMessages: [T1],
      tokenIds: ids,
      completionSpan: [1, 2],
      committedAt: 0,
      responseId: "x",
      record: stubRecord(9),
      finishReason: "stop",
    });
    ids.push(8);
    expect(node.tokenIds).toEqual([...n0.tokenIds, 7]);
    expect(node.seq).toBe(node.id);
    expect(forest.leaves()).toEqual([n2, node]);
  });

  test("an adopting commit keeps the arrays it is handed (the serving commit makes them for the node alone)", () => {
    const { forest, n0 } = linear();
    const delta = [T1, A2];
    const ids = [...n0.tokenIds, 7, 8];
    const init = {
      deltaMessages: delta,
      tokenIds: ids,
      completionSpan: [3, 5] as const,
      committedAt: 0,
      responseId: "x",
      record: stubRecord(9),
      finishReason: "stop",
    };
    const adopted = forest.createNode(n0, init, true);
    expect(adopted.tokenIds).toBe(ids);
    expect(adopted.deltaMessages).toBe(delta);
    const copied = forest.createNode(n0, init);
    expect(copied.tokenIds).not.toBe(ids);
    expect(copied.deltaMessages).not.toBe(delta);
    expect([copied.tokenIds, copied.deltaMessages, copied.messageEnd]).toEqual([adopted.tokenIds, adopted.deltaMessages, adopted.messageEnd]);
  });

  test("concurrent commits under one parent become siblings", () => {
    const { forest, n0 } = linear();
    const s1 = commit(forest, n0, [{ role: "user", content: "A" }, A2]);
    const s2 = commit(forest, n0, [{ role: "user", content: "B" }, A3]);
    expect(n0.children).toEqual([expect.anything(), s1, s2]);
    expect(s1.parent).toBe(n0);
    expect(s2.parent).toBe(n0);
  });

  test("truncation follows finish_reason length", () => {
    const forest = new TrajectoryForest();
    const cut = commit(forest, null, [U1, A1], { finishReason: "length" });
    expect(cut.truncated).toBe(true);
    expect(commit(forest, cut, [T1, A2]).truncated).toBe(false);
  });

  test("the node cap fails with a clear error and stores nothing", () => {
    const forest = new TrajectoryForest(2);
    const n0 = commit(forest, null, [U1, A1]);
    commit(forest, n0, [T1, A2]);
    expect(() => commit(forest, n0, [T1, A3])).toThrow(ForestCapacityError);
    expect(() => commit(forest, n0, [T1, A3])).toThrow(/^node cap reached \(2\): the session cannot branch or extend further/);
    expect(forest.nodes).toHaveLength(2);
    expect(n0.children).toHaveLength(1);
  });

  test("a parent from another forest is refused", () => {
    const a = linear();
    const b = new TrajectoryForest();
    expect(() => commit(b, a.n2, [T1])).toThrow(/does not belong/);
  });
});

describe("tree metadata", () => {
  test("nodes and leaves tables in commit order", () => {
    const { forest, n0 } = linear();
    commit(forest, n0, [T1, { role: "assistant", content: "retry" }], { finishReason: "length", committedAt: 1.5 });
    expect(buildTreeMetadata(forest)).toEqual({
      nodes: [
        { id: 0, parent: null, seq: 0, truncated: false, committed_at: 0, completion_span: [0, 1], num_tokens: 1, response_id: "resp-0" },
        { id: 1, parent: 0, seq: 1, truncated: false, committed_at: 1, completion_span: [1, 2], num_tokens: 2, response_id: "resp-1" },
        { id: 2, parent: 1, seq: 2, truncated: false, committed_at: 2, completion_span: [2, 3], num_tokens: 3, response_id: "resp-2" },
        { id: 3, parent: 0, seq: 3, truncated: true, committed_at: 1.5, completion_span: [1, 2], num_tokens: 2, response_id: "resp-3" },
      ],
      leaves: [
        { node_id: 2, path_node_ids: [0, 1, 2] },
        { node_id: 3, path_node_ids: [0, 3] },
      ],
    });
  });
});
