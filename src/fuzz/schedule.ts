// What one fuzzed agent does in one session: the schedule's data types, its texts, and the steps in words.
// Pure data shared by the grammar, the model, the mock plan and the live agent; nothing here does I/O.

/** The model's reply to one call, as the schedule decides it. `variant` picks a text from a small pool (so texts repeat). */
export type FuzzReply =
  | { kind: "text"; variant: number }
  | { kind: "tool_calls"; cities: number[] }
  | { kind: "malformed_tool_call"; variant: number }
  | { kind: "reasoning"; variant: number }
  | { kind: "length"; variant: number };

/** What the agent does to its history before a call (the first call sends the initial messages). */
export type FuzzAction =
  | { kind: "user"; variant: number }
  | { kind: "system"; variant: number }
  | { kind: "assistant_input"; variant: number }
  | { kind: "tool_results"; variant: number }
  | { kind: "retry"; depth: number; divergent: boolean; variant: number };

/** One chat call: how it is sent and what the model answers. */
export interface FuzzCall {
  /** Ask for SSE (folded back by the agent) or plain JSON. */
  stream: boolean;
  /** Send the `get_weather` tool spec with the call (tool calls are parsed only then). */
  tools: boolean;
  /** What the mock answers. */
  reply: FuzzReply;
}

/** A step after the first call: an action on the history, then one call. */
export interface FuzzStep extends FuzzCall {
  action: FuzzAction;
}

/** Everything one agent does in one session, and how its samples are collected. */
export interface AgentSchedule {
  /** Start with a few-shot example (system, user, assistant, user) instead of (system, user). */
  fewShot: boolean;
  /** The first call. */
  first: FuzzCall;
  /** Every later step. */
  steps: FuzzStep[];
  /** `max_seq_len` of the collect (null: no truncation). */
  maxSeqLen: number | null;
}

/** Texts of the fuzz agent and its model; small pools so equal messages occur and tie rules get exercised. */
export const FUZZ_TEXTS = {
  system: "You are a weather assistant. Call get_weather for every city you are asked about.",
  question: "What's the weather in Beijing?",
  fewShotQuestion: "Example: is it raining in Oslo?",
  fewShotAnswer: "Example answer: Oslo is dry today.",
  users: ["Now check Shanghai.", "And what about Paris?", "Please answer in one sentence."],
  rephrased: ["Actually, check Tokyo instead.", "Rather: what's the weather in Lima?", "Be brief, please."],
  systems: ["Reminder: reply in one sentence.", "Reminder: use metric units."],
  injected: ["Earlier I noted that Beijing was sunny.", "Summary so far: two cities checked."],
  toolResults: ['{"temperature_celsius": 22, "condition": "sunny"}', '{"temperature_celsius": 15, "condition": "cloudy"}', '{"error": "city not found"}'],
  noToolCall: "No tool call was made; answer directly.",
  replies: ["The weather looks fine.", "It is sunny and 22 degrees.", "Shanghai is cloudy."],
  reasoning: ["<think>\nThe user wants the weather.\n</think>\n\nIt is mild today.", "<think>\nOne sentence suffices.\n</think>\n\nSunny."],
  truncated: ["The forecast for the coming week begins with", "Let me think about every city in"],
  malformed: ['Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"location": \n</tool_call>', "<tool_call>\nget_weather(Beijing)\n</tool_call>"],
  cities: ["Beijing", "Shanghai", "Paris"],
} as const;

/** Pick from a pool with a variant number of any size. */
export function pick<T>(pool: readonly T[], variant: number): T {
  return pool[Math.abs(variant) % pool.length];
}

/** The `get_weather` tool spec sent with calls that have `tools`. */
export const FUZZ_TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Get the current weather of a city.",
      parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
    },
  },
] as const;

/** Number of calls a schedule makes (the first one included). */
export function callCount(schedule: AgentSchedule): number {
  return 1 + schedule.steps.length;
}

/** The call specs in order (the first call, then each step's). */
export function scheduleCalls(schedule: AgentSchedule): FuzzCall[] {
  return [schedule.first, ...schedule.steps];
}

/** A reply in words. */
function describeReply(reply: FuzzReply): string {
  switch (reply.kind) {
    case "text":
      return `plain text ${JSON.stringify(pick(FUZZ_TEXTS.replies, reply.variant))}`;
    case "tool_calls":
      return `${reply.cities.length === 1 ? "a tool call" : `${reply.cities.length} tool calls`} (get_weather ${reply.cities.map((c) => pick(FUZZ_TEXTS.cities, c)).join(", ")})`;
    case "malformed_tool_call":
      return "a malformed tool call";
    case "reasoning":
      return "reasoning then text";
    case "length":
      return 'a reply cut off by finish_reason "length"';
  }
}

/** An action in words. */
function describeAction(action: FuzzAction): string {
  switch (action.kind) {
    case "user":
      return `appends the user message ${JSON.stringify(pick(FUZZ_TEXTS.users, action.variant))}`;
    case "system":
      return `appends the system reminder ${JSON.stringify(pick(FUZZ_TEXTS.systems, action.variant))}`;
    case "assistant_input":
      return `injects the assistant message ${JSON.stringify(pick(FUZZ_TEXTS.injected, action.variant))} and a user message`;
    case "tool_results":
      return 'answers the last reply\'s tool calls (one tool message each; one "none" result when there is none)';
    case "retry": {
      const what = action.depth === 1 ? "drops the last reply" : `rewinds ${action.depth} replies`;
      return action.divergent ? `${what} and rephrases the last user message (divergent retry)` : `${what} and resends (pure retry)`;
    }
  }
}

/** The schedule as numbered lines, one per call. */
export function describeSchedule(schedule: AgentSchedule): string[] {
  const lines: string[] = [];
  const call = (c: FuzzCall): string =>
    `call (${c.stream ? "streamed" : "not streamed"}, ${c.tools ? "with tools" : "no tools"}); the model answers ${describeReply(c.reply)}`;
  lines.push(`1. the agent opens with ${schedule.fewShot ? "a few-shot example (system, user, assistant, user)" : "system + user"}; ${call(schedule.first)}`);
  schedule.steps.forEach((step, i) => lines.push(`${i + 2}. the agent ${describeAction(step.action)}; ${call(step)}`));
  lines.push(`then collect with max_seq_len ${schedule.maxSeqLen === null ? "null" : schedule.maxSeqLen}`);
  return lines;
}
