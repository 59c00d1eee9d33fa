// The servers a fuzz run talks to: given URLs, or an embedded mock plus v1/v2 reference servers started here.
// Planted bugs and custom designs come in through the servers' own options (policy, picker, post-processor).
import type { ChatTemplateKwargs } from "../tokenizer/types";
import type { ChatTemplateSource } from "../tokenizer/families/model-defaults";
import { Agent } from "undici";
import { localPlanSink, remotePlanSink, type PlanSink } from "../backend/plan-routes";
import type { SessionServerOptions } from "../server/session-server";

/** Options of the embedded session servers (everything but the version and the backend). */
type EmbeddedServerOptions = Omit<SessionServerOptions, "version" | "backendUrl">;

/** Which servers to fuzz. Anything not given is started in this process (and stopped afterwards). */
export interface FuzzEnvironmentOptions {
  /**
   * A mock backend serving the plan control routes (`session-parity mock`); default an embedded mock. `null` means
   * the same as absent, so `startParityEnvironment()`'s `backendUrl` can be passed as it is.
   */
  backendUrl?: string | null;
  /** The v1 server to check (it must call `backendUrl`); default an embedded reference v1. */
  v1Url?: string;
  /** The v2 server to check (it must call `backendUrl`); default an embedded reference v2. */
  v2Url?: string;
  /** Options of the embedded v1 server (e.g. a `policy` under test). */
  v1Server?: EmbeddedServerOptions;
  /** Options of the embedded v2 server (e.g. `policy`, `samplePicker`, `samplePostprocessor`). */
  v2Server?: EmbeddedServerOptions;
  /** Tokenizer checkpoint directory of the embedded mock and servers (default the packaged Qwen3 files). */
  hfCheckpoint?: string;
  /** TITO family of the embedded mock and servers (default `"qwen3"`). */
  titoModel?: string;
  /** Chat template file replacing the checkpoint's (`default` family only). */
  chatTemplatePath?: string;
  /** Default chat-template kwargs of the embedded servers (default the package's one default, `{"enable_thinking": false}`). */
  chatTemplateKwargs?: ChatTemplateKwargs;
  /** Template source of the embedded mock and servers (`family` by default, or `checkpoint`). */
  chatTemplate?: ChatTemplateSource;
  /** Requests the embedded mock keeps in its stats log (default the mock's; a long replay keeps none, so memory stays flat). */
  mockLogEntries?: number;
}

/** Servers ready for fuzzing. */
export interface FuzzEnvironment {
  readonly v1Url: string;
  readonly v2Url: string;
  /** Where schedules register their plans. */
  readonly plans: PlanSink;
  /** The HTTP dispatcher of every fuzz request. */
  readonly dispatcher: Agent;
  /** Stops whatever was started here. */
  close(): Promise<void>;
}

/** A usage problem of the fuzz options (the CLI exits 2 on it). */
export class FuzzUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FuzzUsageError";
  }
}

const SILENT = { warn(): void {} };

/**
 * Starts what is missing: the mock (with its plan registry), then each absent session server on it.
 * @throws FuzzUsageError when a server URL is given without the backend it calls.
 */
export async function openFuzzEnvironment(options: FuzzEnvironmentOptions = {}): Promise<FuzzEnvironment> {
  if ((options.v1Url !== undefined || options.v2Url !== undefined) && (options.backendUrl ?? undefined) === undefined) {
    throw new FuzzUsageError("a v1/v2 server URL needs the backend URL it calls (the mock whose plans the fuzzer registers)");
  }
  const closers: Array<() => Promise<void>> = [];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  };
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 64 });
  closers.push(() => dispatcher.destroy());
  try {
    let backendUrl = options.backendUrl ?? undefined;
    let plans: PlanSink;
    if (backendUrl === undefined) {
      const { startMockBackend } = await import("../backend/mock-backend");
      const mock = await startMockBackend({
        process: () => {
          throw new Error("the fuzz mock answers only sessions with a registered plan");
        },
        titoModel: options.titoModel,
        hfCheckpoint: options.hfCheckpoint,
        chatTemplatePath: options.chatTemplatePath,
        chatTemplate: options.chatTemplate,
        maxLogEntries: options.mockLogEntries,
      });
      closers.push(() => mock.close());
      backendUrl = mock.url;
      plans = localPlanSink(mock.plans);
    } else {
      plans = remotePlanSink(backendUrl, dispatcher);
    }
    const { startSessionServer } = await import("../server/session-server");
    const start = async (version: "v1" | "v2", extra: EmbeddedServerOptions | undefined): Promise<string> => {
      const server = await startSessionServer({
        logger: SILENT,
        titoModel: options.titoModel,
        hfCheckpoint: options.hfCheckpoint,
        chatTemplatePath: options.chatTemplatePath,
        chatTemplate: options.chatTemplate,
        chatTemplateKwargs: options.chatTemplateKwargs,
        ...extra,
        version,
        backendUrl: backendUrl,
      });
      closers.push(() => server.close());
      return server.url;
    };
    const v1Url = options.v1Url ?? (await start("v1", options.v1Server));
    const v2Url = options.v2Url ?? (await start("v2", options.v2Server));
    return { v1Url, v2Url, plans, dispatcher, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
