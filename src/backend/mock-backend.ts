// The mock backend on a real loopback port: the msw handlers behind a node:http bridge.
// Any client reaches it (undici pools, child processes, a Python server), unlike in-process interception.
import { setMaxListeners } from "node:events";
import type { Tokenizer } from "../tokenizer/types";
import { loadMockTokenizer, resolveMockFormats, type MockModelChoice } from "./mock-model";
import { buildBackendHandlers, unknownPathResponse, type BackendOptions } from "./handlers";
import { serveHandlersWithDirectRoute } from "./http-bridge";
import { BackendStatsRecorder, exposeStats, type BackendStats } from "./stats";
import { statsRouteHandlers } from "./stats-routes";
import { ReplyPlanRegistry } from "./reply-plans";
import { planRouteHandlers } from "./plan-routes";

/** Options of {@link startMockBackend}: the handler options, with the tokenizer optional. */
export type MockBackendOptions = Omit<BackendOptions, "tokenizer" | "origin" | "signal" | "formats" | "stopToken"> &
  MockModelChoice & {
    /**
     * Tokenizer to use; when absent the family's (`titoModel`, default qwen3) is loaded from `hfCheckpoint` (default: the
     * packaged Qwen3 files), rendering the family's template.
     */
    tokenizer?: Tokenizer;
    /** Interface to bind (default 127.0.0.1). */
    host?: string;
    /** Port to bind (default 0: a free port). */
    port?: number;
    /** Most requests kept in the stats log (default 10000); older ones are dropped and counted in `droppedRequests`. */
    maxLogEntries?: number;
    /** Request body limit in bytes (default 64 MiB); larger bodies get 413. */
    maxBodyBytes?: number;
    /** Also serve `GET /_mock/stats` and `POST /_mock/reset` so another process can read the stats (default false). */
    statsRoutes?: boolean;
    /** Reply plans to answer from (default: a fresh registry, exposed as `plans`). */
    plans?: ReplyPlanRegistry;
    /** Serve `PUT`/`DELETE /_mock/plans/{routingKey}` so another process can register plans (default: `statsRoutes`). */
    planRoutes?: boolean;
  };

/** A running loopback mock backend. */
export interface MockBackend extends BackendStats {
  /** Base URL, `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The reply plans it answers from (a request whose routing key has a plan never reaches `process`). */
  readonly plans: ReplyPlanRegistry;
  /** Releases the port; in-flight requests are dropped and their latency waits ended. */
  close(): Promise<void>;
}

/** Starts the SGLang-compatible mock on a loopback port (the tokenizer is loaded before it listens). */
export async function startMockBackend(options: MockBackendOptions): Promise<MockBackend> {
  const { formats, stopToken } = resolveMockFormats(options);
  const tokenizer = options.tokenizer ?? (await loadMockTokenizer(options));
  const stats = options.stats ?? new BackendStatsRecorder({ maxLogEntries: options.maxLogEntries });
  const shutdown = new AbortController();
  // Every pending latency wait listens on this signal; there may be far more than the default ten.
  setMaxListeners(0, shutdown.signal);
  const plans = options.plans ?? new ReplyPlanRegistry();
  const { handlers, directRoute } = buildBackendHandlers({ ...options, tokenizer, formats, stopToken, stats, plans, signal: shutdown.signal });
  // After the dispatch handler: it declines every path it does not serve, so generation requests (the hot path)
  // are matched by the first handler instead of paying msw's per-handler parse for the stats routes first.
  if (options.statsRoutes === true) handlers.push(...statsRouteHandlers(stats));
  if (options.planRoutes ?? options.statsRoutes === true) handlers.push(...planRouteHandlers(plans));
  const bridge = await serveHandlersWithDirectRoute(
    handlers,
    {
      host: options.host,
      port: options.port,
      onUnhandled: (request) => unknownPathResponse(stats, request),
      maxBodyBytes: options.maxBodyBytes,
    },
    directRoute,
  );
  const backend = {
    url: bridge.url,
    plans,
    async close(): Promise<void> {
      shutdown.abort();
      await bridge.close();
    },
  };
  return exposeStats(backend, stats);
}
