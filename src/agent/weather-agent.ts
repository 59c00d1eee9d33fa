// The scripted weather verify agent: walks the driver schedule against one session, one chat call per step.
// Its retries (rollbacks) and role appends are what exercise a session server's trajectory handling.
import type { Dispatcher } from "undici";
import { ChatBodyWriter } from "./chat-body";
import { postChatCompletion, type ChatReply } from "./chat-client";
import { requestTarget, type RequestTarget } from "./whole-reply";
import { buildDriverSchedule, QWEN3_APPEND_ROLES, type DriverAction } from "./schedule";
import {
  ASSISTANT_INPUT_FOLLOWUP_TEXT,
  ASSISTANT_INPUT_TEXTS,
  buildInitialMessages,
  FORCE_FINAL_TEXT,
  MOCK_TOOL_RESULTS,
  SYSTEM_REMINDER_TEXT,
  TOOL_CALL_FAILURE_TEXT,
  USER_FOLLOWUP_TEXT,
  WEATHER_TOOLS,
} from "./texts";
import type { ChatMessage } from "../tokenizer/types";
import type { JsonValue } from "../wire/sample";

/** What a `tool_result` step does when the last assistant turn holds no tool call. */
export type ToolCallFailureMode = "rollback" | "append_tool" | "append_user";

/** All {@link ToolCallFailureMode} values. */
export const TOOL_CALL_FAILURE_MODES: readonly ToolCallFailureMode[] = ["rollback", "append_tool", "append_user"];

/** Most `rollback` fallbacks allowed in a row before the agent gives up. */
const MAX_CONSECUTIVE_FAILURE_ROLLBACKS = 3;

/** Sampling parameters copied into every chat request (`messages`, `tools` and `stream` are the agent's own). */
export type AgentSampling = { [key: string]: JsonValue };

/** Driver event names recorded in {@link WeatherAgentResult.driver_events}. */
type DriverEvent =
  | "initial"
  | "append_tool"
  | "append_user"
  | "append_system"
  | "rollback"
  | "force_final"
  | "append_assistant"
  | "tool_call_failure_rollback"
  | "tool_call_failure_append_tool"
  | "tool_call_failure_append_user";

/** The agent's return value; it is also the agent metadata sent to a v2 samples op (snake_case like the wire). */
export type WeatherAgentResult = {
  /** Every schedule step the agent took, in order (failure fallbacks included). */
  driver_events: DriverEvent[];
  /** Assistant turns popped locally (scheduled rollbacks and rollback fallbacks). */
  rollback_count: number;
  /** User messages appended (follow-ups, the assistant-input request, append_user fallbacks; not force_final). */
  user_count: number;
  /** System reminders appended. */
  system_count: number;
  /** Assistant messages injected as input. */
  assistant_input_count: number;
  /** Tool results appended, one per answered tool call. */
  tool_result_count: number;
  /** Tool calls the model made over every reply, rolled-back ones included. */
  tool_call_count: number;
};

/** Options of {@link runWeatherAgent}. */
export interface WeatherAgentOptions {
  /** The session's base URL, `<server>/sessions/<id>`; chat goes to `<baseUrl>/v1/chat/completions`. */
  baseUrl: string;
  /** Sampling parameters sent with every call (default none); read once, when the run starts. */
  sampling?: AgentSampling;
  /** Schedule cycles (default 1). */
  cycles?: number;
  /** Fallback when a tool-result step finds no tool call (default `"rollback"`). */
  toolCallFailureMode?: ToolCallFailureMode;
  /** Roles the server's template lets the agent append (default Qwen3's: tool, user, system, assistant). */
  allowedAppendRoles?: readonly string[];
  /** Stream every call as SSE (default true) or ask for plain JSON. */
  stream?: boolean;
  /** undici dispatcher for the calls; the global one when absent. */
  dispatcher?: Dispatcher;
}

/** Request keys the agent owns; sampling parameters may not set them. */
const RESERVED_SAMPLING_KEYS: readonly string[] = ["messages", "tools", "stream", "stream_options"];

/**
 * Checks sampling parameters before any call: a plain object that sets none of {@link RESERVED_SAMPLING_KEYS}.
 * @param where names the caller in the error (e.g. `runWeatherAgent`).
 * @throws Error naming the problem.
 */
export function checkAgentSampling(sampling: unknown, where: string): asserts sampling is AgentSampling {
  if (typeof sampling !== "object" || sampling === null || Array.isArray(sampling)) {
    throw new Error(
      `${where}: sampling must be an object of chat-completion parameters, got ${Array.isArray(sampling) ? "an array" : JSON.stringify(sampling)}`,
    );
  }
  const reserved = RESERVED_SAMPLING_KEYS.filter((key) => key in sampling);
  if (reserved.length > 0) throw new Error(`${where}: sampling must not set ${reserved.join(", ")} (the agent owns them)`);
}

/**
 * Runs the weather agent against one session: the initial call, then each scheduled action followed
 * by one chat call. Rollbacks pop the last assistant message locally, so the next request is shorter
 * than what the server stored.
 *
 * @throws Error on bad options (unknown mode or role, `append_user` without the user role, reserved sampling keys),
 *   {@link AgentChatError} when a chat call fails, and Error when the rollback fallback hits its cap.
 */
export async function runWeatherAgent(options: WeatherAgentOptions): Promise<WeatherAgentResult> {
  const allowedRoles = options.allowedAppendRoles ?? QWEN3_APPEND_ROLES;
  const schedule = buildDriverSchedule(allowedRoles, options.cycles ?? 1);
  const failureMode = options.toolCallFailureMode ?? "rollback";
  if (!TOOL_CALL_FAILURE_MODES.includes(failureMode)) {
    throw new Error(`runWeatherAgent: unknown toolCallFailureMode ${JSON.stringify(failureMode)}; use one of ${TOOL_CALL_FAILURE_MODES.join(", ")}`);
  }
  if (failureMode === "append_user" && !allowedRoles.includes("user")) {
    throw new Error(
      `runWeatherAgent: toolCallFailureMode "append_user" needs the "user" append role, allowed roles are ${JSON.stringify([...allowedRoles])}; ` +
        `use "rollback" or "append_tool" instead`,
    );
  }
  const sampling = options.sampling ?? {};
  checkAgentSampling(sampling, "runWeatherAgent");
  if (options.stream !== undefined && typeof options.stream !== "boolean") {
    throw new Error(`runWeatherAgent: stream must be true or false, got ${JSON.stringify(options.stream)}`);
  }

  const state = new AgentState();
  const chatUrl = `${options.baseUrl.replace(/\/+$/, "")}/v1/chat/completions`;
  // split once for the whole run; a URL that does not parse stays a string, and the first call reports it
  let target: string | RequestTarget = chatUrl;
  try {
    target = requestTarget(chatUrl);
  } catch {
    // reported by postChatCompletion below
  }
  // the part after the messages is spelled once, and each message once, when first sent (sampling is read here, once)
  const bodies = new ChatBodyWriter(WEATHER_TOOLS, sampling, options.stream ?? true);
  // one call's promise, awaited by the loop itself (no async layer of its own between the loop and the call)
  const chat = (step: string): Promise<ChatReply> =>
    postChatCompletion({ url: target, body: bodies.write(state.messages), stream: options.stream, dispatcher: options.dispatcher, step });

  state.acceptAssistant((await chat("initial")).message);
  state.events.push("initial");
  for (const [position, action] of schedule.entries()) {
    const step = `step ${position + 1} ${action}`;
    applyAction(state, action, failureMode, step);
    state.acceptAssistant((await chat(step)).message);
  }
  return state.result();
}

/** The agent's local conversation, counters and events. */
class AgentState {
  readonly messages: ChatMessage[] = buildInitialMessages();
  readonly events: DriverEvent[] = [];
  readonly counters = {
    rollback_count: 0,
    user_count: 0,
    system_count: 0,
    assistant_input_count: 0,
    tool_result_count: 0,
    tool_call_count: 0,
  };
  lastAssistant: ChatMessage | null = null;
  failureRollbacks = 0;

  acceptAssistant(message: ChatMessage): void {
    this.messages.push(message);
    this.lastAssistant = message;
    this.counters.tool_call_count += message.tool_calls?.length ?? 0;
  }

  popAssistant(step: string): void {
    const tail = this.messages[this.messages.length - 1];
    if (tail?.role !== "assistant") {
      throw new Error(`weather agent: cannot roll back at ${step}: the last message is ${tail ? `a ${tail.role} message` : "missing"}, not an assistant turn`);
    }
    this.messages.pop();
    this.counters.rollback_count += 1;
  }

  result(): WeatherAgentResult {
    return { driver_events: [...this.events], ...this.counters };
  }
}

function applyAction(state: AgentState, action: DriverAction, failureMode: ToolCallFailureMode, step: string): void {
  switch (action) {
    case "tool_result":
      appendToolResults(state, failureMode, step);
      return;
    case "user_followup":
      state.messages.push({ role: "user", content: USER_FOLLOWUP_TEXT });
      state.counters.user_count += 1;
      state.events.push("append_user");
      return;
    case "system_reminder":
      state.messages.push({ role: "system", content: SYSTEM_REMINDER_TEXT });
      state.counters.system_count += 1;
      state.events.push("append_system");
      return;
    case "rollback":
      state.popAssistant(step);
      state.events.push("rollback");
      return;
    case "force_final":
      state.messages.push({ role: "user", content: FORCE_FINAL_TEXT });
      state.events.push("force_final");
      return;
    case "assistant_input":
      for (const text of ASSISTANT_INPUT_TEXTS) state.messages.push({ role: "assistant", content: text });
      state.messages.push({ role: "user", content: ASSISTANT_INPUT_FOLLOWUP_TEXT });
      state.counters.assistant_input_count += ASSISTANT_INPUT_TEXTS.length;
      state.counters.user_count += 1;
      state.events.push("append_assistant");
      return;
  }
}

/** Answers every tool call of the last assistant turn, or applies the failure mode when there is none. */
function appendToolResults(state: AgentState, failureMode: ToolCallFailureMode, step: string): void {
  const toolCalls = state.lastAssistant?.tool_calls ?? [];
  if (toolCalls.length > 0) {
    state.failureRollbacks = 0;
    toolCalls.forEach((call, i) => {
      if (typeof call.id !== "string" || call.id === "") {
        throw new Error(`weather agent: ${step}: tool call ${i} of the last assistant turn has no id to answer: ${JSON.stringify(call)}`);
      }
      const result = MOCK_TOOL_RESULTS[(state.counters.tool_result_count + i) % MOCK_TOOL_RESULTS.length];
      state.messages.push({ role: "tool", content: result, tool_call_id: call.id });
    });
    state.counters.tool_result_count += toolCalls.length;
    state.events.push("append_tool");
    return;
  }
  switch (failureMode) {
    case "append_tool":
      state.messages.push({ role: "tool", tool_call_id: "none", content: TOOL_CALL_FAILURE_TEXT });
      state.events.push("tool_call_failure_append_tool");
      return;
    case "append_user":
      state.messages.push({ role: "user", content: TOOL_CALL_FAILURE_TEXT });
      state.counters.user_count += 1;
      state.events.push("tool_call_failure_append_user");
      return;
    case "rollback":
      state.failureRollbacks += 1;
      if (state.failureRollbacks > MAX_CONSECUTIVE_FAILURE_ROLLBACKS) {
        throw new Error(
          `weather agent: ${step}: the model answered without a tool call ${state.failureRollbacks} times in a row; ` +
            `the rollback fallback is capped at ${MAX_CONSECUTIVE_FAILURE_ROLLBACKS} consecutive retries ` +
            `(check the sampling, the tool spec, or use toolCallFailureMode "append_tool"/"append_user")`,
        );
      }
      state.popAssistant(step);
      state.events.push("tool_call_failure_rollback");
      return;
  }
}
