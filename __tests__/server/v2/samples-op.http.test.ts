// The v2 samples op over loopback HTTP: per-leaf assembly, default and custom hooks, agent metadata, empty replies.
// Trees are grown through real chat turns (mock backend, real Qwen3 tokenizer) and decoded with the v2 codec.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { startSessionServer, type RunningSessionServer } from "../../../src/server/session-server";
import type { ChatMessage } from "../../../src/tokenizer/types";
import type { Sample } from "../../../src/wire/sample";
import type { SamplesReply } from "../../../src/wire/samples-codec";
import { collect, createSession, getSession, postSamples, sampleLeafIds, startV2Harness, turn, type V2Harness } from "./support/harness";

/** The seed fixture's server kwargs: servers alone default to {} (miles' --apply-chat-template-kwargs). */
const SEED_KWARGS = { enable_thinking: false };

const FIXTURES = "__tests__/server/v2/support/hook-fixtures.ts";
const U1: ChatMessage = { role: "user", content: "What is 1+2?" };
const T1: ChatMessage = { role: "tool", content: "tool-result-1", tool_call_id: "t0" };
const T1_DIFF: ChatMessage = { role: "tool", content: "tool-result-DIFFERENT", tool_call_id: "t0" };
const T2: ChatMessage = { role: "tool", content: "tool-result-2", tool_call_id: "t1" };

let h: V2Harness;
const servers: Record<string, RunningSessionServer> = {};

beforeAll(async () => {
  h = await startV2Harness();
  for (const name of ["keepAll", "reverseAll", "exploding", "copying", "duplicateFirst"]) {
    servers[name] = await startSessionServer({
      chatTemplateKwargs: SEED_KWARGS,
      version: "v2",
      backendUrl: h.backend.url,
      samplePicker: `${FIXTURES}#${name}`,
      logger: { warn: () => undefined },
    });
  }
});

afterAll(async () => {
  for (const server of Object.values(servers)) await server.close();
  await h.close();
});

/** root(U1) -> [T1] attempt, then [T1_DIFF] retry: leaves 1 (abandoned) and 2 (retry) under node 0. */
async function retryShaped(base: string): Promise<string> {
  const id = await createSession(base);
  const a1 = await turn(base, id, [U1]);
  await turn(base, id, [U1, a1, T1]);
  await turn(base, id, [U1, a1, T1_DIFF]);
  return id;
}

/** root -> mid -> deep (abandoned line), then root -> late: leaves 2 (deep) and 3 (late). */
async function deepAbandoned(base: string): Promise<string> {
  const id = await createSession(base);
  const a1 = await turn(base, id, [U1]);
  const a2 = await turn(base, id, [U1, a1, T1]);
  await turn(base, id, [U1, a1, T1, a2, T2]);
  await turn(base, id, [U1, a1, T1_DIFF]);
  return id;
}

/** Node spans of a session, by id. */
async function spans(base: string, id: string): Promise<Map<number, [number, number]>> {
  const tree = (await getSession(base, id)).metadata.tree;
  return new Map(tree.nodes.map((n) => [n.id, n.completion_span]));
}

/** The loss-mask bits of `sample` over a node's completion span. */
function maskOver(sample: Sample, span: [number, number]): number[] {
  const start = sample.tokens.length - sample.response_length;
  return (sample.loss_mask ?? []).slice(span[0] - start, span[1] - start);
}

function byLeaf(reply: SamplesReply): Map<number, Sample> {
  return new Map(reply.samples.map((s) => [(s.metadata.leaf as { node_id: number }).node_id, s]));
}

describe("default hooks", () => {
  test("a superseded retry leaf is trimmed; the retry is the only sample", async () => {
    const id = await retryShaped(h.server.url);
    const reply = await collect(h.server.url, id);
    expect(sampleLeafIds(reply)).toEqual([2]);
    const [sample] = reply.samples;
    const view = await getSession(h.server.url, id);
    expect(sample.tokens).toEqual(view.metadata.accumulated_token_ids);
    expect(sample.metadata.accumulated_token_ids).toEqual(sample.tokens);
    expect(sample.metadata.leaf).toEqual({ node_id: 2, parent: 0, path_node_ids: [0, 2], response_id: view.metadata.tree.nodes[2].response_id });
    expect(sample.metadata.tito_session_mismatch).toEqual([]);
    expect(sample.loss_mask?.every((bit) => bit === 0 || bit === 1) && sample.loss_mask.length).toBe(sample.response_length);
  });

  test("a deeper abandoned branch survives; the later leaf masks the shared root completion", async () => {
    const id = await deepAbandoned(h.server.url);
    const reply = await collect(h.server.url, id, { max_seq_len: null, metadata: { reward: 1 } });
    expect(sampleLeafIds(reply)).toEqual([2, 3]);
    const span = await spans(h.server.url, id);
    const { 0: deep, 1: late } = reply.samples;
    const rootSpan = span.get(0) as [number, number];
    expect(maskOver(deep, rootSpan).every((bit) => bit === 1)).toBe(true);
    expect(maskOver(late, rootSpan).every((bit) => bit === 0)).toBe(true);
    expect(maskOver(late, rootSpan).length).toBe(rootSpan[1] - rootSpan[0]);
    expect(maskOver(late, span.get(3) as [number, number]).every((bit) => bit === 1)).toBe(true);
    expect(reply.samples.map((s) => s.reward)).toEqual([1, 1]);
  });

  test("samples are ordered by path length, then leaf id, both descending", async () => {
    const base = h.server.url;
    const id = await createSession(base);
    const a = await turn(base, id, [{ role: "user", content: "A" }]);
    await turn(base, id, [{ role: "user", content: "A" }, a, { role: "user", content: "A2" }]);
    await turn(base, id, [{ role: "user", content: "B" }]);
    await turn(base, id, [{ role: "user", content: "C" }]);
    expect(sampleLeafIds(await collect(base, id))).toEqual([1, 3, 2]);
  });

  test("the samples reply's session metadata is the GET metadata plus the agent's", async () => {
    const id = await deepAbandoned(h.server.url);
    const agent = { task: "t1", nested: { k: [1, 2] } };
    const reply = await collect(h.server.url, id, { max_seq_len: null, metadata: agent });
    const view = await getSession(h.server.url, id);
    expect(reply.session_metadata).toEqual({ ...view.metadata, agent });
  });

  test("the agent can neither set nor overwrite server-owned keys; other keys and the reward reach every sample", async () => {
    const id = await deepAbandoned(h.server.url);
    const agent = { accumulated_token_ids: "plant", leaf: "plant", tito_session_mismatch: ["plant"], task: "weather", reward: 0.25 };
    const reply = await collect(h.server.url, id, { max_seq_len: null, metadata: agent });
    expect(reply.samples).toHaveLength(2);
    for (const sample of reply.samples) {
      expect(sample.metadata.accumulated_token_ids).toEqual(sample.tokens);
      expect((sample.metadata.leaf as { node_id: number }).node_id).toEqual(expect.any(Number));
      expect(sample.metadata.tito_session_mismatch).toEqual([]);
      expect(sample.metadata.task).toBe("weather");
      expect(sample.metadata.reward).toBe(0.25);
      expect(sample.reward).toBe(0.25);
    }
  });

  // mirrors miles/rollout/session/v2/postprocessor_hub/default_postprocess.py (any non-null reward is assigned)
  test("a non-numeric agent reward travels to every sample unchanged", async () => {
    const id = await deepAbandoned(h.server.url);
    for (const reward of ["pass", [1, 0], false]) {
      const reply = await collect(h.server.url, id, { max_seq_len: null, metadata: { reward } });
      expect(reply.samples.map((sample) => sample.reward)).toEqual([reward, reward]);
    }
  });
});

describe("custom hooks", () => {
  test("a keep-all picker keeps the abandoned leaf, which (earliest) owns the shared prefix", async () => {
    const base = servers.keepAll.url;
    const id = await retryShaped(base);
    const reply = await collect(base, id);
    expect(sampleLeafIds(reply)).toEqual([1, 2]);
    const rootSpan = (await spans(base, id)).get(0) as [number, number];
    const [abandoned, retry] = reply.samples;
    expect(maskOver(abandoned, rootSpan).every((bit) => bit === 1)).toBe(true);
    expect(maskOver(retry, rootSpan).every((bit) => bit === 0)).toBe(true);
  });

  test("reordering keeps ownership by node id", async () => {
    const base = servers.reverseAll.url;
    const id = await retryShaped(base);
    const reply = await collect(base, id);
    expect(sampleLeafIds(reply)).toEqual([2, 1]);
    const rootSpan = (await spans(base, id)).get(0) as [number, number];
    const samples = byLeaf(reply);
    expect(maskOver(samples.get(1) as Sample, rootSpan).every((bit) => bit === 1)).toBe(true);
    expect(maskOver(samples.get(2) as Sample, rootSpan).every((bit) => bit === 0)).toBe(true);
  });

  test.each([
    ["exploding", "policy bug in the picker"],
    ["copying", "subset of its input samples"],
    ["duplicateFirst", "without duplicates"],
  ])("picker %s -> 422 text/plain naming both hooks; the server keeps serving", async (name, cause) => {
    const base = servers[name].url;
    const id = await retryShaped(base);
    const reply = await postSamples(base, id);
    expect(reply.status).toBe(422);
    expect(reply.contentType).toMatch(/^text\/plain/);
    expect(reply.text).toContain(`picker=${FIXTURES}#${name}`);
    expect(reply.text).toContain("postprocessor=defaultPostprocess");
    expect(reply.text).toContain(cause);
    if (name !== "exploding") {
      // mirrors tests/fast/router/test_session_samples_op_v2.py::test_impure_picker_maps_to_422 and
      // ::test_duplicate_picker_maps_to_422: one cause text for both, Python's
      expect(reply.text).toBe(
        `session sample hook failed (picker=${FIXTURES}#${name}, postprocessor=defaultPostprocess): ` +
          "pick hook must return a subset of its input samples without duplicates (pure selection)",
      );
    }
    const view = await getSession(base, id);
    expect(view.metadata.tree.nodes).toHaveLength(3);
    const a1 = await turn(base, id, [U1]);
    expect(a1.role).toBe("assistant");
  });

  test.each([
    [{ samplePicker: `${FIXTURES}#asyncPicker` }, /picker hook ".*#asyncPicker" is async/],
    [{ samplePostprocessor: `${FIXTURES}#nowhere` }, /has no export "nowhere"/],
    [{ samplePicker: "./no/such/module#fn" }, /cannot find module/],
  ])("a bad hook is refused when the server starts (%o)", async (hooks, message) => {
    await expect(startSessionServer({ chatTemplateKwargs: SEED_KWARGS, version: "v2", backendUrl: h.backend.url, ...hooks })).rejects.toThrow(message);
  });
});

describe("empty replies", () => {
  test("a session without generations replies no_records", async () => {
    const id = await createSession(h.server.url);
    const reply = await collect(h.server.url, id, { max_seq_len: null, metadata: { a: 1 } });
    expect(reply.samples).toEqual([]);
    expect(reply.empty_reason).toBe("no_records");
    expect(reply.session_metadata.agent).toEqual({ a: 1 });
  });

  test("a leaf whose every turn is truncated away is skipped", async () => {
    const base = h.server.url;
    const id = await createSession(base);
    await turn(base, id, [{ role: "user", content: "short" }]);
    await turn(base, id, [{ role: "user", content: `long ${"opening ".repeat(40)}` }]);
    const tree = (await getSession(base, id)).metadata.tree;
    expect(tree.nodes[1].completion_span[0]).toBeGreaterThan(tree.nodes[0].num_tokens);
    const reply = await collect(base, id, { max_seq_len: tree.nodes[0].num_tokens });
    expect(sampleLeafIds(reply)).toEqual([0]);
    expect(reply.samples[0].status).toBe("completed");
  });

  test("leaves truncated away are skipped; when all are, all_truncated", async () => {
    const id = await deepAbandoned(h.server.url);
    const tree = (await getSession(h.server.url, id)).metadata.tree;
    const rootPrompt = tree.nodes[0].completion_span[0];
    const none = await collect(h.server.url, id, { max_seq_len: rootPrompt });
    expect(none.samples).toEqual([]);
    expect(none.empty_reason).toBe("all_truncated");
    // One output token of the deep leaf's last turn fits: that leaf is cut there (truncated).
    const budget = tree.nodes[2].completion_span[0] + 1;
    const some = await collect(h.server.url, id, { max_seq_len: budget });
    expect(some.empty_reason).toBeNull();
    expect(sampleLeafIds(some)).toEqual([2, 3]);
    const deep = byLeaf(some).get(2) as Sample;
    expect(deep.status).toBe("truncated");
    expect(deep.tokens).toEqual((await collect(h.server.url, id)).samples[0].tokens.slice(0, budget));
    const late = byLeaf(some).get(3) as Sample;
    expect(late.status).toBe(tree.nodes[3].num_tokens <= budget ? "completed" : "truncated");
    expect(late.tokens.length).toBe(Math.min(budget, tree.nodes[3].num_tokens));
  });
});
