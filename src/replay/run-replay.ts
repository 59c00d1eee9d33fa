// Replays a corpus through v1 and v2: a bounded pool of conversations in flight (the corpus is pulled only as
// slots free up, so memory follows the concurrency, not the file), each judged as it completes.
import { resolveMockFormats, type MockFormats } from "../backend/mock-model";
import { probeHealth } from "../fixture/health-probe";
import { openFuzzEnvironment, type FuzzEnvironment, type FuzzEnvironmentOptions } from "../fuzz/environment";
import { replyTurns, unrenderableReason } from "./conversation-check";
import { driveConversation, type ReplayObservation } from "./drive-conversation";
import { judgeReplay, type ReplayVerdict } from "./judge";
import { buildReplayPlan, type ReplayPlan } from "./replay-plan";
import { retryKindsFor, type RetryInjection, type RetryKind, type RetrySettings } from "./retry-injection";
import type { CorpusEntry, CorpusFormat, CorpusPosition } from "./types";

/** Options of {@link replayCorpus}. */
export interface ReplayCorpusOptions extends FuzzEnvironmentOptions {
  /** Inject retries at recorded replies (none when absent). */
  retries?: RetrySettings;
  /** Conversations in flight at once, each on both servers (default 8). */
  concurrency?: number;
  /** Replay only the conversations of shard `index` of `count` (1-based, as `jest --shard`): index mod count = index - 1. */
  shard?: { index: number; count: number };
  /** Replay only these conversation indices. */
  only?: readonly number[];
  /** Servers already opened; left open. */
  environment?: FuzzEnvironment;
  /** Called with each conversation's result as it completes (in completion order), with both observations when it ran. */
  onResult?: (result: ReplayResult, observed: { v1: ReplayObservation; v2: ReplayObservation } | null) => void;
}

/** The outcome of one corpus line. */
export interface ReplayResult extends CorpusPosition {
  /** Null for a malformed line. */
  format: CorpusFormat | null;
  label: string | null;
  /** Messages in the conversation (0 for a malformed line). */
  messages: number;
  /** Recorded model replies replayed. */
  replies: number;
  /** Chat calls each server got (retries included). */
  calls: number;
  retries: RetryInjection[];
  /** v2 samples set aside: attempts dropped at the first recorded reply, root leaves miles' picker keeps by design. */
  setAside: number;
  verdict: ReplayVerdict;
}

/** The results of a replay, in conversation order. */
export interface ReplayOutcome {
  results: ReplayResult[];
  /** Chat calls sent over both servers. */
  requests: number;
  /** Where the servers were. */
  servers: { v1: string; v2: string };
  /** Each server's `GET /health` body, read before the first conversation (null when it answered none). */
  health: { v1: unknown; v2: unknown };
}

function errorVerdict(kind: string, cause: string, messageIndex: number | null, serverProblem = false): ReplayVerdict {
  return { status: "ERROR", kind, cause, messageIndex, failures: [], serverProblem };
}

/** Replays one entry through both servers of `environment` (the line's problem or the conversation's as an ERROR). */
async function replayEntry(
  environment: FuzzEnvironment,
  formats: MockFormats,
  entry: CorpusEntry,
  retries: RetrySettings | undefined,
  kinds: readonly RetryKind[],
): Promise<{ result: ReplayResult; observed: { v1: ReplayObservation; v2: ReplayObservation } | null }> {
  if (entry.kind === "malformed") {
    const { file, line, index, problem } = entry.malformed;
    const verdict = errorVerdict("malformed line", `${file}:${line}: ${problem}`, null);
    return { result: { file, line, index, format: null, label: null, messages: 0, replies: 0, calls: 0, retries: [], setAside: 0, verdict }, observed: null };
  }
  const conversation = entry.conversation;
  const base = {
    file: conversation.file,
    line: conversation.line,
    index: conversation.index,
    format: conversation.format,
    label: conversation.label,
    messages: conversation.messages.length,
  };
  const problem = unrenderableReason(conversation);
  if (problem !== null) {
    const verdict = errorVerdict(
      "unrenderable conversation",
      `conversation ${conversation.index}, message ${problem.messageIndex}: ${problem.reason}`,
      problem.messageIndex,
    );
    return { result: { ...base, replies: 0, calls: 0, retries: [], setAside: 0, verdict }, observed: null };
  }
  const plan: ReplayPlan = buildReplayPlan(conversation, formats, retries, kinds);
  const summary = { ...base, replies: replyTurns(conversation).length, calls: plan.calls.length, retries: plan.retries, setAside: 0 };
  try {
    const [v1, v2] = await Promise.all([
      driveConversation({ version: "v1", serverUrl: environment.v1Url, plans: environment.plans, dispatcher: environment.dispatcher }, conversation, plan),
      driveConversation({ version: "v2", serverUrl: environment.v2Url, plans: environment.plans, dispatcher: environment.dispatcher }, conversation, plan),
    ]);
    return { result: { ...summary, setAside: v2.setAside.length, verdict: judgeReplay(plan, v1, v2) }, observed: { v1, v2 } };
  } catch (error) {
    return { result: { ...summary, verdict: errorVerdict("server problem", (error as Error).message, null, true) }, observed: null };
  }
}

function selected(entry: CorpusEntry, options: ReplayCorpusOptions): boolean {
  const index = entry.kind === "malformed" ? entry.malformed.index : entry.conversation.index;
  if (options.shard !== undefined && index % options.shard.count !== options.shard.index - 1) return false;
  return options.only === undefined || options.only.includes(index);
}

/**
 * Replays every selected entry of `source` through v1 and v2 (embedded reference servers on an embedded mock unless
 * URLs are given), `concurrency` conversations at a time, and returns each one's result in conversation order.
 * @throws what opening the servers or reading the corpus throws (a file that cannot be read: CorpusFileError)
 */
export async function replayCorpus(source: AsyncIterable<CorpusEntry> | Iterable<CorpusEntry>, options: ReplayCorpusOptions = {}): Promise<ReplayOutcome> {
  const concurrency = options.concurrency ?? 8;
  const { formats } = resolveMockFormats({ titoModel: options.titoModel });
  const kinds = retryKindsFor(options.titoModel);
  const environment = options.environment ?? (await openFuzzEnvironment({ mockLogEntries: 0, ...options }));
  const readHealth = (url: string): Promise<unknown> =>
    probeHealth(url).then(
      (reply) => reply.body,
      () => null,
    );
  const health = { v1: await readHealth(environment.v1Url), v2: await readHealth(environment.v2Url) };
  const iterator = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
  const results: ReplayResult[] = [];
  let requests = 0;
  const read: { failure: Error | null } = { failure: null };
  const worker = async (): Promise<void> => {
    while (read.failure === null) {
      let next: IteratorResult<CorpusEntry>;
      try {
        next = await iterator.next();
      } catch (error) {
        read.failure ??= error instanceof Error ? error : new Error(String(error));
        return;
      }
      if (next.done === true) return;
      if (!selected(next.value, options)) continue;
      const { result, observed } = await replayEntry(environment, formats, next.value, options.retries, kinds);
      requests += observed === null ? 0 : observed.v1.calls.length + observed.v2.calls.length;
      results.push(result);
      options.onResult?.(result, observed);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, () => worker()));
  } finally {
    if (options.environment === undefined) await environment.close();
  }
  if (read.failure !== null) throw read.failure;
  results.sort((a, b) => a.index - b.index);
  return { results, requests, servers: { v1: environment.v1Url, v2: environment.v2Url }, health };
}
