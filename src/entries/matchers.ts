// The `jest-session-parity/matchers` entry: the matchers' pure half (comparator, checks, projection, Sample, codec).
// It loads no HTTP stack, no msw and no tokenizer, so it works in any Jest or Vitest project without transform settings.
export {
  compareBitwise,
  isBitwiseEqual,
  BitwiseUsageError,
  type BitwiseDifference,
  type BitwiseOptions,
  type BitwiseReason,
  type MetadataProjection,
} from "../matchers/bitwise";
export { formatDifferences, type FormatDifferencesOptions } from "../matchers/format-differences";
export { trainingMetadataProjection } from "../matchers/training-metadata-projection";
export { bitwiseEqualTo, BitwiseEqualTo } from "../matchers/bitwise-equal-to";
export { formatVerdict, type FormatVerdictOptions, type ParityFailure, type ParityVerdict } from "../matchers/parity-verdict";
export { checkTrainingPayloadParity, type TrainingPayloadParityOptions } from "../matchers/training-payload-parity";
export { checkRetryTopology, type RetryTopologyOptions, type TopologyVerdict } from "../matchers/retry-topology";
export { checkAgentMetadata, type AgentMetadataOptions } from "../matchers/agent-metadata";
export { checkToolCallRoundTrips, type ToolCallRoundTripOptions } from "../matchers/tool-call-round-trip";
export { checkTrainingSampleInvariants, type TrainingSampleInvariantOptions } from "../matchers/sample-invariants";
export {
  ASSISTANT_TEXT_THRESHOLDS,
  checkSessionVerifyGate,
  DEFAULT_ASSISTANT_TEXT_THRESHOLD,
  FORBIDDEN_MISMATCH_TYPES,
  QWEN3_SPECIAL_TOKEN_IDS,
  requiredDriverEvents,
  type SessionVerifyGateOptions,
} from "../matchers/session-verify-gate";
export { weatherAgentMetadata, weatherDriverEvents, weatherRecordCount, weatherRetryTopology } from "../matchers/weather-schedule-expectations";
export { bitTreeSerializer, trajectoryPayload, LARGE_ARRAY_THRESHOLD, type BitwiseSnapshotOptions, type PinnedTrajectory } from "../snapshot";
export {
  WEATHER_AGENT_METADATA,
  WEATHER_RETRY_TOPOLOGY,
  WEATHER_TOOL_ROUND_TRIPS,
  type RetryTopology,
  type ToolCallRoundTrip,
} from "../matchers/weather-expectations";
export { registerSessionParityMatchers, sessionParityMatchers, sessionParityAsymmetricMatchers, type ExpectLike } from "./registry";
export type { SessionParityMatchers, SessionParityAsymmetricMatchers } from "../matchers/typings";
export { Sample, type JsonObject, type JsonValue, type SampleInit, type SampleStatus } from "../wire/sample";
export { Tensor, type Dtype } from "../wire/tensor";
export { pyFloat, pyInt, PyFloat, PyBigInt } from "../wire/py-json-values";
export {
  encodeSamples,
  decodeSamplesReply,
  type EncodeSamplesOptions,
  type DecodeSamplesOptions,
  type SampleCheckResult,
  type SamplesReply,
  type EmptyReason,
} from "../wire/samples-codec";
export { DecodeWork, type SamplesDecodeLimits } from "../wire/decode-limits";
export type { SessionParityRun, SessionSnapshot } from "../fixture/types";
export type { WeatherAgentResult } from "../agent/weather-agent";
export type { SessionRecord, SessionServerVersion } from "../server/types";
