// Type-level fixture (checked by `npm run typecheck`, never run by Jest): the matchers type-check with
// the global `expect` of @types/jest, i.e. through the `jest.Matchers` / `jest.Expect` augmentation.
import "../../src";
import { Sample, trainingMetadataProjection, WEATHER_AGENT_METADATA, WEATHER_RETRY_TOPOLOGY, WEATHER_TOOL_ROUND_TRIPS, type SessionParityRun } from "../../src";

export function typecheckJestGlobalNamespace(left: Sample, right: Sample): void {
  expect(left).toBeBitwiseEqual(right);
  expect(left).not.toBeBitwiseEqual(right);
  expect(left).toBeBitwiseEqual(right, { metadataProjection: trainingMetadataProjection, maxDifferences: 20 });
  expect({ sample: left }).toEqual({ sample: expect.bitwiseEqualTo(right) });
  expect({ sample: left }).toEqual({ sample: expect.not.bitwiseEqualTo(right) });
  expect({ sample: left }).toEqual({ sample: expect.toBeBitwiseEqual(right) });
  expect({ sample: left }).toEqual({ sample: expect.not.toBeBitwiseEqual(right, { maxDifferences: 2 }) });
  const matchers: jest.Matchers<void, Sample> = expect(left);
  matchers.toBeBitwiseEqual(right);

  // @ts-expect-error maxDifferences must be a number
  expect(left).toBeBitwiseEqual(right, { maxDifferences: "ten" });
  // @ts-expect-error unknown option
  expect(left).not.toBeBitwiseEqual(right, { tolerance: 1e-9 });
}

export function typecheckJestGlobalNamespaceParityMatchers(v1: SessionParityRun, v2: SessionParityRun): void {
  expect(v2).toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY);
  expect(v2).not.toHaveRetryTopology({ nodes: [[0, null]], leaves: [[0, [0]]], selectedLeaf: 0 });
  expect(v1).toMatchAgentMetadata(WEATHER_AGENT_METADATA);
  expect(v1).not.toMatchAgentMetadata({ user_count: 1 });
  expect(v1.preCollect).toRoundTripToolCalls(WEATHER_TOOL_ROUND_TRIPS, { tools: ["get_weather"] });
  expect(v1).not.toRoundTripToolCalls([]);
  expect(v1).toHaveTrainingPayloadParity(v2);
  expect(v1.samples[0]).toBeWellFormedTrainingSample({ recordCount: 7 });
  expect([v1, v2]).toPassSessionVerifyGate({ titoModel: "qwen3" });
  expect(v1).not.toHaveTrainingPayloadParity(v2, { agentMetadata: null });
  expect(v1).not.toHaveAgenticParity();
  const matchers: jest.Matchers<void, SessionParityRun> = expect(v1);
  matchers.toHaveTrainingPayloadParity(v2);

  // @ts-expect-error leaves are [nodeId, pathNodeIds] pairs
  expect(v2).toHaveRetryTopology({ nodes: [], leaves: [[8, 7]] });
  // @ts-expect-error unknown option
  expect(v1).toHaveTrainingPayloadParity(v2, { tolerance: 1e-9 });
  // @ts-expect-error round trips are objects
  expect(v1).toRoundTripToolCalls([[0, 1]]);

  expect(v1.samples[0]).toMatchBitwiseSnapshot();
  expect(v1.samples[0]).toMatchBitwiseSnapshot("hint", { largeArrays: "safetensors", metadataProjection: null, maxDifferences: 3 });
  expect(v1.samples[0]).toMatchBitwiseSnapshot({ largeArrays: "digest" });
  // @ts-expect-error largeArrays is "digest" or "safetensors"
  expect(v1.samples[0]).toMatchBitwiseSnapshot("hint", { largeArrays: "full" });
}
