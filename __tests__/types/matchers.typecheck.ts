// Type-level fixture (checked by `npm run typecheck`, never run by Jest): the matchers type-check with
// `@jest/globals`, i.e. through the `declare module "expect"` augmentation pulled in by the package root.
import { expect } from "@jest/globals";
import {
  Sample,
  trainingMetadataProjection,
  WEATHER_AGENT_METADATA,
  WEATHER_RETRY_TOPOLOGY,
  WEATHER_TOOL_ROUND_TRIPS,
  type BitwiseEqualTo,
  type BitwiseOptions,
  type SessionParityRun,
} from "../../src";

export function typecheckJestGlobals(left: Sample, right: Sample): void {
  expect(left).toBeBitwiseEqual(right);
  expect(left).not.toBeBitwiseEqual(right);
  expect(left).toBeBitwiseEqual(right, { metadataProjection: trainingMetadataProjection, maxDifferences: 5, rootPath: "v1.sample" });
  const options: BitwiseOptions = { maxDifferences: 3 };
  expect([left]).toBeBitwiseEqual([right], options);
  const matcher: BitwiseEqualTo = expect.bitwiseEqualTo(right, { metadataProjection: trainingMetadataProjection });
  expect({ sample: left }).toEqual({ sample: matcher });
  expect({ sample: left }).toEqual({ sample: expect.not.bitwiseEqualTo(right) });
  expect({ sample: left }).toEqual({ sample: expect.toBeBitwiseEqual(right) });
  expect({ sample: left }).toEqual({ sample: expect.not.toBeBitwiseEqual(right, { maxDifferences: 2 }) });
  // @ts-expect-error maxDifferences must be a number, in the asymmetric form too
  expect.toBeBitwiseEqual(right, { maxDifferences: "ten" });
  void expect(Promise.resolve(left)).resolves.toBeBitwiseEqual(right);

  // @ts-expect-error maxDifferences must be a number
  expect(left).toBeBitwiseEqual(right, { maxDifferences: "ten" });
  // @ts-expect-error the projection receives metadata and must be a function
  expect(left).toBeBitwiseEqual(right, { metadataProjection: "trainingMetadataProjection" });
  // @ts-expect-error unknown option
  expect(left).toBeBitwiseEqual(right, { tolerance: 1e-9 });
  // @ts-expect-error the expected value is required
  expect(left).toBeBitwiseEqual();
}

export function typecheckJestGlobalsParityMatchers(v1: SessionParityRun, v2: SessionParityRun): void {
  expect(v2).toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY);
  expect(v2.preCollect.metadata.tree).not.toHaveRetryTopology({
    nodes: [
      [0, null],
      [1, 0],
    ],
    leaves: [[1, [0, 1]]],
  });
  expect(v2).toHaveRetryTopology({ nodes: [[0, null]], leaves: [[0, [0]]], selectedLeaf: 0 });
  expect(v1).toMatchAgentMetadata(WEATHER_AGENT_METADATA);
  expect(v2).not.toMatchAgentMetadata({ rollback_count: 3 });
  expect(v1).toRoundTripToolCalls(WEATHER_TOOL_ROUND_TRIPS);
  expect(v2.preCollect).not.toRoundTripToolCalls([{ call: 0, result: 1, name: "get_weather", arguments: { location: "Beijing" } }], { tools: ["get_weather"] });
  expect(v1).toHaveTrainingPayloadParity(v2);
  expect(v1).not.toHaveTrainingPayloadParity(v2, { recordCount: null, topology: null, maxDifferences: 3 });
  expect(v1).toHaveAgenticParity();

  // @ts-expect-error nodes are [id, parent] pairs
  expect(v2).toHaveRetryTopology({ nodes: [0, 1], leaves: [] });
  // @ts-expect-error selectedLeaf is a node id
  expect(v2).toHaveRetryTopology({ nodes: [], leaves: [], selectedLeaf: "8" });
  // @ts-expect-error a round trip needs the result record
  expect(v1).toRoundTripToolCalls([{ call: 0, name: "get_weather", arguments: {} }]);
  // @ts-expect-error the v2 run must be a SessionParityRun
  expect(v1).toHaveTrainingPayloadParity([v2]);
  // @ts-expect-error expected agent metadata is required
  expect(v1).toMatchAgentMetadata();

  expect(v1.samples[0]).toMatchBitwiseSnapshot();
  expect(v1.samples[0]).toMatchBitwiseSnapshot("hint", { largeArrays: "safetensors", metadataProjection: null, maxDifferences: 3 });
  expect(v1.samples[0]).toMatchBitwiseSnapshot({ largeArrays: "digest" });
  // @ts-expect-error largeArrays is "digest" or "safetensors"
  expect(v1.samples[0]).toMatchBitwiseSnapshot("hint", { largeArrays: "full" });
  expect(v1.samples[0]).toBeWellFormedTrainingSample();
  expect(v2.samples[0]).not.toBeWellFormedTrainingSample({ recordCount: 7, maxDifferences: 3 });
  // @ts-expect-error recordCount is a number
  expect(v1.samples[0]).toBeWellFormedTrainingSample({ recordCount: "7" });
  expect([v1, v2]).toPassSessionVerifyGate();
  expect(v2.samples).not.toPassSessionVerifyGate({ titoModel: "qwen3", assistantTextThreshold: 0.25, allowedAppendRoles: ["tool"], specialTokenIds: [151644] });
  // @ts-expect-error the threshold is a number
  expect([v1]).toPassSessionVerifyGate({ assistantTextThreshold: "0.2" });
}
