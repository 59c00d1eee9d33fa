// Exposes a loopback mock backend's stats over HTTP (`GET /_mock/stats`, `POST /_mock/reset`) and reads them back.
// Needed when the backend lives in another process than the test (Jest's globalSetup runs outside the workers).
import { http, type RequestHandler } from "msw";
import { request, type Dispatcher } from "undici";
import { jsonResponse } from "./errors";
import type { BackendStatsRecorder } from "./stats";

/** Route that returns a {@link BackendStatsSnapshot} as JSON. */
export const MOCK_STATS_PATH = "/_mock/stats";

/** Route that clears the logs and restarts the peak concurrency (`BackendStats.reset`). */
export const MOCK_RESET_PATH = "/_mock/reset";

/** The backend's stats as `GET /_mock/stats` returns them (a JSON copy of `BackendStats`). */
export interface BackendStatsSnapshot {
  /** Every generation-like request body in arrival order. */
  requestLog: Record<string, unknown>[];
  /** Method, path and reply status of the same requests (bodies left out; they are in `requestLog`). */
  requests: { method: string; path: string; status: number | null }[];
  /** Oldest entries dropped from the bounded log since the last reset. */
  droppedRequests: number;
  /** Highest number of generation requests in flight at once since the last reset. */
  maxConcurrent: number;
  /** Generation requests in flight when the snapshot was taken. */
  currentConcurrent: number;
}

/** msw handlers for the two stats routes, reading `stats`. Their own requests are not logged. */
export function statsRouteHandlers(stats: BackendStatsRecorder): RequestHandler[] {
  return [
    http.get(
      ({ request: incoming }) => new URL(incoming.url).pathname === MOCK_STATS_PATH,
      () => jsonResponse(200, snapshotStats(stats)),
    ),
    http.post(
      ({ request: incoming }) => new URL(incoming.url).pathname === MOCK_RESET_PATH,
      () => {
        stats.reset();
        return jsonResponse(200, { status: "ok" });
      },
    ),
  ];
}

/** A JSON-safe copy of the recorder's state. */
function snapshotStats(stats: BackendStatsRecorder): BackendStatsSnapshot {
  return {
    requestLog: stats.requestLog,
    requests: stats.requests.map((entry) => ({ method: entry.method, path: entry.path, status: entry.status ?? null })),
    droppedRequests: stats.droppedRequests,
    maxConcurrent: stats.maxConcurrent,
    currentConcurrent: stats.currentConcurrent,
  };
}

/**
 * Reads `GET <backendUrl>/_mock/stats`.
 * @throws Error naming the URL when the backend does not serve the route (not a mock started with `statsRoutes: true`).
 */
export async function fetchBackendStats(backendUrl: string, dispatcher?: Dispatcher): Promise<BackendStatsSnapshot> {
  const reply = await request(`${backendUrl.replace(/\/+$/, "")}${MOCK_STATS_PATH}`, { method: "GET", dispatcher });
  const text = await reply.body.text();
  if (reply.statusCode !== 200) {
    throw new Error(
      `GET ${backendUrl}${MOCK_STATS_PATH} answered ${reply.statusCode}: ${text.slice(0, 200)} (is it a mock backend started with statsRoutes: true?)`,
    );
  }
  return JSON.parse(text) as BackendStatsSnapshot;
}

/**
 * Calls `POST <backendUrl>/_mock/reset`.
 * @throws Error naming the URL when the backend does not serve the route.
 */
export async function resetBackendStats(backendUrl: string, dispatcher?: Dispatcher): Promise<void> {
  const reply = await request(`${backendUrl.replace(/\/+$/, "")}${MOCK_RESET_PATH}`, { method: "POST", dispatcher });
  const text = await reply.body.text();
  if (reply.statusCode !== 200) {
    throw new Error(
      `POST ${backendUrl}${MOCK_RESET_PATH} answered ${reply.statusCode}: ${text.slice(0, 200)} (is it a mock backend started with statsRoutes: true?)`,
    );
  }
}
