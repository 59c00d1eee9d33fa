// Pure tests of the v2 hooks: dropRetries, defaultPostprocess, and the loader/runner contract.
// Includes a fast-check property: every kept completion trains in exactly one sample.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { defaultPostprocess } from "../../../src/server/v2/default-postprocess";
import { dropRetries } from "../../../src/server/v2/drop-retries";
import type { TrajectoryNode } from "../../../src/server/v2/forest";
import { loadSampleHook, loadSampleHooks, runSampleHooks } from "../../../src/server/v2/hooks";
import { SessionHttpError } from "../../../src/server/types";
import type { SamplePicker } from "../../../src/server/v2/hook-types";
import type { Sample } from "../../../src/wire/sample";
import { keepAll, reverseAll } from "./support/hook-fixtures";
import { Grower, rawLeafSample, recordingLogger, sessionMetadataOf } from "./support/forest-builders";

const FIXTURES = "__tests__/server/v2/support/hook-fixtures.ts";

function leafIds(samples: { metadata: Record<string, unknown> }[]): number[] {
  return samples.map((s) => (s.metadata.leaf as { node_id: number }).node_id);
}

function run(
  grower: Grower,
  options: { picker?: string | typeof keepAll; agent?: Record<string, never> | { [k: string]: import("../../../src/wire/sample").JsonValue } } = {},
) {
  const logger = recordingLogger();
  const material = grower.forest.leaves().map(rawLeafSample);
  const hooks = loadSampleHooks({ samplePicker: options.picker });
  const out = runSampleHooks(material, sessionMetadataOf(grower.forest, options.agent), hooks, { logger });
  return { out, logger, material };
}

describe("dropRetries", () => {
  test("a superseded retry leaf is dropped; the retry survives", () => {
    const g = new Grower();
    const root = g.grow(null, { completion: 2 });
    g.grow(root);
    const retry = g.grow(root);
    const { out, logger } = run(g);
    expect(leafIds(out)).toEqual([retry.id]);
    expect(logger.messages).toEqual([]);
  });

  test("a deeper abandoned branch survives; ordering is path length then id, descending", () => {
    const g = new Grower();
    const root = g.grow(null);
    const deep = g.grow(g.grow(root));
    const late = g.grow(root);
    const r2 = g.grow(null, { completion: 5 });
    const r3 = g.grow(null, { completion: 4 });
    const { out } = run(g);
    // The abandoned line root -> mid -> deep is superseded at mid, not at its leaf: deep has no later sibling.
    expect(leafIds(out)).toEqual([deep.id, late.id, r3.id, r2.id]);
  });

  test("warns when the dropped leaf is longer than every later sibling's deepest leaf", () => {
    const g = new Grower();
    const root = g.grow(null);
    g.grow(root, { completion: 5 });
    const retry = g.grow(root, { completion: 1 });
    const { out, logger } = run(g);
    expect(leafIds(out)).toEqual([retry.id]);
    expect(logger.messages).toHaveLength(1);
    expect(logger.messages[0]).toMatch(/longer than every later sibling's deepest leaf \(8 > 4 tokens\)/);
  });

  test("warns on a later sibling with an earlier wall clock and still decides by commit order", () => {
    const g = new Grower();
    const root = g.grow(null);
    g.grow(root, { committedAt: 10 });
    const retry = g.grow(root, { committedAt: 5 });
    const { out, logger } = run(g);
    expect(leafIds(out)).toEqual([retry.id]);
    expect(logger.messages).toHaveLength(1);
    expect(logger.messages[0]).toMatch(/earlier wall clock; commit order decides/);
  });

  test("chained retries leave a single survivor", () => {
    const g = new Grower();
    const root = g.grow(null, { env: 2, completion: 2 });
    for (let i = 0; i < 3; i += 1) g.grow(root, { completion: 2 });
    const survivor = g.grow(root, { completion: 2 });
    expect(leafIds(run(g).out)).toEqual([survivor.id]);
  });
});

describe("defaultPostprocess", () => {
  test("the earliest kept leaf owns a shared completion; later leaves mask it", () => {
    const g = new Grower();
    const root = g.grow(null, { env: 3, completion: 2 });
    const early = g.grow(g.grow(root), { env: 1, completion: 1 });
    const late = g.grow(root);
    const { out } = run(g, { agent: { reward: 1 } });
    const [a, b] = out;
    expect(leafIds(out)).toEqual([early.id, late.id]);
    expect(a.loss_mask?.slice(0, 2)).toEqual([1, 1]);
    expect(b.loss_mask?.slice(0, 2)).toEqual([0, 0]);
    expect(b.loss_mask?.at(-1)).toBe(1);
    expect(out.map((s) => s.reward)).toEqual([1, 1]);
    expect(out.map((s) => s.metadata.reward)).toEqual([1, 1]);
  });

  test("a keep-all picker makes the abandoned (earlier) leaf the owner, whatever the order", () => {
    for (const picker of [keepAll, reverseAll]) {
      const g = new Grower();
      const root = g.grow(null, { env: 3, completion: 2 });
      const abandoned = g.grow(root);
      const retry = g.grow(root);
      const { out } = run(g, { picker });
      const byId = new Map(out.map((s) => [(s.metadata.leaf as { node_id: number }).node_id, s]));
      expect(byId.get(abandoned.id)?.loss_mask?.slice(0, 2)).toEqual([1, 1]);
      expect(byId.get(retry.id)?.loss_mask?.slice(0, 2)).toEqual([0, 0]);
      expect(leafIds(out)).toEqual(picker === keepAll ? [abandoned.id, retry.id] : [retry.id, abandoned.id]);
    }
  });

  test("agent metadata merges in but can neither set nor overwrite server-owned keys", () => {
    const g = new Grower();
    g.grow(null, { completion: 2 });
    const agent = { task: "t1", accumulated_token_ids: "plant", leaf: "plant", tito_session_mismatch: ["plant"] };
    const { out } = run(g, { agent });
    const [sample] = out;
    expect(sample.metadata.task).toBe("t1");
    expect(sample.metadata.accumulated_token_ids).toEqual(sample.tokens);
    expect(sample.metadata.leaf).toEqual({ node_id: 0, parent: null, path_node_ids: [0], response_id: "resp-0" });
    expect("tito_session_mismatch" in sample.metadata).toBe(false);
    expect(sample.reward).toBeNull();
  });

  // mirrors miles/rollout/session/v2/postprocessor_hub/default_postprocess.py: `if trajectory_reward is not None:
  // assign_reward(...)`, whatever its type (tests/fast/router/test_session_samples_op_v2.py covers the numeric case)
  test("any non-null reward is assigned as is (string, bool, list, zero); null and absent assign nothing", () => {
    for (const reward of ["high", true, false, [1, 0.5], 0, -0, { score: 1 }]) {
      const g = new Grower();
      g.grow(null);
      const { out } = run(g, { agent: { reward } });
      expect(out).toHaveLength(1);
      expect(Object.is(out[0].reward, reward) || JSON.stringify(out[0].reward) === JSON.stringify(reward)).toBe(true);
      expect(out[0].metadata.reward).toEqual(reward);
    }
    for (const agent of [{ reward: null }, {}] as Array<{ [k: string]: import("../../../src/wire/sample").JsonValue }>) {
      const g = new Grower();
      g.grow(null);
      expect(run(g, { agent }).out[0].reward).toBeNull();
    }
  });

  test("masks are clamped to a response window shortened by truncation", () => {
    const g = new Grower();
    const root = g.grow(null, { env: 2, completion: 3 });
    const a = g.grow(g.grow(root));
    const b = g.grow(root, { completion: 2 });
    const sa = rawLeafSample(a);
    const sb = rawLeafSample(b);
    sb.stripLastOutputTokens(4, () => "");
    // sb now ends inside root's completion span [2,5): 4 tokens, response window [2,4)
    const out = defaultPostprocess([sa, sb], sessionMetadataOf(g.forest), { logger: recordingLogger() });
    expect(out[1].loss_mask).toEqual([0, 0]);
    expect(out[0].loss_mask?.slice(0, 3)).toEqual([1, 1, 1]);
  });
});

describe("every kept completion trains exactly once (property)", () => {
  test("random forests", () => {
    const op = fc.record({
      kind: fc.constantFrom("root", "retry", "extend"),
      pick: fc.nat(),
      env: fc.integer({ min: 1, max: 3 }),
      completion: fc.integer({ min: 1, max: 4 }),
    });
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 25 }), fc.double({ min: 0, max: 1, noNaN: true }), (ops, reward) => {
        const g = new Grower();
        g.grow(null);
        for (const o of ops) {
          const leaves = g.forest.leaves();
          const leaf = leaves[o.pick % leaves.length];
          if (o.kind === "root") g.grow(null, o);
          else if (o.kind === "retry" && leaf.parent !== null) g.grow(leaf.parent, o);
          else g.grow(leaf, o);
        }
        const { out } = run(g, { agent: { reward } });
        // Oracle: keep leaves without a later sibling; sort by depth then id, descending.
        const kept = g.forest.leaves().filter((l) => l.parent === null || !l.parent.children.some((c) => c.id > l.id));
        kept.sort((a, b) => b.depth - a.depth || b.id - a.id);
        expect(leafIds(out)).toEqual(kept.map((l) => l.id));
        const owner = new Map<number, number>();
        for (const l of [...kept].sort((a, b) => a.id - b.id)) for (const n of l.pathNodes()) if (!owner.has(n.id)) owner.set(n.id, l.id);
        out.forEach((sample, i) => {
          const leaf: TrajectoryNode = kept[i];
          const start = sample.tokens.length - sample.response_length;
          const trained = new Set<number>();
          sample.loss_mask?.forEach((bit, p) => bit === 1 && trained.add(start + p));
          const expected = new Set<number>();
          for (const n of leaf.pathNodes()) if (owner.get(n.id) === leaf.id) for (let p = n.completionSpan[0]; p < n.completionSpan[1]; p += 1) expected.add(p);
          expect([...trained].sort((x, y) => x - y)).toEqual([...expected].sort((x, y) => x - y));
          expect(sample.reward).toBe(reward);
        });
      }),
      { numRuns: 150 },
    );
  });
});

describe("hook loading and running", () => {
  function retryShaped(): Grower {
    const g = new Grower();
    const root = g.grow(null, { env: 3, completion: 2 });
    g.grow(root);
    g.grow(root);
    return g;
  }

  test("string specs resolve relative to the working directory", () => {
    const hooks = loadSampleHooks({ samplePicker: `${FIXTURES}#keepAll`, samplePostprocessor: `./${FIXTURES}#identityPostprocess` });
    expect(hooks.picker.name).toBe(`${FIXTURES}#keepAll`);
    const g = retryShaped();
    const out = runSampleHooks(g.forest.leaves().map(rawLeafSample), sessionMetadataOf(g.forest), hooks, { logger: recordingLogger() });
    expect(leafIds(out)).toEqual([1, 2]);
    // identityPostprocess leaves the shared root completion trainable in both samples.
    expect(out.map((s) => s.loss_mask?.slice(0, 2))).toEqual([
      [1, 1],
      [1, 1],
    ]);
  });

  test("defaults are dropRetries and defaultPostprocess", () => {
    const hooks = loadSampleHooks({});
    expect(hooks.picker.fn).toBe(dropRetries);
    expect(hooks.postprocessor.fn).toBe(defaultPostprocess);
    expect([hooks.picker.name, hooks.postprocessor.name]).toEqual(["dropRetries", "defaultPostprocess"]);
  });

  test.each([
    [`${FIXTURES}#asyncPicker`, /is async/],
    [`${FIXTURES}#missing`, /has no export "missing"/],
    // Inherited members are not exports: `#constructor` would otherwise load Object, `#toString` a builtin.
    [`${FIXTURES}#constructor`, /has no export "constructor"/],
    [`${FIXTURES}#toString`, /has no export "toString"/],
    [`${FIXTURES}#__proto__`, /has no export "__proto__"/],
    [`${FIXTURES}#notAFunction`, /is not a function \(found number\)/],
    ["__tests__/server/v2/support/nowhere.ts#x", /cannot find module/],
    [`${FIXTURES}#`, /malformed/],
  ])("%s is refused at load time", (spec, message) => {
    expect(() => loadSampleHook(spec, "picker")).toThrow(message);
  });

  test("an async function is refused at load time", () => {
    const asyncFn = async (samples: Sample[]): Promise<Sample[]> => samples;
    expect(() => loadSampleHooks({ samplePicker: asyncFn as unknown as SamplePicker })).toThrow(/picker hook "asyncFn" is async/);
  });

  test.each([
    ["exploding", /policy bug in the picker/],
    ["copying", /subset of its input samples/],
    ["duplicateFirst", /without duplicates/],
  ])("picker %s -> 422 naming both hooks", (name, cause) => {
    const hooks = loadSampleHooks({ samplePicker: `${FIXTURES}#${name}` });
    const g = retryShaped();
    let error: unknown;
    try {
      runSampleHooks(g.forest.leaves().map(rawLeafSample), sessionMetadataOf(g.forest), hooks, { logger: recordingLogger() });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SessionHttpError);
    expect((error as SessionHttpError).status).toBe(422);
    expect((error as Error).message).toContain(`picker=${FIXTURES}#${name}`);
    expect((error as Error).message).toContain("postprocessor=defaultPostprocess");
    expect((error as Error).message).toMatch(cause);
  });

  test("a post-processor returning a Promise -> 422", () => {
    const hooks = loadSampleHooks({ samplePostprocessor: `${FIXTURES}#promisePostprocessor` });
    const g = retryShaped();
    expect(() => runSampleHooks(g.forest.leaves().map(rawLeafSample), sessionMetadataOf(g.forest), hooks, { logger: recordingLogger() })).toThrow(
      /postprocessor=.*#promisePostprocessor\): the postprocessor returned a Promise/,
    );
  });
});
