// The replay as a fixture function: recorded conversations through one session-server version, returned as
// parity runs (one per conversation, corpus order) that the parity matchers compare with REPLAY_PARITY_OPTIONS.
import { Agent } from "undici";
import { resolveMockFormats } from "../backend/mock-model";
import { localPlanSink, remotePlanSink, type PlanSink } from "../backend/plan-routes";
import type { SessionParityRun } from "../fixture/types";
import type { SessionServerOptions } from "../server/session-server";
import type { SessionServerVersion } from "../server/types";
import type { Sample } from "../wire/sample";
import type { ChatTemplateSource } from "../tokenizer/families/model-defaults";
import { unrenderableReason } from "./conversation-check";
import { readCorpus } from "./corpus-files";
import { parseCorpusLine } from "./corpus-line";
import { driveConversation } from "./drive-conversation";
import { buildReplayPlan } from "./replay-plan";
import { retryKindsFor, type RetryInjection, type RetrySettings } from "./retry-injection";
import type { CorpusEntry, RecordedConversation } from "./types";

/** Options of {@link replayConversations}. */
export interface ReplayConversationsOptions {
  /** Corpus file(s): `.jsonl` or `.jsonl.gz`, miles trajectory dump rows or OpenAI chat records (give this or `conversations`). */
  file?: string | readonly string[];
  /** Conversations given inline: records (`{ messages, tools? }` or dump rows) or their JSON lines. */
  conversations?: ReadonlyArray<string | Record<string, unknown>>;
  /** Which session-server protocol to replay through. */
  version: SessionServerVersion;
  /** Inject retries at recorded replies; the same settings give both versions the same retries. */
  retries?: RetrySettings;
  /** A `session-parity mock` the server calls (default: an embedded mock, started and stopped here). */
  backendUrl?: string | null;
  /** The session server to replay through (it must call `backendUrl`; default: an embedded reference server). */
  sessionServerUrl?: string;
  /** Options of the embedded server (e.g. a `samplePicker` under test). */
  server?: Omit<SessionServerOptions, "version" | "backendUrl">;
  /** TITO family of the embedded mock and server, and of the wire format the recorded replies are written in (default qwen3). */
  titoModel?: string;
  /** Tokenizer checkpoint directory of the embedded mock and server. */
  hfCheckpoint?: string;
  /** Chat template file replacing the checkpoint's (`default` family only). */
  chatTemplatePath?: string;
  /** Default chat-template kwargs of the embedded server (default `{}`). */
  chatTemplateKwargs?: Record<string, unknown>;
  /** Template source of the embedded mock and server: `family` (default, miles' production) or `checkpoint` (`_serve_session`'s). */
  chatTemplate?: ChatTemplateSource;
  /** Conversations in flight at once (default 8). */
  concurrency?: number;
}

/** One replayed conversation as a parity run, with where it came from and what was injected. */
export interface ReplayedConversationRun extends SessionParityRun {
  /** The conversation's index in the corpus (non-blank lines over all files). */
  conversation: number;
  /** Where it was read (`inline` for `conversations`) and its 1-based line. */
  source: { file: string; line: number };
  /** The retries injected before recorded replies. */
  retries: RetryInjection[];
  /**
   * v2 only: samples left out of `samples` because they are attempts dropped at the first recorded reply, root leaves
   * that miles' default picker keeps by design while v1 rolls them back (empty for v1 and without such retries).
   */
  setAside: Sample[];
}

/** A corpus that holds a line or a conversation the replay cannot use: every problem, by line and message. */
export class ReplayCorpusError extends Error {
  constructor(readonly problems: string[]) {
    super(`the corpus cannot be replayed as it is:\n${problems.map((problem) => `  ${problem}`).join("\n")}`);
    this.name = "ReplayCorpusError";
  }
}

async function* inline(conversations: ReadonlyArray<string | Record<string, unknown>>): AsyncGenerator<CorpusEntry> {
  let index = 0;
  for (const [i, item] of conversations.entries()) {
    const entry = parseCorpusLine(typeof item === "string" ? item : JSON.stringify(item), { file: "inline", line: i + 1, index });
    if (entry === null) continue;
    index += 1;
    yield entry;
  }
}

/** Every conversation of the corpus, or a ReplayCorpusError naming each malformed line and unrenderable conversation. */
async function loadConversations(options: ReplayConversationsOptions): Promise<RecordedConversation[]> {
  if ((options.file === undefined) === (options.conversations === undefined)) throw new Error("replayConversations: give either `file` or `conversations`");
  const source = options.file !== undefined ? readCorpus(typeof options.file === "string" ? [options.file] : options.file) : inline(options.conversations!);
  const out: RecordedConversation[] = [];
  const problems: string[] = [];
  for await (const entry of source) {
    if (entry.kind === "malformed") {
      problems.push(`${entry.malformed.file}:${entry.malformed.line}: ${entry.malformed.problem}`);
      continue;
    }
    const problem = unrenderableReason(entry.conversation);
    if (problem === null) out.push(entry.conversation);
    else
      problems.push(
        `${entry.conversation.file}:${entry.conversation.line}: conversation ${entry.conversation.index}, message ${problem.messageIndex}: ${problem.reason}`,
      );
  }
  if (problems.length > 0) throw new ReplayCorpusError(problems);
  return out;
}

/**
 * Replays recorded conversations through one session-server version (an embedded reference server on an embedded
 * mock unless URLs are given) and returns one run per conversation in corpus order. A call the server refuses ends
 * that conversation and sets the run's `failure` naming the call and message.
 * @throws ReplayCorpusError when a line is malformed or a conversation cannot be rendered; Error on bad options
 */
export async function replayConversations(options: ReplayConversationsOptions): Promise<ReplayedConversationRun[]> {
  const conversations = await loadConversations(options);
  if (options.sessionServerUrl !== undefined && (options.backendUrl ?? undefined) === undefined) {
    throw new Error("replayConversations: `sessionServerUrl` needs `backendUrl`, the session-parity mock that server calls");
  }
  const { formats } = resolveMockFormats({ titoModel: options.titoModel });
  const kinds = retryKindsFor(options.titoModel);
  const closers: Array<() => Promise<void>> = [];
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 64 });
  closers.push(() => dispatcher.destroy());
  try {
    let backendUrl = options.backendUrl ?? undefined;
    let plans: PlanSink;
    if (backendUrl === undefined) {
      const { startMockBackend } = await import("../backend/mock-backend");
      const mock = await startMockBackend({
        process: () => {
          throw new Error("the replay mock answers only sessions with a registered plan");
        },
        titoModel: options.titoModel,
        hfCheckpoint: options.hfCheckpoint,
        chatTemplatePath: options.chatTemplatePath,
        chatTemplateKwargs: options.chatTemplateKwargs,
        chatTemplate: options.chatTemplate,
      });
      closers.push(() => mock.close());
      backendUrl = mock.url;
      plans = localPlanSink(mock.plans);
    } else plans = remotePlanSink(backendUrl, dispatcher);
    let serverUrl = options.sessionServerUrl;
    if (serverUrl === undefined) {
      const { startSessionServer } = await import("../server/session-server");
      const server = await startSessionServer({
        logger: { warn(): void {} },
        titoModel: options.titoModel,
        hfCheckpoint: options.hfCheckpoint,
        chatTemplatePath: options.chatTemplatePath,
        chatTemplateKwargs: options.chatTemplateKwargs,
        chatTemplate: options.chatTemplate,
        ...options.server,
        version: options.version,
        backendUrl,
      });
      closers.push(() => server.close());
      serverUrl = server.url;
    }
    const runs: ReplayedConversationRun[] = new Array<ReplayedConversationRun>(conversations.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < conversations.length; i = next++) {
        const conversation = conversations[i];
        const plan = buildReplayPlan(conversation, formats, options.retries, kinds);
        const observed = await driveConversation({ version: options.version, serverUrl: serverUrl, plans, dispatcher }, conversation, plan);
        const refused = observed.calls.find((call) => call.status !== 200);
        const failure =
          observed.run.failure ??
          (refused === undefined
            ? undefined
            : `call ${refused.call} (conversation ${conversation.index}, message ${plan.calls[refused.call].turn}) answered ${refused.status}: ${refused.error ?? ""}`);
        runs[i] = {
          ...observed.run,
          ...(failure === undefined ? {} : { failure }),
          conversation: conversation.index,
          source: { file: conversation.file, line: conversation.line },
          retries: plan.retries,
          setAside: observed.setAside,
        };
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 8 }, () => worker()));
    return runs;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  }
}
