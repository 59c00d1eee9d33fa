// Assembling the leaf paths of one tree through a shared PathPrefixMemo gives, leaf by leaf, exactly what assembling
// each path alone gives: same samples bit for bit (trims, early stops, replay tensors), same errors, no shared objects.
import fc from "fast-check";
import { assembleTrajectorySample, PathPrefixMemo, type SessionRecord } from "../../src/server";
import { loadTokenizer } from "../../src/tokenizer";
import { Sample } from "../../src/wire/sample";

let decode: (ids: readonly number[]) => string;
beforeAll(async () => {
  const tokenizer = await loadTokenizer();
  decode = (ids) => tokenizer.decode(ids);
});

const ROUTING = { numLayers: 1, additionR3: false };

interface TreeNode {
  record: SessionRecord;
  snapshot: number[];
  parent: number | null;
}

function record(prompt: number[], output: number[], finish: string, t: number, experts: boolean): SessionRecord {
  const meta: Record<string, unknown> = {
    output_token_logprobs: output.map((id, i) => [-i / 8, id]),
    completion_tokens: output.length,
    prompt_tokens: prompt.length,
    weight_version: `w${t}`,
  };
  if (experts) {
    // One layer, top-1: one expert id per row of len(tokens) - 1 rows (ROUTING below).
    const rows = Int32Array.from({ length: prompt.length + output.length - 1 }, (_, i) => i * 7 + t);
    meta.routed_experts = Buffer.from(rows.buffer).toString("base64");
  }
  return {
    timestamp: 1000 + t,
    request_timestamp: 999 + t,
    method: "POST",
    path: "/v1/chat/completions",
    request: { input_ids: prompt },
    response: { choices: [{ finish_reason: finish, message: { role: "assistant", content: "" }, meta_info: meta }] },
    status_code: 200,
  };
}

/** How a generated child is attached: parent index, how many of the parent's output tokens its prompt re-renders, finish. */
interface ChildPlan {
  parentPick: number;
  rerendered: number;
  finish: "stop" | "length" | "tool_calls";
  outputLength: number;
}

function buildTree(rootOutput: number, plans: ChildPlan[]): TreeNode[] {
  const ids = (n: number, base: number) => Array.from({ length: n }, (_, i) => 1000 + ((base * 37 + i * 11) % 5000));
  const rootPrompt = ids(6, 1);
  const rootOut = ids(rootOutput, 2);
  const nodes: TreeNode[] = [{ record: record(rootPrompt, rootOut, "stop", 0, false), snapshot: [...rootPrompt, ...rootOut], parent: null }];
  plans.forEach((plan, k) => {
    const parent = plan.parentPick % nodes.length;
    const base = nodes[parent].snapshot;
    // The child's prompt re-renders the parent's last `rerendered` output tokens differently (a trim for the parent turn).
    const keep = Math.max(base.length - plan.rerendered, 1);
    const prompt = [...base.slice(0, keep), ...ids(plan.rerendered, 50 + k).map((id) => id + 7), 198, ...ids(3, 90 + k)];
    const output = ids(plan.outputLength, 200 + k);
    nodes.push({ record: record(prompt, output, plan.finish, k + 1, k % 3 === 2), snapshot: [...prompt, ...output], parent });
  });
  return nodes;
}

function leafPaths(nodes: TreeNode[]): number[][] {
  const hasChild = new Set(nodes.flatMap((node) => (node.parent === null ? [] : [node.parent])));
  return nodes.flatMap((_, id) => {
    if (hasChild.has(id)) return [];
    const path: number[] = [];
    for (let at: number | null = id; at !== null; at = nodes[at].parent) path.unshift(at);
    return [path];
  });
}

type Outcome = { sample: Sample | null } | { error: string };

function assembleLeaves(nodes: TreeNode[], maxTrimTokens: number, memo?: PathPrefixMemo): Outcome[] {
  return leafPaths(nodes).map((path) => {
    const leaf = nodes[path[path.length - 1]];
    try {
      return {
        sample: assembleTrajectorySample(
          path.map((id) => nodes[id].record),
          leaf.snapshot,
          { decode, maxTrimTokens, maxSeqLen: null, prefixMemo: memo, extraMetadata: { leaf: path }, replay: ROUTING },
        ).sample,
      };
    } catch (error) {
      return { error: String(error) };
    }
  });
}

const plan = fc.record({
  parentPick: fc.nat(20),
  rerendered: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 2 }) }),
  finish: fc.oneof(
    { weight: 5, arbitrary: fc.constant<"stop">("stop") },
    { weight: 1, arbitrary: fc.constantFrom<"length" | "tool_calls">("length", "tool_calls") },
  ),
  outputLength: fc.integer({ min: 1, max: 5 }),
});

test("each leaf assembles through the shared memo exactly as it does alone, errors included", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 4 }), fc.array(plan, { maxLength: 9 }), fc.nat(2), (rootOutput, plans, maxTrimTokens) => {
      const nodes = buildTree(rootOutput, plans);
      const alone = assembleLeaves(nodes, maxTrimTokens);
      const memo = new PathPrefixMemo();
      const shared = assembleLeaves(nodes, maxTrimTokens, memo);
      expect(shared.length).toBe(alone.length);
      shared.forEach((outcome, i) => {
        if ("error" in alone[i]) expect(outcome).toEqual(alone[i]);
        else expect((outcome as { sample: Sample }).sample).toBeBitwiseEqual((alone[i] as { sample: Sample }).sample);
      });
      // No two leaves hand out the same sample, token array or metadata object.
      const samples = shared.flatMap((outcome) => ("sample" in outcome && outcome.sample ? [outcome.sample] : []));
      for (const field of ["tokens", "metadata", "loss_mask"] as const) {
        expect(new Set(samples.map((sample) => sample[field])).size).toBe(samples.length);
      }
      expect(new Set(samples).size).toBe(samples.length);
    }),
    { numRuns: 400, seed: 7 },
  );
});

test("a branch point shares its merged prefix: later leaves merge only their own turns", () => {
  // root -> a -> b, and a -> c: leaf c resumes from the memoized prefix [root, a].
  const nodes = buildTree(3, [
    { parentPick: 0, rerendered: 0, finish: "stop", outputLength: 3 },
    { parentPick: 1, rerendered: 0, finish: "stop", outputLength: 2 },
    { parentPick: 1, rerendered: 0, finish: "stop", outputLength: 4 },
  ]);
  const memo = new PathPrefixMemo();
  const paths = leafPaths(nodes);
  expect(paths).toEqual([
    [0, 1, 2],
    [0, 1, 3],
  ]);
  assembleLeaves(nodes, 0, memo);
  expect([...memo.prefixes.keys()]).toEqual([nodes[0].record, nodes[1].record]);
  // An early stop at a shared turn hands each leaf its own copy of the held accumulator.
  const stopped = buildTree(2, [
    { parentPick: 0, rerendered: 0, finish: "length", outputLength: 2 },
    { parentPick: 1, rerendered: 0, finish: "stop", outputLength: 1 },
    { parentPick: 1, rerendered: 0, finish: "stop", outputLength: 1 },
  ]);
  const [first, second] = assembleLeaves(stopped, 0, new PathPrefixMemo()) as { sample: Sample }[];
  expect(first.sample.status).toBe("truncated");
  expect(second.sample).not.toBe(first.sample);
  expect(second.sample.tokens).not.toBe(first.sample.tokens);
  expect(second.sample.tokens).toEqual(first.sample.tokens);
});
