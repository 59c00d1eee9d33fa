// The live fuzz agent: plays one schedule against one session server over HTTP and records what the server did.
// The mock answers from the schedule's plan, registered under the session id before the first call.
import type { Dispatcher } from "undici";
import { AgentChatError, postChatCompletion } from "../agent/chat-client";
import { PLAN_CALL_HEADER } from "../backend/reply-plans";
import type { PlanSink } from "../backend/plan-routes";
import { applyDriverMetadata } from "../fixture/driver-metadata";
import { abortedCopy, decodeCollectedReply } from "../fixture/reply-decoding";
import { SessionClient } from "../fixture/session-client";
import type { SessionParityRun, SessionSnapshot } from "../fixture/types";
import type { SessionServerVersion } from "../server/types";
import { Sample, type JsonObject } from "../wire/sample";
import { applyAction, historyMessages, initialHistory, type HistoryEntry } from "./conversation";
import { schedulePlan } from "./plan";
import { FUZZ_TOOLS, scheduleCalls, type AgentSchedule } from "./schedule";

/** What one chat call did. */
interface CallObservation {
  /** The call's index in the schedule. */
  call: number;
  /** HTTP status (0: transport failure). */
  status: number;
  /** The error body of a refused call. */
  error?: string;
  /** `finish_reason` of an accepted call. */
  finishReason?: string | null;
}

/** Everything one server did with one schedule. */
export interface ServerObservation {
  version: SessionServerVersion;
  calls: CallObservation[];
  /** Snapshot, decoded samples and metadata, shaped like a parity run (so the payload matchers read it). */
  run: SessionParityRun;
}

/** Where one schedule runs. */
export interface DriveContext {
  version: SessionServerVersion;
  serverUrl: string;
  plans: PlanSink;
  dispatcher?: Dispatcher;
  /** Varies the planned log-probs between schedules of one fuzz run. */
  salt?: number;
}

/** Sampling parameters of every fuzz call. */
const FUZZ_SAMPLING = { temperature: 0, max_tokens: 64 } as const;

/** The agent metadata a fuzz schedule reports at collect time (v2 merges it server-side, v1 on the driver). */
function fuzzAgentMetadata(schedule: AgentSchedule): JsonObject {
  return { fuzz_calls: scheduleCalls(schedule).length, fuzz_steps: schedule.steps.map((step) => step.action.kind) };
}

/** The input sample a fuzz run's payload is decoded onto. */
function fuzzInputSample(schedule: AgentSchedule): Sample {
  return new Sample({
    index: 0,
    rollout_id: 0,
    prompt: historyMessages(initialHistory(schedule)).map((m) => ({ role: m.role, content: String(m.content) })),
    metadata: { source: "fuzz" },
  });
}

/**
 * Plays `schedule` against `<serverUrl>/sessions/<new id>`: every call in order (a refused call leaves the history as
 * it was, without a reply), then `GET`, the samples op and `DELETE`. Transport failures are recorded, not thrown.
 * @throws SessionRequestError when the session cannot be created, Error when the plan cannot be registered.
 */
export async function driveSchedule(context: DriveContext, schedule: AgentSchedule): Promise<ServerObservation> {
  const client = new SessionClient(context.serverUrl.replace(/\/+$/, ""), context.dispatcher);
  const sessionId = await client.createSession();
  const inputSample = fuzzInputSample(schedule);
  const calls: CallObservation[] = [];
  let preCollect: SessionSnapshot = { session_id: sessionId, records: [], metadata: {} };
  const failedRun = (stage: string, error: unknown): SessionParityRun => ({
    version: context.version,
    samples: [abortedCopy(inputSample)],
    sessionMetadata: {},
    preCollect,
    emptyReason: null,
    failure: `${stage} failed for session ${sessionId}: ${error instanceof Error ? error.message : String(error)}`,
  });
  try {
    await context.plans.register(sessionId, schedulePlan(schedule, context.salt ?? 0));
    let history: HistoryEntry[] = initialHistory(schedule);
    const specs = scheduleCalls(schedule);
    for (const [index, spec] of specs.entries()) {
      if (index > 0) history = applyAction(history, schedule.steps[index - 1].action);
      const body: Record<string, unknown> = { messages: historyMessages(history), ...FUZZ_SAMPLING };
      if (spec.tools) body.tools = FUZZ_TOOLS;
      try {
        const reply = await postChatCompletion({
          url: `${client.sessionUrl(sessionId)}/v1/chat/completions`,
          body: body,
          stream: spec.stream,
          dispatcher: context.dispatcher,
          step: `call ${index}`,
          headers: { [PLAN_CALL_HEADER]: String(index) },
        });
        calls.push({ call: index, status: 200, finishReason: reply.finishReason });
        history = [...history, { message: reply.message, generatedBy: index }];
      } catch (error) {
        if (!(error instanceof AgentChatError)) throw error;
        calls.push({ call: index, status: error.status, error: error.body });
      }
    }
    let stage = "snapshot";
    try {
      preCollect = await client.snapshot(sessionId);
      stage = "collect";
      const metadata = fuzzAgentMetadata(schedule);
      const payload = await client.collect(sessionId, { max_seq_len: schedule.maxSeqLen, ...(context.version === "v2" ? { metadata } : {}) });
      stage = "decode";
      const reply = decodeCollectedReply(payload, inputSample, context.version);
      const samples = reply.samples.length === 0 ? [] : applyDriverMetadata(context.version, reply.samples, inputSample, metadata, reply.sessionMetadata);
      return {
        version: context.version,
        calls,
        run: { version: context.version, samples, sessionMetadata: reply.sessionMetadata, preCollect, emptyReason: reply.emptyReason },
      };
    } catch (error) {
      return { version: context.version, calls, run: failedRun(stage, error) };
    }
  } finally {
    await client.deleteSession(sessionId).catch(() => undefined);
    await context.plans.unregister(sessionId).catch(() => undefined);
  }
}
