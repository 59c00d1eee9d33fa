// A schedule's replies as the mock plays them: completion text, finish reason, weight version, log-prob seed per call.
// Also predicts the assistant message the agent gets back (what the SGLang-style parser makes of the text).
import type { PlannedReply } from "../backend/reply-plans";
import type { ChatMessage } from "../tokenizer/types";
import { FUZZ_TEXTS, pick, scheduleCalls, type AgentSchedule, type FuzzCall, type FuzzReply } from "./schedule";

function toolCallBlock(city: string): string {
  return `<tool_call>\n{"name": "get_weather", "arguments": {"location": "${city}"}}\n</tool_call>`;
}

/** The completion text of a reply. */
function replyText(reply: FuzzReply): string {
  switch (reply.kind) {
    case "text":
      return pick(FUZZ_TEXTS.replies, reply.variant);
    case "tool_calls":
      return `Let me look that up.\n${reply.cities.map((city) => toolCallBlock(pick(FUZZ_TEXTS.cities, city))).join("\n")}`;
    case "malformed_tool_call":
      return pick(FUZZ_TEXTS.malformed, reply.variant);
    case "reasoning":
      return pick(FUZZ_TEXTS.reasoning, reply.variant);
    case "length":
      return pick(FUZZ_TEXTS.truncated, reply.variant);
  }
}

/** Weight version of call `index` (records and samples name their call by it). */
function weightVersionOf(index: number): string {
  return `w${index}`;
}

/** The call a weight version names, or null. */
export function callOfWeightVersion(version: unknown): number | null {
  return typeof version === "string" && /^w\d+$/.test(version) ? Number(version.slice(1)) : null;
}

/** The mock plan of a schedule: one reply per call index. `salt` varies the log-probs between schedules. */
export function schedulePlan(schedule: AgentSchedule, salt = 0): PlannedReply[] {
  return scheduleCalls(schedule).map((call, index) => ({
    text: replyText(call.reply),
    ...(call.reply.kind === "length" ? { finish_reason: "length" as const } : {}),
    weight_version: weightVersionOf(index),
    logprob_seed: salt * 1000 + index * 37 + 11,
  }));
}

/** The assistant message the agent receives for a call (content and tool calls as the parser splits them). */
export function predictedAssistantMessage(call: FuzzCall): { message: ChatMessage; finishReason: string } {
  const reply = call.reply;
  if (reply.kind === "tool_calls" && call.tools) {
    return {
      message: {
        role: "assistant",
        content: "Let me look that up.",
        tool_calls: reply.cities.map((city, i) => ({
          id: `call${String(i).padStart(5, "0")}`,
          type: "function",
          function: { name: "get_weather", arguments: JSON.stringify({ location: pick(FUZZ_TEXTS.cities, city) }).replace(":", ": ") },
        })),
      },
      finishReason: "tool_calls",
    };
  }
  return { message: { role: "assistant", content: replyText(reply), tool_calls: null }, finishReason: reply.kind === "length" ? "length" : "stop" };
}
