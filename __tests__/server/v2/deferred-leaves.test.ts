// The samples op's fast path for the default picker: leaves dropRetries drops are checked but never written.
// Pins the reply bytes against the general path (a picker that is not the default one) on trees grown over HTTP.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import type { PolicyContext, TrajectoryPolicy } from "../../../src/server/policy";
import { SampleAssemblyError } from "../../../src/server/samples/assembly-error";
import type { SamplesResult, SamplesRequestBody } from "../../../src/server/types";
import { dropRetries, isSupersededLeaf } from "../../../src/server/v2/drop-retries";
import { buildLeafMaterial } from "../../../src/server/v2/leaf-material";
import { createV2Policy } from "../../../src/server/v2/policy";
import type { V2Plan, V2SessionState } from "../../../src/server/v2/serving";
import type { SamplePicker } from "../../../src/server/v2/hook-types";
import type { ChatMessage } from "../../../src/tokenizer/types";
import type { Sample } from "../../../src/wire/sample";
import { encodeSamplesChunks, WIRE_FIELDS_V2 } from "../../../src/wire/samples-codec";
import { Grower, rawLeafSample, recordingLogger, sessionMetadataOf } from "./support/forest-builders";
import { createSession, postSamples, startV2Harness, turn, type V2Harness } from "./support/harness";

/** dropRetries under another name: the same picks, but the policy cannot tell it is the default picker. */
const dropRetriesAlike: SamplePicker = (samples, sessionMetadata, context) => dropRetries(samples, sessionMetadata, context);

/** The default policy (fast path), and the one whose picker is not the default (every leaf written). */
const fastPolicy = createV2Policy();
const generalPolicy = createV2Policy({ samplePicker: dropRetriesAlike });

/** What the capturing policy saw at the last samples op of each session. */
const seen = new Map<V2SessionState, PolicyContext>();
const capturingPolicy: TrajectoryPolicy<V2SessionState, V2Plan> = {
  ...fastPolicy,
  collectSamples(state, body, ctx) {
    seen.set(state, ctx);
    return fastPolicy.collectSamples(state, body, ctx);
  },
};

let h: V2Harness;

beforeAll(async () => {
  h = await startV2Harness({ policy: capturingPolicy });
});

afterAll(async () => {
  await h.close();
});

/** The reply bytes the samples op writes for a result. */
function replyBytes(result: SamplesResult): Buffer {
  const chunks = encodeSamplesChunks(result.samples, result.sessionMetadata, { emptyReason: result.emptyReason, fields: WIRE_FIELDS_V2 });
  return Buffer.concat(chunks.map((chunk) => Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
}

/** One step of a generated conversation: a new root, a tool result after the newest reply, or a retry of an older one. */
type Step = { kind: "root" | "extend" | "retry"; pick: number; text: string };

const stepArb: fc.Arbitrary<Step> = fc.record({
  kind: fc.constantFrom<Step["kind"]>("root", "extend", "extend", "retry", "retry"),
  pick: fc.nat(),
  text: fc.constantFrom("sunny", "rain", "22 C", "ok", "\u00e9t\u00e9 \u2600", "no data"),
});

/** Grows one session from steps over HTTP (real tokenizer, echo backend); returns its state and context. */
/** A root, one extension, then a retry of that extension: one dropped leaf beside the kept one. */
const RETRIED_ONCE: readonly Step[] = [
  { kind: "root", pick: 0, text: "a" },
  { kind: "extend", pick: 0, text: "first try" },
  { kind: "retry", pick: 0, text: "second try" },
];

async function grow(steps: readonly Step[]): Promise<{ state: V2SessionState; ctx: PolicyContext }> {
  const base = h.server.url;
  const id = await createSession(base);
  const replies: ChatMessage[][] = []; // each conversation as it stood after a reply
  let roots = 0;
  for (const step of steps) {
    let messages: ChatMessage[];
    if (step.kind === "root" || replies.length === 0) {
      messages = [{ role: "user", content: `question ${roots++}: ${step.text}` }];
    } else {
      const from = step.kind === "extend" ? replies[replies.length - 1] : replies[step.pick % replies.length];
      messages = [...from, { role: "tool", content: step.text, tool_call_id: `t${replies.length}` }];
    }
    const reply = await turn(base, id, messages);
    replies.push([...messages, reply]);
  }
  seen.clear();
  const probe = await postSamples(base, id);
  expect(probe.status).toBe(200);
  const [[state, ctx]] = [...seen];
  return { state, ctx };
}

const BODIES: SamplesRequestBody[] = [
  { max_seq_len: null },
  { max_seq_len: null, metadata: { reward: 0.5, note: "agent \u00e9", accumulated_token_ids: [1, 2], leaf: "agent's" } },
  { max_seq_len: 40 },
];

describe("default-picker fast path", () => {
  test("isSupersededLeaf names exactly the leaves dropRetries drops (random forests)", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(), fc.boolean()), { minLength: 1, maxLength: 14 }), (shape) => {
        const g = new Grower();
        for (const [pick, root] of shape) {
          const nodes = g.forest.nodes;
          g.grow(root || nodes.length === 0 ? null : nodes[pick % nodes.length], { completion: 1 + (pick % 3) });
        }
        const leaves = g.forest.leaves();
        const kept = dropRetries(leaves.map(rawLeafSample), sessionMetadataOf(g.forest), { logger: recordingLogger() });
        const keptIds = new Set(kept.map((sample) => (sample.metadata.leaf as { node_id: number }).node_id));
        for (const leaf of leaves) expect(isSupersededLeaf(leaf)).toBe(!keptIds.has(leaf.id));
      }),
      { numRuns: 300 },
    );
  });

  test("a retried session: the dropped leaves stand as bare samples until written, the kept one is whole", async () => {
    const { state, ctx } = await grow(RETRIED_ONCE);
    const material = buildLeafMaterial(state.forest, null, ctx, undefined, isSupersededLeaf);
    expect(material.samples.map((sample) => Object.keys(sample.metadata))).toEqual([
      ["leaf"],
      ["lifecycle", "accumulated_token_ids", "leaf", "tito_session_mismatch"],
    ]);
    expect(material.samples[0].tokens).toEqual([]);
    // written on demand, each stand-in is the sample the general path assembles
    const eager = buildLeafMaterial(state.forest, null, ctx);
    expect(material.complete(material.samples)).toEqual(eager.samples);
  });

  test("every leaf deferred, then written: the same samples and bytes as assembled at once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 6 }), async (steps) => {
        const { state, ctx } = await grow(steps);
        const eager = buildLeafMaterial(state.forest, null, ctx).samples;
        const lazy = buildLeafMaterial(state.forest, null, ctx, undefined, () => true);
        const written = lazy.complete(lazy.samples);
        expect(written).toEqual(eager);
        const bytes = (samples: Sample[]) => replyBytes({ samples, sessionMetadata: {}, emptyReason: null });
        expect(bytes(written).equals(bytes(eager))).toBe(true);
      }),
      { numRuns: 8 },
    );
  });

  test("the samples reply is byte-identical to the general path's (random trees, bodies with agent metadata and max_seq_len)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 7 }), async (steps) => {
        const { state, ctx } = await grow(steps);
        for (const body of BODIES) {
          const fast = replyBytes(fastPolicy.collectSamples(state, body, ctx));
          const general = replyBytes(generalPolicy.collectSamples(state, body, ctx));
          expect(fast.equals(general)).toBe(true);
        }
      }),
      { numRuns: 15 },
    );
  });

  test("a broken record on a dropped leaf still fails the op with the general path's 422 text; nothing stored changes", async () => {
    const { state, ctx } = await grow(RETRIED_ONCE);
    const dropped = state.forest.leaves().find(isSupersededLeaf);
    expect(dropped).toBeDefined();
    const meta = (dropped!.record.response as { choices: Array<{ meta_info: { output_token_logprobs: unknown[] } }> }).choices[0].meta_info;
    const pairs = meta.output_token_logprobs;
    meta.output_token_logprobs = [[null, 3], ...pairs.slice(1)];
    const failure = (policy: typeof fastPolicy): string => {
      try {
        policy.collectSamples(state, { max_seq_len: null }, ctx);
      } catch (error) {
        expect(error).toBeInstanceOf(SampleAssemblyError);
        return (error as Error).message;
      }
      throw new Error("the samples op did not fail");
    };
    const text = failure(fastPolicy);
    expect(text).toBe("record 2: output_token_logprobs[0] is not a [logprob, token_id] pair");
    expect(failure(generalPolicy)).toBe(text);
    // mended, the same state assembles again, through both paths alike
    meta.output_token_logprobs = pairs;
    expect(
      replyBytes(fastPolicy.collectSamples(state, { max_seq_len: null }, ctx)).equals(
        replyBytes(generalPolicy.collectSamples(state, { max_seq_len: null }, ctx)),
      ),
    ).toBe(true);
  });
});
