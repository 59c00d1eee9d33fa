// Ready-made process functions: the scripted weather run of the verify agent, and a plain echo.
// weatherScript keys on the agent's own texts (imported, never retyped) so both sides cannot drift apart.
import {
  ASSISTANT_INPUT_FOLLOWUP_TEXT,
  FORCE_FINAL_TEXT,
  MOCK_TOOL_RESULTS,
  SYSTEM_REMINDER_TEXT,
  TOOL_CALL_FAILURE_TEXT,
  USER_FOLLOWUP_TEXT,
} from "../agent/texts";
import { QWEN25_TOOL_CALLS } from "./formats/qwen25";
import type { MockFormats } from "./mock-model";
import type { ProcessFunction, ProcessResult } from "./types";
import { markRequestBlind } from "./request-blind";
import { MOCK_REASONING_TEXT, thinkingAfterUnopenedTail, thinkingAsThePromptAsks } from "./thinking-mode";

/** The weather call of one city, as data (each family's format spells it its own way). */
interface WeatherCall {
  lead: string;
  city: string;
}

function weatherToolCall(lead: string, city: string): string {
  return QWEN25_TOOL_CALLS.write(lead, [{ name: "get_weather", arguments: { location: city } }]);
}

/** The short reasoning a thinking family's model writes before each scripted reply. */
export const WEATHER_REASONING_TEXT = MOCK_REASONING_TEXT;

/** The scripted completions of the weather run, each with its fixed weight version. */
export const WEATHER_SCRIPT_REPLIES = {
  beijingCall: { text: weatherToolCall("Let me look up Beijing.", "Beijing"), meta_info: { weight_version: "w0" } },
  beijingSummary: { text: "Beijing is 22 degrees Celsius and sunny.", meta_info: { weight_version: "w1" } },
  shanghaiCall: { text: weatherToolCall("Let me look up Shanghai.", "Shanghai"), meta_info: { weight_version: "w2" } },
  shanghaiSummary: { text: "Shanghai is 15 degrees Celsius and cloudy.", meta_info: { weight_version: "w3" } },
  oneSentence: { text: "I will answer in one sentence.", meta_info: { weight_version: "w4" } },
  retryCall: { text: weatherToolCall("Retrying the Beijing lookup with valid arguments.", "Beijing"), meta_info: { weight_version: "w5" } },
  rainySummary: { text: "Shanghai is now 30 degrees Celsius and rainy.", meta_info: { weight_version: "w6" } },
  snowySummary: { text: "Shanghai is now 8 degrees Celsius and snowy.", meta_info: { weight_version: "w9" } },
  forcedFinal: {
    text: "<final_answer>Beijing is sunny at 22 degrees and Shanghai is cloudy at 15 degrees.</final_answer>",
    meta_info: { weight_version: "w7" },
  },
  assistantInputFinal: {
    text: "<final_answer>Beijing was sunny at 22 degrees and Shanghai was rainy at 30 degrees.</final_answer>",
    meta_info: { weight_version: "w8" },
  },
} as const satisfies Record<string, ProcessResult>;

/** The scripted calls behind the replies that call a tool. */
const WEATHER_CALLS: ReadonlyMap<ProcessResult, WeatherCall> = new Map<ProcessResult, WeatherCall>([
  [WEATHER_SCRIPT_REPLIES.beijingCall, { lead: "Let me look up Beijing.", city: "Beijing" }],
  [WEATHER_SCRIPT_REPLIES.shanghaiCall, { lead: "Let me look up Shanghai.", city: "Shanghai" }],
  [WEATHER_SCRIPT_REPLIES.retryCall, { lead: "Retrying the Beijing lookup with valid arguments.", city: "Beijing" }],
]);

/** Which scripted reply answers a prompt whose most recent key text is which. */
const WEATHER_RULES: ReadonlyArray<readonly [string, ProcessResult]> = [
  [ASSISTANT_INPUT_FOLLOWUP_TEXT, WEATHER_SCRIPT_REPLIES.assistantInputFinal],
  [FORCE_FINAL_TEXT, WEATHER_SCRIPT_REPLIES.forcedFinal],
  [SYSTEM_REMINDER_TEXT, WEATHER_SCRIPT_REPLIES.oneSentence],
  [TOOL_CALL_FAILURE_TEXT, WEATHER_SCRIPT_REPLIES.retryCall],
  [MOCK_TOOL_RESULTS[3], WEATHER_SCRIPT_REPLIES.snowySummary],
  [MOCK_TOOL_RESULTS[2], WEATHER_SCRIPT_REPLIES.rainySummary],
  [MOCK_TOOL_RESULTS[1], WEATHER_SCRIPT_REPLIES.shanghaiSummary],
  [USER_FOLLOWUP_TEXT, WEATHER_SCRIPT_REPLIES.shanghaiCall],
  [MOCK_TOOL_RESULTS[0], WEATHER_SCRIPT_REPLIES.beijingSummary],
];

function copyReply(reply: ProcessResult): ProcessResult {
  return { ...reply, meta_info: { ...reply.meta_info } };
}

/**
 * The reply in the mock's formats: tool calls in the family's tool-call format, and, when the generation prompt
 * opened a reasoning block (qwennext), a short reasoning closed before the content; when it leaves the block to the
 * model (Qwen3 with thinking on), the whole block first (thinking-mode.ts).
 */
function inFormats(reply: ProcessResult, formats: MockFormats | undefined, prompt: string): ProcessResult {
  const copy = copyReply(reply);
  if (formats === undefined) return copy;
  const call = WEATHER_CALLS.get(reply);
  if (call !== undefined && formats.toolCalls !== QWEN25_TOOL_CALLS) {
    copy.text = formats.toolCalls.write(call.lead, [{ name: "get_weather", arguments: { location: call.city } }]);
  } else if (call === undefined && formats.toolCalls.writeText !== undefined) copy.text = formats.toolCalls.writeText(copy.text);
  // DeepSeek: the prompt ends in <think> in thinking mode (the request then forces the parser into reasoning)
  const opened = formats.reasoningOpenedByPrompt || (formats.reasoningForcedByKwarg !== undefined && prompt.endsWith("<think>"));
  if (formats.reasoning !== null && opened) copy.text = formats.reasoning.write(WEATHER_REASONING_TEXT, copy.text, true);
  else if (formats.reasoning !== null && formats.reasoningForcedByKwarg !== undefined && thinkingAfterUnopenedTail(prompt)) {
    // a turn after a system (or assistant) tail in thinking mode: nothing opened the block, and the forced parser
    // reads up to </think>, so the model closes an empty one first
    copy.text = formats.reasoning.write("", copy.text, true);
  }
  return thinkingAsThePromptAsks(copy, prompt, formats);
}

/**
 * The weather run of SPEC §10, keyed on the key text that occurs last in the prompt (the newest message decides,
 * whatever the template's role markers look like): assistant-input follow-up → w8 final answer; force-final → w7
 * final answer; system reminder → w4 one-sentence promise; tool-call failure notice (tool or user message) → w5
 * Beijing tool call again; tool results 4, 3, 2 → w9 / w6 / w3 Shanghai summaries; user follow-up → w2 Shanghai
 * tool call; first tool result → w1 Beijing summary; none of them → w0 Beijing tool call. Every schedule cycle after
 * the first therefore gets a real tool round trip: its opening tool-result step finds the w4 promise (no tool call),
 * the failure mode recovers, and the follow-up is answered with a tool call again. The replies follow the mock's
 * formats (`context.formats`): the family's tool-call spelling, and a reasoning block first when the generation
 * prompt opened one. It never reads its request argument (marked so: a repeated body is then handed over as kept).
 */
export const weatherScript: ProcessFunction = markRequestBlind((prompt, _request, context) => {
  let latest: ProcessResult = WEATHER_SCRIPT_REPLIES.beijingCall;
  let latestAt = -1;
  for (const [needle, reply] of WEATHER_RULES) {
    const at = lastIndexAfter(prompt, needle, latestAt);
    if (at > latestAt) {
      latest = reply;
      latestAt = at;
    }
  }
  return inFormats(latest, context?.formats, prompt);
});

/**
 * `text.lastIndexOf(needle)` when that is greater than `after`, else -1: the same decision as comparing
 * `lastIndexOf` with `after`, found by forward searches that start past `after` (V8's indexOf skips ahead where
 * lastIndexOf compares at every position, and a needle absent after `after` costs only the tail's scan).
 */
export function lastIndexAfter(text: string, needle: string, after: number): number {
  if (needle.length === 0) {
    const at = text.lastIndexOf(needle);
    return at > after ? at : -1;
  }
  let at = text.indexOf(needle, Math.max(0, after + 1));
  if (at === -1) return -1;
  for (let next = text.indexOf(needle, at + 1); next !== -1; next = text.indexOf(needle, next + 1)) at = next;
  return at;
}

const USER_TURN = /<\|im_start\|>user\n([\s\S]*?)(?:<\|im_end\|>|$)/g;

/** Text of the last user turn of a rendered Qwen3 prompt (empty when there is none). */
export function lastUserTurn(prompt: string): string {
  let last = "";
  for (const match of prompt.matchAll(USER_TURN)) last = match[1];
  return last;
}

/** Answers `echo: <last user message>` (read from the rendered prompt, so `input_ids` requests work too; the request is never read). */
export const echoScript: ProcessFunction = markRequestBlind((prompt) => ({ text: `echo: ${lastUserTurn(prompt)}` }));
