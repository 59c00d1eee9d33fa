// The `jest-session-parity/mock` entry: the SGLang-compatible mock backend (msw handlers behind a loopback port).
// Loading it loads msw; under Jest's CommonJS runtime that needs the preset's transform (see the README).
export { startMockBackend, type MockBackend, type MockBackendOptions } from "../backend/mock-backend";
export { useMockBackend, IN_PROCESS_BACKEND_ORIGIN, type InProcessBackendOptions, type InProcessMockBackend } from "../backend/in-process";
export { weatherScript, echoScript, WEATHER_SCRIPT_REPLIES } from "../backend/scripts";
export { createBackendHandlers, DEFAULT_MOCK_MODEL, QWEN3_STOP_TOKEN, type BackendOptions, type TokenizerSource } from "../backend/handlers";
export { serveHandlers, type BridgeOptions, type HandlerBridge } from "../backend/http-bridge";
export { fetchBackendStats, resetBackendStats, MOCK_STATS_PATH, MOCK_RESET_PATH, type BackendStatsSnapshot } from "../backend/stats-routes";
export type { BackendStats, BackendRequestEntry } from "../backend/stats";
export type { BackendRequestBody, FinishReason, ProcessFunction, ProcessMetaInfo, ProcessResult } from "../backend/types";
