// Golden bytes: the writer's output for fixed inputs must equal the checked-in files, byte for byte,
// and those files must decode to the inputs. Regenerate deliberately with UPDATE_GOLDEN=1 after a format change.
import * as fs from "node:fs";
import * as path from "node:path";
import { WIRE_FIELDS_V1, WIRE_FIELDS_V2, concatChunks, decodeSamplesReply, encodeSamples, encodeSamplesChunks, readSafetensors } from "../../src/wire";
import { PrefixCacheInfo, Sample } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";

const GOLDEN_DIR = path.join(__dirname, "golden");

function fixedSamples(): Sample[] {
  return [
    new Sample({
      tokens: [151644, 872, 198, 9707, 151645, 198, 151644, 77091, 198, 9707, 0, -1],
      response: "Hello — ünïcödé ✓",
      response_length: 3,
      loss_mask: [1, 0, 1],
      rollout_log_probs: [-0.0001234, -0, -17.25],
      rollout_routed_experts: new Tensor("I32", [3, 2, 2], Int32Array.of(0, 1, 2, 3, 4, 5, 6, 7, -8, 9, 2147483647, -2147483648)),
      rollout_indexer_topk: null,
      status: "completed",
      weight_versions: ["v7"],
      prefix_cache_info: new PrefixCacheInfo({ cached_tokens: 4, total_prompt_tokens: 9 }),
      metadata: { lifecycle: [{ t0: 1718000000.125, t1: 1718000001.5, turn: 1 }], "10": "integer-like key", tool: null },
      reward: { score: 0.5, parts: [1, -0] },
    }),
    new Sample({
      tokens: [5, 6, 7],
      response: "",
      response_length: 1,
      loss_mask: null,
      rollout_log_probs: [-2.5],
      rollout_routed_experts: new Tensor("I32", [0, 2, 2], new Int32Array(0)),
      rollout_indexer_topk: new Tensor("I32", [1, 4], Int32Array.of(3, 1, 4, 1)),
      status: "truncated",
      metadata: {},
      reward: null,
    }),
  ];
}

const GOLDEN_CASES: Array<[string, () => Uint8Array]> = [
  ["samples-reply-v2.safetensors", () => encodeSamples(fixedSamples(), { max_trim_tokens: 1, version: "v2" }, { fields: WIRE_FIELDS_V2 })],
  ["samples-reply-empty-v1.safetensors", () => encodeSamples([], { max_trim_tokens: 0 }, { emptyReason: "all_truncated", fields: WIRE_FIELDS_V1 })],
];

describe.each(GOLDEN_CASES)("golden %s", (file, build) => {
  const goldenPath = path.join(GOLDEN_DIR, file);
  if (process.env.UPDATE_GOLDEN === "1") fs.writeFileSync(goldenPath, build());

  test("the writer reproduces the checked-in bytes exactly", () => {
    const golden = fs.readFileSync(goldenPath);
    const produced = Buffer.from(build());
    expect(produced.length).toBe(golden.length);
    expect(produced.equals(golden)).toBe(true);
  });

  test("the checked-in bytes decode back to the fixed input", () => {
    const golden = new Uint8Array(fs.readFileSync(goldenPath));
    const isV2 = file.includes("v2");
    const reply = decodeSamplesReply(golden, new Sample({ reward: 9 }), { fields: isV2 ? WIRE_FIELDS_V2 : WIRE_FIELDS_V1 });
    if (!isV2) {
      expect(reply).toEqual({ samples: [], session_metadata: { max_trim_tokens: 0 }, empty_reason: "all_truncated" });
      return;
    }
    const expected = fixedSamples();
    expect(reply.empty_reason).toBeNull();
    expect(reply.session_metadata).toEqual({ max_trim_tokens: 1, version: "v2" });
    expect(reply.samples).toHaveLength(2);
    reply.samples.forEach((out, i) => {
      const want = expected[i];
      expect(out.tokens).toEqual(want.tokens);
      expect(out.response).toBe(want.response);
      expect(out.loss_mask).toEqual(want.loss_mask);
      expect(out.rollout_log_probs).toEqual(want.rollout_log_probs);
      expect(out.status).toBe(want.status);
      expect(out.metadata).toEqual(want.metadata);
      for (const field of ["rollout_routed_experts", "rollout_indexer_topk"] as const) {
        const got = out[field];
        const exp = want[field];
        if (exp === null) expect(got).toBeNull();
        else {
          expect(got?.shape).toEqual(exp.shape);
          expect([...(got?.data ?? [])]).toEqual([...exp.data]);
        }
      }
    });
    expect(Object.is(reply.samples[0].rollout_log_probs?.[1], -0)).toBe(true);
    expect(reply.samples[0].reward).toEqual({ score: 0.5, parts: [1, -0] });
    expect(reply.samples[1].reward).toBe(9);
  });

  test("the checked-in header follows the reference layout", () => {
    const golden = new Uint8Array(fs.readFileSync(goldenPath));
    const size = Number(Buffer.from(golden).readBigUInt64LE(0));
    expect(size % 8).toBe(0);
    const names = [...readSafetensors(golden).tensors.keys()];
    expect(names).toEqual(
      file.includes("v2")
        ? [
            "tokens.0",
            "tokens.1",
            "rollout_log_probs.0",
            "rollout_log_probs.1",
            "rollout_indexer_topk.1",
            "rollout_routed_experts.0",
            "rollout_routed_experts.1",
            "_samples_meta",
            "loss_mask.0",
          ]
        : ["_samples_meta"],
    );
  });
});

test("encodeSamplesChunks concatenates to the golden bytes and leaves replay tensors uncopied", () => {
  const samples = fixedSamples();
  const chunks = encodeSamplesChunks(samples, { max_trim_tokens: 1, version: "v2" }, { fields: WIRE_FIELDS_V2 });
  const golden = fs.readFileSync(path.join(GOLDEN_DIR, "samples-reply-v2.safetensors"));
  expect(Buffer.from(concatChunks(chunks)).equals(golden)).toBe(true);
  const routed = samples[0].rollout_routed_experts as Tensor;
  expect(chunks.some((chunk) => chunk.buffer === routed.data.buffer && chunk.byteLength === routed.data.byteLength)).toBe(true);
});
