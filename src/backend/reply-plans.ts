// Per-session reply plans: the mock plays the model of a fuzz schedule, answering each session from its own plan.
// A plan is found by the routing key the session server forwards; the call index comes from a client header.
import type { FinishReason, ProcessResult } from "./types";

/** Header the fuzz agent sends with each chat call: the call's index in its schedule (forwarded by session servers). */
export const PLAN_CALL_HEADER = "X-Session-Parity-Call";

/** Header the session server adds upstream: the session id, which keys the plans. */
const PLAN_ROUTING_HEADER = "X-SMG-Routing-Key";

/** One planned completion, as JSON (so it can travel over the mock's control routes). */
export interface PlannedReply {
  /** Completion text (Qwen2.5 `<tool_call>` blocks become tool calls when the request has tools). */
  text: string;
  /** Finish reason (default "stop"; "tool_calls" is reported when a tool call parses). */
  finish_reason?: FinishReason;
  /** `meta_info.weight_version` of the reply. */
  weight_version: string;
  /** Seeds the reply's per-token log-probs (one of them is `-0.0`). */
  logprob_seed: number;
}

/** The deterministic log-probs of a planned reply of `count` tokens: exact binary fractions, one `-0`. */
export function plannedLogprobs(seed: number, count: number): number[] {
  const zeroAt = count === 0 ? -1 : Math.abs(seed) % count;
  const out: number[] = [];
  for (let p = 0; p < count; p += 1) out.push(p === zeroAt ? -0 : -(((Math.abs(seed) * 7919 + p * 104729) % 1000) + 1) / 1024);
  return out;
}

/** Checks a plan's replies (the control route answers 400 with this message). */
export function planProblem(replies: unknown): string | null {
  if (!Array.isArray(replies)) return "`replies` must be an array of planned replies";
  for (const [i, reply] of replies.entries()) {
    if (reply === null || typeof reply !== "object") return `replies[${i}] must be an object`;
    const r = reply as Record<string, unknown>;
    if (typeof r.text !== "string") return `replies[${i}].text must be a string`;
    if (typeof r.weight_version !== "string") return `replies[${i}].weight_version must be a string`;
    if (!Number.isSafeInteger(r.logprob_seed)) return `replies[${i}].logprob_seed must be an integer`;
    if (r.finish_reason !== undefined && !["stop", "tool_calls", "length", "abort"].includes(r.finish_reason as string)) {
      return `replies[${i}].finish_reason must be one of stop, tool_calls, length, abort`;
    }
  }
  return null;
}

interface StoredPlan {
  replies: readonly PlannedReply[];
  served: number;
}

/** The plans a mock backend answers from, keyed by routing key (session id). */
export class ReplyPlanRegistry {
  private readonly plans = new Map<string, StoredPlan>();

  /**
   * Registers (or replaces) the plan of one routing key.
   * @throws Error naming the problem when a reply is malformed.
   */
  register(routingKey: string, replies: readonly PlannedReply[]): void {
    const problem = planProblem(replies);
    if (problem !== null) throw new Error(`reply plan for ${JSON.stringify(routingKey)}: ${problem}`);
    this.plans.set(routingKey, { replies: replies.map((reply) => ({ ...reply })), served: 0 });
  }

  /** Forgets a plan; false when none was registered. */
  unregister(routingKey: string): boolean {
    return this.plans.delete(routingKey);
  }

  /** Number of registered plans. */
  get size(): number {
    return this.plans.size;
  }

  /**
   * The completion for a request, or undefined when its routing key has no plan. The reply is the plan's entry at
   * the call index the client sent, else the next one in order.
   * @throws Error when the index is outside the plan.
   */
  answer(routingKey: string | null, callIndex: number | null): ProcessResult | undefined {
    if (routingKey === null) return undefined;
    const plan = this.plans.get(routingKey);
    if (plan === undefined) return undefined;
    const index = callIndex ?? plan.served;
    plan.served += 1;
    const reply = plan.replies[index];
    if (reply === undefined) {
      throw new Error(`reply plan for ${JSON.stringify(routingKey)} has ${plan.replies.length} replies, none for call ${index}`);
    }
    return {
      text: reply.text,
      finish_reason: reply.finish_reason,
      meta_info: { weight_version: reply.weight_version },
      output_logprobs_seed: reply.logprob_seed,
    };
  }
}

/** Reads the routing key and the planned call index from request headers (index null when absent or not a number). */
export function planLookupKeys(headers: Headers): { routingKey: string | null; callIndex: number | null } {
  const raw = headers.get(PLAN_CALL_HEADER);
  const callIndex = raw !== null && /^\d{1,9}$/.test(raw.trim()) ? Number(raw.trim()) : null;
  return { routingKey: headers.get(PLAN_ROUTING_HEADER), callIndex };
}
