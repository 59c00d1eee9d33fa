// The replaying agent: plays one conversation's plan against one session server over HTTP, then collects.
// The mock answers from the plan registered under the session id; a refused call ends the conversation there.
import type { Dispatcher } from "undici";
import { AgentChatError, postChatCompletion } from "../agent/chat-client";
import type { PlanSink } from "../backend/plan-routes";
import { PLAN_CALL_HEADER } from "../backend/reply-plans";
import { applyDriverMetadata } from "../fixture/driver-metadata";
import { abortedCopy, decodeCollectedReply } from "../fixture/reply-decoding";
import { SessionClient } from "../fixture/session-client";
import type { SessionParityRun, SessionSnapshot } from "../fixture/types";
import type { SessionServerVersion } from "../server/types";
import { Sample, type JsonObject } from "../wire/sample";
import { setAsideDroppedRoots } from "./dropped-roots";
import { applyEdits, type ReplayHistoryEntry, type ReplayPlan } from "./replay-plan";
import type { RecordedConversation } from "./types";

/** What one chat call of a replay did. */
interface ReplayCallObservation {
  call: number;
  /** HTTP status (0: no reply). */
  status: number;
  /** The error body of a refused call. */
  error?: string;
}

/** Everything one server did with one conversation. */
export interface ReplayObservation {
  version: SessionServerVersion;
  calls: ReplayCallObservation[];
  /** Shaped like a parity run, so the payload matchers read it (v2: without the samples set aside). */
  run: SessionParityRun;
  /** v2's samples of attempts dropped at the first recorded reply, which miles' picker keeps as root leaves (v1: none). */
  setAside: Sample[];
}

/** Where a conversation is replayed. */
export interface ReplayDriveContext {
  version: SessionServerVersion;
  serverUrl: string;
  plans: PlanSink;
  dispatcher?: Dispatcher;
}

/** The input sample a replay's payload is decoded onto: the conversation's index and its first message. */
function replayInputSample(conversation: RecordedConversation): Sample {
  const first = conversation.messages.slice(0, Math.max(1, conversation.promptLength));
  return new Sample({
    index: conversation.index,
    rollout_id: conversation.index,
    prompt: JSON.parse(JSON.stringify(first)) as JsonObject[],
    metadata: { source: "replay" },
  });
}

/** Agent metadata reported at collect time: where the conversation came from (v2 merges it server-side, v1 on the driver). */
function replayAgentMetadata(conversation: RecordedConversation, plan: ReplayPlan): JsonObject {
  return { replay_index: conversation.index, replay_calls: plan.calls.length, replay_retries: plan.retries.map((retry) => retry.kind) };
}

/**
 * Replays `plan` against `<serverUrl>/sessions/<new id>`: each call after its history edits, every request with the
 * conversation's tools; the reply the server returns (not the recorded message) joins the history, as a real agent
 * sends back what it got. Then `GET`, the samples op and `DELETE`. Refusals and transport failures are recorded.
 * @throws SessionRequestError when the session cannot be created, Error when the plan cannot be registered.
 */
export async function driveConversation(context: ReplayDriveContext, conversation: RecordedConversation, plan: ReplayPlan): Promise<ReplayObservation> {
  const client = new SessionClient(context.serverUrl.replace(/\/+$/, ""), context.dispatcher);
  const sessionId = await client.createSession();
  const inputSample = replayInputSample(conversation);
  const calls: ReplayCallObservation[] = [];
  let preCollect: SessionSnapshot = { session_id: sessionId, records: [], metadata: {} };
  try {
    await context.plans.register(sessionId, plan.replies);
    let history: ReplayHistoryEntry[] = [];
    const url = `${client.sessionUrl(sessionId)}/v1/chat/completions`;
    for (const step of plan.calls) {
      history = applyEdits(history, step.edits);
      const body: Record<string, unknown> = { messages: history.map((entry) => entry.message), temperature: 0 };
      if (conversation.tools.length > 0) body.tools = conversation.tools;
      try {
        const reply = await postChatCompletion({
          url,
          body,
          stream: false,
          dispatcher: context.dispatcher,
          step: `call ${step.call} (message ${step.turn})`,
          headers: { [PLAN_CALL_HEADER]: String(step.call) },
        });
        calls.push({ call: step.call, status: 200 });
        history.push({ message: reply.message, generated: true });
      } catch (error) {
        if (!(error instanceof AgentChatError)) throw error;
        calls.push({ call: step.call, status: error.status, error: error.body });
        break;
      }
    }
    let stage = "snapshot";
    try {
      preCollect = await client.snapshot(sessionId);
      stage = "collect";
      const metadata = replayAgentMetadata(conversation, plan);
      const payload = await client.collect(sessionId, { max_seq_len: null, ...(context.version === "v2" ? { metadata } : {}) });
      stage = "decode";
      const reply = decodeCollectedReply(payload, inputSample, context.version);
      const all = reply.samples.length === 0 ? [] : applyDriverMetadata(context.version, reply.samples, inputSample, metadata, reply.sessionMetadata);
      const { kept: samples, setAside } = context.version === "v2" ? setAsideDroppedRoots(plan, all) : { kept: all, setAside: [] };
      return {
        version: context.version,
        calls,
        run: { version: context.version, samples, sessionMetadata: reply.sessionMetadata, preCollect, emptyReason: reply.emptyReason },
        setAside,
      };
    } catch (error) {
      const failure = `${stage} failed for session ${sessionId}: ${error instanceof Error ? error.message : String(error)}`;
      return {
        version: context.version,
        calls,
        run: { version: context.version, samples: [abortedCopy(inputSample)], sessionMetadata: {}, preCollect, emptyReason: null, failure },
        setAside: [],
      };
    }
  } finally {
    await client.deleteSession(sessionId).catch(() => undefined);
    await context.plans.unregister(sessionId).catch(() => undefined);
  }
}
