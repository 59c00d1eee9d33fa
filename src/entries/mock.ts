// The `jest-session-parity/mock` entry: the SGLang-compatible mock backend (msw handlers behind a loopback port).
// Loading it loads msw; under Jest's CommonJS runtime that needs the preset's transform (see the README).
import "./mock-peers";
export { startMockBackend, type MockBackend, type MockBackendOptions } from "../backend/mock-backend";
export { useMockBackend, IN_PROCESS_BACKEND_ORIGIN, type InProcessBackendOptions, type InProcessMockBackend } from "../backend/in-process";
export { weatherScript, echoScript, WEATHER_SCRIPT_REPLIES, WEATHER_REASONING_TEXT } from "../backend/scripts";
export type { MockFormats, MockModelChoice } from "../backend/mock-model";
export { toolCallFormat, reasoningFormat, toolCallFormatNames, reasoningFormatNames, FALLBACK_TOOL_CALL_PARSER } from "../backend/formats/registry";
export type { ToolCallFormat, ReasoningFormat, ToolCallParse, ReasoningParse, ParsedToolCall, ScriptedToolCall } from "../backend/formats/types";
export { createBackendHandlers, DEFAULT_MOCK_MODEL, QWEN3_STOP_TOKEN, type BackendOptions, type TokenizerSource } from "../backend/handlers";
export { serveHandlers, type BridgeOptions, type HandlerBridge } from "../backend/http-bridge";
export { fetchBackendStats, resetBackendStats, MOCK_STATS_PATH, MOCK_RESET_PATH, type BackendStatsSnapshot } from "../backend/stats-routes";
export type { BackendStats, BackendRequestEntry } from "../backend/stats";
export type { BackendRequestBody, FinishReason, ProcessFunction, ProcessMetaInfo, ProcessResult } from "../backend/types";
export type { ModelChoice, TokenRef } from "../tokenizer/families/types";
export type { ChatTemplateKwargs, ToolSpec } from "../tokenizer/types";
export {
  startCassetteBackend,
  type CassetteBackend,
  type CassetteBackendOptions,
  type CassetteCounts,
  type CassetteOption,
  type CassetteSource,
} from "../backend/cassette-backend";
export { CassetteError, CASSETTE_FORMAT_VERSION } from "../backend/cassette-codec";
export { cassetteVocabulary, type CassetteVocabulary, type CassetteModelChoice } from "../backend/cassette-vocabulary";
