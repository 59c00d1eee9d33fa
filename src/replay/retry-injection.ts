// Where a replay injects retries into a recorded conversation, and which: the fuzz grammar's pure and divergent
// retries and the weather agent's three tool-call failure modes. Pure and reproducible from (seed, conversation index).
import { DEFAULT_TITO_MODEL, getTitoFamily } from "../tokenizer/families/registry";
import { toolCallsOf } from "./conversation-check";
import type { RecordedConversation } from "./types";

/** One retry schedule: what happens before the recorded reply is finally generated. */
export type RetryKind = "pure_retry" | "divergent_retry" | "tool_call_failure_rollback" | "tool_call_failure_append_tool" | "tool_call_failure_append_user";

/** The retry schedules a replay can inject before a recorded reply. */
export const RETRY_KINDS: readonly RetryKind[] = [
  "pure_retry",
  "divergent_retry",
  "tool_call_failure_rollback",
  "tool_call_failure_append_tool",
  "tool_call_failure_append_user",
];

/**
 * The schedules a family can replay: all of them, but `tool_call_failure_append_tool` for a family whose prompts come
 * from an official encoder (DeepSeek V3.2 / V4), which refuses a tool result after a reply without tool calls ("No
 * tool calls but found tool output"), on both servers as in miles.
 */
export function retryKindsFor(titoModel: string | undefined): readonly RetryKind[] {
  const family = getTitoFamily(titoModel ?? DEFAULT_TITO_MODEL);
  return family.template.kind === "encoder" ? RETRY_KINDS.filter((kind) => kind !== "tool_call_failure_append_tool") : RETRY_KINDS;
}

/** A retry injected at one recorded reply. */
export interface RetryInjection {
  /** Message index of the recorded assistant reply the retry precedes. */
  turn: number;
  /** Which schedule. */
  kind: RetryKind;
  /** Picks the injected texts from the fuzz pools. */
  variant: number;
}

/** How retries are drawn. */
export interface RetrySettings {
  /** The run's seed: with the conversation index it decides every injection. */
  seed: number;
  /** Chance that a recorded reply gets a retry before it, from 0 to 1 (default 0.5). */
  rate?: number;
}

/** The default `--retry-rate`. */
export const DEFAULT_RETRY_RATE = 0.5;

/** Roles of a last request message a divergent retry may rephrase (an assistant input is left as recorded). */
const REPHRASED_ROLES: readonly string[] = ["user", "tool", "system"];

/** mulberry32: a small seeded generator, so a draw never depends on anything but its seed. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One 32-bit seed from the run's seed and the conversation index (independent of shards, files and concurrency). */
function conversationSeed(seed: number, index: number): number {
  let h = Math.imul((seed | 0) ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  return (h ^ (h >>> 15)) >>> 0;
}

/**
 * The retries of one conversation: each recorded reply at `turns` gets one with probability `rate`, chosen among the
 * schedules that apply there. The tool-call failure modes (the agent's answer to a reply that should have called a
 * tool) apply to replies that call tools; a divergent retry rephrases the request's last message, so it needs a user,
 * tool or system message there. Every recorded reply is eligible, the first one included: a reply dropped there leaves
 * a v2 root leaf that miles' picker keeps by design, and the replay sets its sample aside (`setAsideDroppedRoots`).
 * Same seed and index, same injections.
 */
export function drawRetries(
  conversation: RecordedConversation,
  turns: readonly number[],
  settings: RetrySettings,
  allowed: readonly RetryKind[] = RETRY_KINDS,
): RetryInjection[] {
  const rate = settings.rate ?? DEFAULT_RETRY_RATE;
  const random = generator(conversationSeed(settings.seed, conversation.index));
  const out: RetryInjection[] = [];
  for (const turn of turns) {
    const roll = random();
    const pick = random();
    const variant = Math.floor(random() * 6);
    if (roll >= rate) continue;
    const callsTools = toolCallsOf(conversation.messages[turn]).length > 0;
    const rephrasable = turn > 0 && REPHRASED_ROLES.includes(conversation.messages[turn - 1].role);
    const kinds = allowed.filter((kind) => {
      if (kind === "divergent_retry") return rephrasable;
      if (kind === "pure_retry") return true;
      return callsTools;
    });
    if (kinds.length === 0) continue;
    out.push({ turn, kind: kinds[Math.min(kinds.length - 1, Math.floor(pick * kinds.length))], variant });
  }
  return out;
}

/** A retry in words (the failure text prints them). */
export function describeRetry(injection: RetryInjection): string {
  switch (injection.kind) {
    case "pure_retry":
      return `message ${injection.turn}: a first reply dropped and the request resent (pure retry)`;
    case "divergent_retry":
      return `message ${injection.turn}: a first reply to a rephrased last message, then the recorded request (divergent retry)`;
    case "tool_call_failure_rollback":
      return `message ${injection.turn}: a malformed tool call dropped and the request resent (tool-call failure, rollback)`;
    case "tool_call_failure_append_tool":
      return `message ${injection.turn}: a malformed tool call answered by a failure tool message (tool-call failure, append_tool)`;
    case "tool_call_failure_append_user":
      return `message ${injection.turn}: a malformed tool call answered by a failure user message (tool-call failure, append_user)`;
  }
}
