// The package root ("jest-session-parity"): what a test file needs — matchers' checks, Sample, the fixture.
// Everything else lives in a subpath entry (src/entries/*.ts); internals are not exported at all.
//
// How a new public name is added (keep this root a curated few dozen names, each with TSDoc):
// 1. Give it TSDoc where it is defined, and export it from its component module as usual.
// 2. Decide where it belongs. A name a test file calls or types (a matcher's check function, a fixture entry
//    point, a scenario constant, an option type) goes here AND in `src/entries/matchers.ts` when it is pure
//    (no msw/undici/tokenizer/server at load time). Anything for building on the servers, the mock backend, the
//    tokenizer or the wire format goes only in its subpath entry (`src/entries/<server|mock|tokenizer|wire>.ts`).
//    Heavy implementations are exported through an on-demand wrapper (see `src/entries/on-demand-fixture.ts`) so
//    that importing the root never loads them; `__tests__/entries/lazy-loading.test.ts` enforces that.
// 3. A new subpath entry also needs: an "exports" and a "typesVersions" row in package.json, a line in
//    `scripts/api-report.js`, and a row in the pack test's subpath list (`__tests__/pack/`).
// 4. Run `npm run api-report` and commit the changed `api/*.api.md`: `npm test` fails while a report is stale,
//    so every change of the public surface shows up as a reviewed diff.
// Under a runner, loading the root registers the matchers (so `setupFilesAfterEnv: ["jest-session-parity"]` works too).
import "./entries/register-on-import";
export {
  compareBitwise,
  isBitwiseEqual,
  BitwiseUsageError,
  formatDifferences,
  trainingMetadataProjection,
  bitwiseEqualTo,
  BitwiseEqualTo,
  formatVerdict,
  checkTrainingPayloadParity,
  checkRetryTopology,
  checkAgentMetadata,
  checkToolCallRoundTrips,
  checkTrainingSampleInvariants,
  checkSessionVerifyGate,
  ASSISTANT_TEXT_THRESHOLDS,
  DEFAULT_ASSISTANT_TEXT_THRESHOLD,
  weatherAgentMetadata,
  weatherRetryTopology,
  weatherRecordCount,
  weatherDriverEvents,
  type SessionVerifyGateOptions,
  WEATHER_AGENT_METADATA,
  WEATHER_RETRY_TOPOLOGY,
  WEATHER_TOOL_ROUND_TRIPS,
  Sample,
  Tensor,
  pyFloat,
  pyInt,
  PyFloat,
  PyBigInt,
  type BitwiseDifference,
  type BitwiseOptions,
  type BitwiseReason,
  type MetadataProjection,
  type FormatDifferencesOptions,
  type FormatVerdictOptions,
  type ParityFailure,
  type ParityVerdict,
  type TrainingPayloadParityOptions,
  type RetryTopologyOptions,
  type TopologyVerdict,
  type AgentMetadataOptions,
  type ToolCallRoundTripOptions,
  type TrainingSampleInvariantOptions,
  type RetryTopology,
  type ToolCallRoundTrip,
  type SessionParityMatchers,
  type SessionParityAsymmetricMatchers,
  type JsonObject,
  type JsonValue,
  type SampleInit,
  type SampleStatus,
  type Dtype,
  type EmptyReason,
  type SessionParityRun,
  type SessionSnapshot,
  type WeatherAgentResult,
  type SessionRecord,
  type SessionServerVersion,
} from "./entries/matchers";
export { buildWeatherInputSamples } from "./fixture/input-samples";
export { runAgenticRetryTrajectories, startParityEnvironment, runAgentParity } from "./entries/on-demand-fixture";
export { AgentRunError } from "./fixture/agent-run-error";
export type { AgentParityOptions, AgentParityResult, AgentParityVersion, AgentRunContext, ParityAgentFunction } from "./fixture/agent-parity";
export type { CassetteOption, CassetteSource } from "./backend/cassette-backend";
export { DEFAULT_PARITY_SAMPLING, type AgenticRetryOptions } from "./fixture/types";
export type { AgentSampling, ToolCallFailureMode } from "./agent/weather-agent";
export type { ParityEnvironment, ParityEnvironmentOptions } from "./fixture/parity-environment";
export type { RoutingReplaySettings } from "./fixture/routing-replay";
export {
  toMatchBitwiseSnapshot,
  bitTreeSerializer,
  trajectoryPayload,
  LARGE_ARRAY_THRESHOLD,
  type BitwiseSnapshotOptions,
  type PinnedTrajectory,
} from "./snapshot";
export { fuzzAgenticParity, replayAgentSchedule } from "./entries/on-demand-fuzz";
export { replayConversations } from "./entries/on-demand-replay";
export { REPLAY_PARITY_OPTIONS } from "./replay/parity-options";
export type { ReplayConversationsOptions, ReplayedConversationRun } from "./replay/replay-conversations";
export type { RetrySettings, RetryInjection, RetryKind } from "./replay/retry-injection";
export { verifyTemplate } from "./entries/on-demand-verify";
export type { VerifyTemplateOptions } from "./verify/load-plan";
export type { TemplateVerifyReport, VerifyCaseResult, VerifyLayer, TextDivergence, CoverageReport, CoverageCell, ThinkingMode } from "./verify/types";
export {
  formatFuzzReport,
  replayTestSource,
  describeSchedule,
  type AgentSchedule,
  type FuzzOptions,
  type FuzzReport,
  type FuzzCounterexample,
} from "./entries/fuzz-model";
