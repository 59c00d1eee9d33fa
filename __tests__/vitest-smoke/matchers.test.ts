// Vitest smoke test: the session-parity matchers work on Vitest's expect (pass, .not, failure messages, asymmetric).
// The trajectory part runs one real v1/v2 pair through in-process servers and judges it with every parity matcher.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  buildWeatherInputSamples,
  runAgenticRetryTrajectories,
  Sample,
  startParityEnvironment,
  trainingMetadataProjection,
  WEATHER_AGENT_METADATA,
  WEATHER_RETRY_TOPOLOGY,
  type ParityEnvironment,
  type SessionParityRun,
} from "jest-session-parity";

describe("toBeBitwiseEqual under Vitest", () => {
  test("passes on equal bit trees and fails with the leaf's bits", () => {
    expect({ reward: 0, log_probs: [0.5, -0.25] }).toBeBitwiseEqual({ reward: 0, log_probs: [0.5, -0.25] });
    expect({ reward: 0 }).not.toBeBitwiseEqual({ reward: -0 });
    expect(() => expect({ reward: 0 }).toBeBitwiseEqual({ reward: -0 })).toThrow(/reward: \+0 vs -0/);
    expect(() => expect([0.5]).toBeBitwiseEqual([0.5000000000000001])).toThrow(
      /\[0\]: 0x3fe0000000000000 \(0\.5\) vs 0x3fe0000000000001 \(0\.5000000000000001\)[\s\S]*1 difference in total/,
    );
  });

  test("compares Samples field by field and names an undeclared field", () => {
    const left = new Sample({ tokens: [1, 2, 3], response_length: 1, loss_mask: [1] });
    const right = new Sample({ tokens: [1, 2, 3], response_length: 1, loss_mask: [1] });
    expect(left).toBeBitwiseEqual(right);
    (right as unknown as Record<string, unknown>).extra = 1;
    expect(() => expect(left).toBeBitwiseEqual(right)).toThrow(/extra/);
  });

  test("the runner's asymmetric toBeBitwiseEqual is typed and works inside toEqual", () => {
    expect({ reward: 0 }).toEqual({ reward: expect.toBeBitwiseEqual(0) });
    expect({ reward: 0 }).not.toEqual({ reward: expect.toBeBitwiseEqual(-0) });
  });

  test("the asymmetric bitwiseEqualTo works inside toEqual", () => {
    expect({ nested: new Float64Array([1.5]) }).toEqual({ nested: expect.bitwiseEqualTo(new Float64Array([1.5])) });
    expect({ nested: new Float64Array([1.5]) }).not.toEqual({ nested: expect.bitwiseEqualTo(new Float32Array([1.5])) });
  });
});

describe("parity matchers under Vitest on a real v1/v2 pair", () => {
  let environment: ParityEnvironment;
  let v1: SessionParityRun;
  let v2: SessionParityRun;

  beforeAll(async () => {
    environment = await startParityEnvironment({ latencyMs: 0, env: {} });
    [v1] = await runAgenticRetryTrajectories({ version: "v1", inputSamples: buildWeatherInputSamples(1), sessionServerUrls: [environment.v1Url] });
    [v2] = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(1), sessionServerUrls: [environment.v2Url] });
  });
  afterAll(async () => {
    await environment?.stop();
  });

  test("the pair passes every matcher", () => {
    expect(v1).toHaveTrainingPayloadParity(v2);
    expect(v2).toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY);
    expect(v2).toMatchAgentMetadata(WEATHER_AGENT_METADATA);
    expect(v1.samples[0]).toBeBitwiseEqual(v2.samples[0], { metadataProjection: trainingMetadataProjection });
    expect(v1.samples[0]).toBeWellFormedTrainingSample();
  });

  test("a sample with a log-prob above 0 fails toBeWellFormedTrainingSample naming the entry", () => {
    const broken = { ...v2.samples[0], rollout_log_probs: [...(v2.samples[0].rollout_log_probs ?? [])] };
    broken.rollout_log_probs[0] = 0.5;
    expect(() => expect(broken).toBeWellFormedTrainingSample()).toThrow("[rollout_log_probs] rollout_log_probs[0] = 0.5 is not a finite number ≤ 0");
    expect(broken).not.toBeWellFormedTrainingSample();
  });

  test("a changed parent fails toHaveRetryTopology with the differing node", () => {
    const moved = {
      ...WEATHER_RETRY_TOPOLOGY,
      nodes: WEATHER_RETRY_TOPOLOGY.nodes.map(([id, parent]) => (id === 5 ? ([5, 4] as const) : ([id, parent] as const))),
    };
    expect(() => expect(v2).toHaveRetryTopology(moved)).toThrow(
      "First difference: first differing node: tree.nodes[5] is (5, parent 3), expected (5, parent 4)",
    );
    expect(v2).not.toHaveRetryTopology(moved);
  });

  test(".not fails on a passing pair and a non-run throws even under .not", () => {
    expect(() => expect(v1).not.toHaveTrainingPayloadParity(v2)).toThrow("The v1 and v2 runs carry the same training payload.");
    expect(() => expect(v1).not.toMatchAgentMetadata(WEATHER_AGENT_METADATA)).toThrow("every part passed, so .not fails.");
    expect(() => expect(v1.samples[0]).not.toHaveTrainingPayloadParity(v2)).toThrow(
      "toHaveTrainingPayloadParity: the v1 run (received) is not a SessionParityRun",
    );
  });
});
