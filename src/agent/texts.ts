// The fixed conversation of the weather verify agent: prompts, the get_weather tool and canned tool results.
// The mock backend's weatherScript keys its replies on these exact strings, so both sides import them from here.
import type { ChatMessage, ToolSpec } from "../tokenizer/types";

/** System prompt of the weather assistant (SPEC §10). */
const WEATHER_SYSTEM_PROMPT =
  "You are a weather assistant. Call the get_weather tool whenever the user asks about the weather in a city. " +
  "Handle one question at a time and wait for the next user message; do not summarize before you are asked to. " +
  "When asked for a summary, put it inside <final_answer>...</final_answer> tags.";

/** The opening user question. */
export const WEATHER_USER_QUESTION = "What's the weather in Beijing?";

/** The user follow-up appended by the `append_user` step. */
export const USER_FOLLOWUP_TEXT = "Now check the weather in Shanghai.";

/** The system reminder appended by the `append_system` step. */
export const SYSTEM_REMINDER_TEXT = "Reminder: from here on, reply in one sentence and leave out pleasantries.";

/** The user request appended by the `force_final` step. */
export const FORCE_FINAL_TEXT = "Summarize every result so far inside <final_answer>...</final_answer> tags.";

/** The two assistant messages injected by the `append_assistant` step. */
export const ASSISTANT_INPUT_TEXTS: readonly [string, string] = [
  "Earlier result for Beijing: 22 degrees Celsius, sunny.",
  "Earlier result for Shanghai: 30 degrees Celsius, rainy.",
];

/** The user request that follows the injected assistant messages. */
export const ASSISTANT_INPUT_FOLLOWUP_TEXT = "Give a one-sentence summary of the two results above and do not call a tool.";

/** Text of the message spliced in when a tool-result step finds no tool call (append_tool / append_user modes). */
export const TOOL_CALL_FAILURE_TEXT = "The previous assistant turn contained no parseable tool call. Please call the tool again with valid arguments.";

/** Canned `get_weather` results; the n-th tool result of a trajectory uses entry n mod 4. */
export const MOCK_TOOL_RESULTS: readonly string[] = [
  '{"temperature_celsius": 22, "condition": "sunny"}',
  '{"temperature_celsius": 15, "condition": "cloudy"}',
  '{"temperature_celsius": 30, "condition": "rainy"}',
  '{"temperature_celsius": 8, "condition": "snowy"}',
];

/** The single tool the agent advertises, in OpenAI function-tool form. */
export const WEATHER_TOOLS: readonly ToolSpec[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Return the current weather for a city.",
      parameters: {
        type: "object",
        properties: {
          location: { type: "string", description: "Name of the city, for example Beijing" },
        },
        required: ["location"],
      },
    },
  },
];

/** A fresh copy of the (system, user) opening every trajectory starts from. */
export function buildInitialMessages(): ChatMessage[] {
  return [
    { role: "system", content: WEATHER_SYSTEM_PROMPT },
    { role: "user", content: WEATHER_USER_QUESTION },
  ];
}
