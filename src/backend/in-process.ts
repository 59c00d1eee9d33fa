// The mock backend intercepted in-process with msw's setupServer, for code under test that calls `fetch`.
// No port is bound: requests to `url` never leave the process (undici Pool/request clients are not seen).
import { setMaxListeners } from "node:events";
import { setupServer } from "msw/node";
import type { RequestHandler } from "msw";
import type { Tokenizer } from "../tokenizer/types";
import { loadMockTokenizer, resolveMockFormats, type MockModelChoice } from "./mock-model";
import { buildBackendHandlers, type BackendOptions } from "./handlers";
import { BackendStatsRecorder, exposeStats, type BackendStats } from "./stats";

/** Default origin the in-process backend answers on. */
export const IN_PROCESS_BACKEND_ORIGIN = "http://sglang-mock.localhost:30000";

/** Options of {@link useMockBackend}. */
export type InProcessBackendOptions = Omit<BackendOptions, "tokenizer" | "origin" | "signal" | "formats" | "stopToken"> &
  MockModelChoice & {
    /** Tokenizer to use; when absent the family's (`titoModel`, default qwen3) is loaded on the first request. */
    tokenizer?: Tokenizer;
    /** Origin the handlers answer on (default {@link IN_PROCESS_BACKEND_ORIGIN}); other traffic passes through. */
    origin?: string;
  };

/** An in-process mock backend. Call `listen()` before the requests (e.g. in beforeAll) and `close()` after. */
export interface InProcessMockBackend extends BackendStats {
  /** Base URL to point the code under test at. */
  readonly url: string;
  /** The origin-bound handlers, for adding to a setupServer you already run (`server.use(...handlers)`). */
  readonly handlers: readonly RequestHandler[];
  /** Starts intercepting (unmatched requests pass through untouched). */
  listen(): void;
  /** Stops intercepting and ends pending latency waits. */
  close(): void;
}

/**
 * Builds the backend handlers bound to one origin and an msw `setupServer` for them. Only one setupServer
 * may intercept at a time in a process; when a test already has one, use `handlers` instead of `listen()`.
 */
export function useMockBackend(options: InProcessBackendOptions): InProcessMockBackend {
  const origin = new URL(options.origin ?? IN_PROCESS_BACKEND_ORIGIN).origin;
  const stats = options.stats ?? new BackendStatsRecorder();
  let shutdown = unboundedController();
  const { formats, stopToken } = resolveMockFormats(options);
  const tokenizer = options.tokenizer ?? (() => loadMockTokenizer(options));
  const { handlers } = buildBackendHandlers({
    ...options,
    tokenizer,
    formats,
    stopToken,
    stats,
    origin,
    get signal() {
      return shutdown.signal;
    },
  });
  let server: ReturnType<typeof setupServer> | undefined;
  const backend = {
    url: origin,
    handlers,
    listen(): void {
      if (server) return;
      const started = setupServer(...handlers);
      started.listen({ onUnhandledRequest: "bypass" });
      server = started;
    },
    close(): void {
      shutdown.abort();
      server?.close();
      server = undefined;
      shutdown = unboundedController();
    },
  };
  return exposeStats(backend, stats);
}

/** An AbortController whose signal accepts any number of listeners (one per pending latency wait). */
function unboundedController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
