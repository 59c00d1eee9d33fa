// v2 tree serving over loopback HTTP against the mock backend and the real Qwen3 tokenizer.
// Positioning, siblings, retries, new roots, refusals (400/409/422) and what GET shows after each.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { echoScript } from "../../../src/backend";
import type { ProcessFunction } from "../../../src/backend/types";
import { startSessionServer, type RunningSessionServer } from "../../../src/server/session-server";
import { MAX_TREE_NODES } from "../../../src/server/v2";
import type { ChatMessage } from "../../../src/tokenizer/types";
import { chat, collect, createSession, getSession, sampleLeafIds, startV2Harness, turn, type V2Harness } from "./support/harness";

const U1: ChatMessage = { role: "user", content: "What is 1+2?" };
const T1: ChatMessage = { role: "tool", content: "tool-result-1", tool_call_id: "t0" };
const T1_DIFF: ChatMessage = { role: "tool", content: "tool-result-DIFFERENT", tool_call_id: "t0" };
const T2: ChatMessage = { role: "tool", content: "tool-result-2", tool_call_id: "t1" };

let h: V2Harness;
let keepAll: RunningSessionServer;
let url: string;

beforeAll(async () => {
  h = await startV2Harness();
  url = h.server.url;
  keepAll = await startSessionServer({
    version: "v2",
    backendUrl: h.backend.url,
    samplePicker: "__tests__/server/v2/support/hook-fixtures.ts#keepAll",
    logger: { warn: () => undefined },
  });
});

afterAll(async () => {
  await keepAll.close();
  await h.close();
});

/** Session with stored history [U1, a1, T1, a2] (two generations). */
async function twoTurns(base = url): Promise<{ id: string; a1: ChatMessage; a2: ChatMessage }> {
  const id = await createSession(base);
  const a1 = await turn(base, id, [U1]);
  const a2 = await turn(base, id, [U1, a1, T1]);
  return { id, a1, a2 };
}

const parents = (tree: { nodes: Array<{ id: number; parent: number | null }> }): Array<[number, number | null]> =>
  tree.nodes.map((node) => [node.id, node.parent]);

describe("positioning", () => {
  test("a pure retry regenerates as a sibling; the view follows the new node", async () => {
    const { id, a1 } = await twoTurns();
    const retry = await chat(url, id, [U1, a1, T1]);
    expect(retry.status).toBe(200);
    const after = await getSession(url, id);
    expect(parents(after.metadata.tree)).toEqual([
      [0, null],
      [1, 0],
      [2, 0],
    ]);
    expect(after.metadata.tree.leaves).toEqual([
      { node_id: 1, path_node_ids: [0, 1] },
      { node_id: 2, path_node_ids: [0, 2] },
    ]);
    expect(after.records).toHaveLength(2);
    expect((after.records[1].response as { id: string }).id).toBe(retry.json.id);
    expect(after.metadata.tree.nodes[2].response_id).toBe(retry.json.id);
  });

  test("a divergent retry branches at the last fully matched node and continues there", async () => {
    const { id, a1 } = await twoTurns();
    const branch = await turn(url, id, [U1, a1, T1_DIFF]);
    let view = await getSession(url, id);
    expect(parents(view.metadata.tree)).toEqual([
      [0, null],
      [1, 0],
      [2, 0],
    ]);
    expect(view.records).toHaveLength(2);
    expect((view.records[1].request.messages as ChatMessage[]).at(-1)).toEqual(T1_DIFF);
    // The next turn extends the new branch, not the abandoned one.
    await turn(url, id, [U1, a1, T1_DIFF, branch, T2]);
    view = await getSession(url, id);
    expect(parents(view.metadata.tree)).toEqual([
      [0, null],
      [1, 0],
      [2, 0],
      [3, 2],
    ]);
    // The input_ids of the last turn start with the snapshot of node 2.
    const snapshot2 = view.metadata.tree.nodes[2].num_tokens;
    const lastInput = view.records[2].request.input_ids as number[];
    expect(view.metadata.accumulated_token_ids.slice(0, snapshot2)).toEqual(lastInput.slice(0, snapshot2));
  });

  test("a deep divergence keeps both lines and both become samples", async () => {
    const { id, a1, a2 } = await twoTurns();
    await turn(url, id, [U1, a1, T1, a2, T2]);
    expect((await getSession(url, id)).records).toHaveLength(3);
    await turn(url, id, [U1, a1, T1_DIFF]);
    const view = await getSession(url, id);
    expect(view.records).toHaveLength(2);
    expect(view.metadata.tree.nodes).toHaveLength(4);
    expect(view.metadata.tree.leaves.map((leaf) => leaf.path_node_ids)).toEqual([
      [0, 1, 2],
      [0, 3],
    ]);
    const reply = await collect(url, id);
    expect(sampleLeafIds(reply)).toEqual([2, 3]);
    for (const sample of reply.samples) {
      const lifecycle = sample.metadata.lifecycle as Array<{ req_ts: number | null }>;
      expect(lifecycle.length).toBeGreaterThan(1);
      expect(lifecycle.every((segment) => typeof segment.req_ts === "number")).toBe(true);
    }
  });

  test("a root divergence opens a second root; two roots give two samples", async () => {
    const id = await createSession(url);
    await turn(url, id, [U1]);
    await turn(url, id, [{ role: "user", content: "a different opening" }]);
    const view = await getSession(url, id);
    expect(view.records).toHaveLength(1);
    expect(parents(view.metadata.tree)).toEqual([
      [0, null],
      [1, null],
    ]);
    const reply = await collect(url, id);
    expect(sampleLeafIds(reply).sort()).toEqual([0, 1]);
    expect(reply.samples.map((s) => s.tokens)).toEqual(expect.arrayContaining([view.metadata.accumulated_token_ids]));
  });

  test("a failed first turn records nothing; a different first request is then accepted", async () => {
    const id = await createSession(url);
    h.useScript(() => {
      throw new Error("context too long");
    });
    let failed;
    try {
      failed = await chat(url, id, [U1]);
    } finally {
      h.useScript(echoScript);
    }
    expect(failed.status).toBe(500);
    let view = await getSession(url, id);
    expect(view.records).toEqual([]);
    expect(view.metadata.tree).toEqual({ nodes: [], leaves: [] });
    const other: ChatMessage = { role: "user", content: "a completely different opening" };
    expect((await chat(url, id, [other])).status).toBe(200);
    view = await getSession(url, id);
    expect(view.records).toHaveLength(1);
    expect(view.records[0].request.messages).toEqual([other]);
  });

  test("re-sending exactly the stored history is a degenerate extension (a child of the leaf)", async () => {
    const id = await createSession(url);
    const a1 = await turn(url, id, [U1]);
    expect((await chat(url, id, [U1, a1])).status).toBe(200);
    const view = await getSession(url, id);
    expect(view.records).toHaveLength(2);
    expect(parents(view.metadata.tree)).toEqual([
      [0, null],
      [1, 0],
    ]);
  });

  test("concurrent requests from the same parent commit siblings, both collected", async () => {
    const id = await createSession(keepAll.url);
    const a1 = await turn(keepAll.url, id, [{ role: "user", content: "start" }]);
    const messages = [{ role: "user", content: "start" }, a1, { role: "user", content: "branch" }];
    let arrivals = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const barrier: ProcessFunction = async (prompt, body) => {
      arrivals += 1;
      if (arrivals === 2) release();
      await Promise.race([gate, new Promise((_, reject) => setTimeout(() => reject(new Error("second request never arrived")), 10_000).unref())]);
      return echoScript(prompt, body);
    };
    h.useScript(barrier);
    let replies;
    try {
      replies = await Promise.all([chat(keepAll.url, id, messages), chat(keepAll.url, id, messages)]);
    } finally {
      h.useScript(echoScript);
    }
    expect(replies.map((r) => r.status)).toEqual([200, 200]);
    const ids = new Set(replies.map((r) => r.json.id as string));
    expect(ids.size).toBe(2);
    const tree = (await getSession(keepAll.url, id)).metadata.tree;
    expect(parents(tree)).toEqual([
      [0, null],
      [1, 0],
      [2, 0],
    ]);
    expect(new Set(tree.nodes.slice(1).map((n) => n.response_id))).toEqual(ids);
    const reply = await collect(keepAll.url, id);
    expect(new Set(reply.samples.map((s) => (s.metadata.leaf as { response_id: string }).response_id))).toEqual(ids);
  });
});

describe("refusals", () => {
  // mirrors tests/fast/router/test_sessions_v2.py::test_disallowed_append_role_400_with_rollback_side_effect
  // mirrors miles PR #3258: GET and the samples op follow the last committed node, so a refused request moves nothing
  test("a disallowed appended role is 400 with Python's text; the tree and the view are kept (miles PR #3258)", async () => {
    const { id, a1 } = await twoTurns();
    const before = await getSession(url, id);
    const samplesBefore = await collect(url, id);
    const logged = h.backend.requestLog.length;
    const reply = await chat(url, id, [U1, a1, { role: "developer", content: "another" }]);
    expect(reply.status).toBe(400);
    expect(reply.text).toBe(
      JSON.stringify({
        error:
          "appended message role='developer' not allowed (allowed=['assistant', 'system', 'tool', 'user']); " +
          "the selected TITO fixed template does not support appending this role",
      }),
    );
    expect(h.backend.requestLog.length).toBe(logged);
    expect(before.records).toHaveLength(2);
    expect(await getSession(url, id)).toEqual(before);
    const samples = await collect(url, id);
    expect(samples.session_metadata.accumulated_token_ids).toEqual(before.metadata.accumulated_token_ids);
    expect(samples.session_metadata).toEqual(samplesBefore.session_metadata);
    expect(sampleLeafIds(samples)).toEqual([1]);
  });

  test("extending a truncated generation is 409; branching before the cut still works", async () => {
    const id = await createSession(url);
    h.useScript(async (prompt, body) => ({ ...(await echoScript(prompt, body)), finish_reason: "length" }));
    let first;
    try {
      first = await chat(url, id, [U1]);
    } finally {
      h.useScript(echoScript);
    }
    expect(first.status).toBe(200);
    expect((await getSession(url, id)).metadata.tree.nodes[0].truncated).toBe(true);
    const extend = await chat(url, id, [U1, first.message, T1]);
    expect(extend.status).toBe(409);
    // mirrors tests/fast/router/test_sessions_v2.py::test_extending_truncated_generation_is_409 (Python's whole text)
    expect(extend.text).toBe(
      JSON.stringify({
        error:
          "truncated generation cannot be extended: the matched node ended with finish_reason='length' and truncation " +
          "closes that path for good; branch before the cut instead",
      }),
    );
    expect((await getSession(url, id)).metadata.tree.nodes).toHaveLength(1);
    expect((await chat(url, id, [{ role: "user", content: "fresh" }])).status).toBe(200);
    expect(parents((await getSession(url, id)).metadata.tree)).toEqual([
      [0, null],
      [1, null],
    ]);
  });

  test(`the ${MAX_TREE_NODES + 1}th node is refused with a clear message and nothing is lost`, async () => {
    const id = await createSession(url);
    const opening: ChatMessage[] = [{ role: "user", content: "n" }];
    // Each identical opening only partly matches the stored root delta, so every call opens a new root.
    for (let done = 0; done < MAX_TREE_NODES; done += 32) {
      const batch = await Promise.all(Array.from({ length: Math.min(32, MAX_TREE_NODES - done) }, () => chat(url, id, opening)));
      expect(batch.every((r) => r.status === 200)).toBe(true);
    }
    const before = await getSession(url, id);
    expect(before.metadata.tree.nodes).toHaveLength(MAX_TREE_NODES);
    const logged = h.backend.requestLog.length;
    const refused = await chat(url, id, opening);
    expect(refused.status).toBe(422);
    // Python's text (tree_trajectory.py); the status and the moment (before the upstream call) are a listed deviation.
    expect(refused.json.error).toBe(
      "node cap reached (1024): the session cannot branch or extend further \u2014 this almost always means the harness is not replaying history verbatim",
    );
    expect(h.backend.requestLog.length).toBe(logged);
    const after = await getSession(url, id);
    expect(after.metadata.tree).toEqual(before.metadata.tree);
  });
});
