// The verifier's pool of agent conversations: tool calls single and parallel, long chains, reminders, user turns, thinking.
// Our own scripts of what agents do (miles' pool is utils/test_utils/mock_trajectories.py); pure data plus classification.
import type { ChatMessage, ToolCall, ToolSpec } from "../tokenizer/types";
import type { ClassifiedTrajectory, VerifyTrajectory } from "./types";

function functionTool(name: string, description: string, properties: Record<string, unknown>, required: string[]): ToolSpec {
  return { type: "function", function: { name, description, parameters: { type: "object", properties, required } } };
}

const FORECAST_TOOL = functionTool(
  "get_forecast",
  "Forecast for a city on a given day",
  { city: { type: "string", description: "City name" }, day: { type: "string", enum: ["today", "tomorrow"] } },
  ["city"],
);
const CURRENCY_TOOL = functionTool(
  "convert_currency",
  "Convert an amount between two currencies",
  { amount: { type: "number" }, source: { type: "string" }, target: { type: "string" } },
  ["amount", "source", "target"],
);
const FLIGHTS_TOOL = functionTool(
  "find_flights",
  "List direct flights between two airports",
  { origin: { type: "string", description: "IATA code" }, destination: { type: "string", description: "IATA code" } },
  ["origin", "destination"],
);

const FORECAST_ONLY: readonly ToolSpec[] = [FORECAST_TOOL];
const TRAVEL_TOOLS: readonly ToolSpec[] = [FORECAST_TOOL, CURRENCY_TOOL, FLIGHTS_TOOL];

const SYSTEM: ChatMessage = { role: "system", content: "You are a travel planning assistant. Use the tools for facts." };
const REMINDER = "Reminder: keep each answer under two sentences.";

function call(id: string, name: string, args: Record<string, unknown>): ToolCall {
  return { id, type: "function", function: { name, arguments: args } };
}

function calls(content: string | null, toolCalls: ToolCall[], reasoning?: string): ChatMessage {
  const message: ChatMessage = { role: "assistant", content, tool_calls: toolCalls };
  if (reasoning !== undefined) message.reasoning_content = reasoning;
  return message;
}

function says(content: string, reasoning?: string): ChatMessage {
  return reasoning === undefined ? { role: "assistant", content } : { role: "assistant", content, reasoning_content: reasoning };
}

function result(id: string, content: string): ChatMessage {
  return { role: "tool", tool_call_id: id, content };
}

function user(content: string): ChatMessage {
  return { role: "user", content };
}

function system(content: string): ChatMessage {
  return { role: "system", content };
}

const LISBON = call("c1", "get_forecast", { city: "Lisbon", day: "tomorrow" });
const PORTO = call("c2", "get_forecast", { city: "Porto" });
const FARO = call("c3", "get_forecast", { city: "Faro", day: "today" });
const EUR_USD = call("c4", "convert_currency", { amount: 250, source: "EUR", target: "USD" });
const LIS_OPO = call("c5", "find_flights", { origin: "LIS", destination: "OPO" });

/** The pool, in the order the report lists it. */
export const VERIFY_TRAJECTORIES: readonly VerifyTrajectory[] = [
  {
    name: "single_tool",
    description: "system, user, assistant(tool call), tool",
    tools: FORECAST_ONLY,
    messages: [SYSTEM, user("Will it rain in Lisbon tomorrow?"), calls(null, [LISBON]), result("c1", '{"rain_mm": 4, "sky": "showers"}')],
    pretokenizePositions: [3],
  },
  {
    name: "two_tool_turns",
    description: "system, user, assistant(tool call), tool, assistant(text + tool call), tool",
    tools: FORECAST_ONLY,
    messages: [
      SYSTEM,
      user("Compare tomorrow in Lisbon with Porto."),
      calls(null, [LISBON]),
      result("c1", '{"rain_mm": 4}'),
      calls("Lisbon gets showers. Checking Porto next.", [PORTO]),
      result("c2", '{"rain_mm": 0}'),
    ],
    pretokenizePositions: [3, 5],
  },
  {
    name: "parallel_two_tools",
    description: "system, user, assistant(forecast + currency calls), tool, tool",
    tools: TRAVEL_TOOLS,
    messages: [
      SYSTEM,
      user("Weather in Lisbon tomorrow, and 250 EUR in dollars?"),
      calls(null, [LISBON, EUR_USD]),
      result("c1", '{"rain_mm": 4}'),
      result("c4", '{"amount": 271.5, "currency": "USD"}'),
    ],
    pretokenizePositions: [3],
  },
  {
    name: "parallel_three_tools",
    description: "system, user, assistant(three forecast calls), tool x3",
    tools: FORECAST_ONLY,
    messages: [
      SYSTEM,
      user("Which of Lisbon, Porto and Faro is driest?"),
      calls("Checking all three.", [LISBON, PORTO, FARO]),
      result("c1", '{"rain_mm": 4}'),
      result("c2", '{"rain_mm": 0}'),
      result("c3", '{"rain_mm": 1}'),
    ],
    pretokenizePositions: [3],
  },
  {
    name: "long_chain",
    description: "system, user, then four assistant(tool call) + tool rounds",
    tools: TRAVEL_TOOLS,
    messages: [
      SYSTEM,
      user("Plan a day trip from Lisbon to Porto."),
      calls("First the flights.", [LIS_OPO]),
      result("c5", '{"flights": ["TP1940 07:00", "TP1944 09:30"]}'),
      calls("Now the weather in Porto.", [PORTO]),
      result("c2", '{"rain_mm": 0}'),
      calls("And the weather at home.", [LISBON]),
      result("c1", '{"rain_mm": 4}'),
      calls("Finally the budget.", [EUR_USD]),
      result("c4", '{"amount": 271.5}'),
    ],
    pretokenizePositions: [3, 5, 7, 9],
  },
  {
    name: "retry_after_reminder",
    description: "system, user, assistant(tool call), tool, system reminder, assistant(retried tool call), tool",
    tools: FORECAST_ONLY,
    messages: [
      SYSTEM,
      user("Is Faro sunny today?"),
      calls(null, [FARO]),
      result("c3", '{"error": "city not recognised"}'),
      system("The previous tool call failed. Retry it with the city spelled out in full."),
      calls(null, [call("c6", "get_forecast", { city: "Faro, Portugal", day: "today" })]),
      result("c6", '{"rain_mm": 0, "sky": "clear"}'),
    ],
    pretokenizePositions: [3, 6],
  },
  {
    name: "reminders_between_tools",
    description: "system, user, three assistant(tool call) + tool rounds, a system reminder before the last two",
    tools: TRAVEL_TOOLS,
    messages: [
      SYSTEM,
      user("Weather for Lisbon, then flights to Porto, then the Porto weather."),
      calls(null, [LISBON]),
      result("c1", '{"rain_mm": 4}'),
      system(REMINDER),
      calls(null, [LIS_OPO]),
      result("c5", '{"flights": ["TP1940 07:00"]}'),
      system(REMINDER),
      calls(null, [PORTO]),
      result("c2", '{"rain_mm": 0}'),
    ],
    pretokenizePositions: [3, 6, 9],
  },
  {
    name: "user_turns_with_tools",
    description: "system, user, assistant(tool call), tool, assistant, user, assistant(tool call), tool, assistant(tool call), tool",
    tools: TRAVEL_TOOLS,
    messages: [
      SYSTEM,
      user("How wet is Lisbon tomorrow?"),
      calls(null, [LISBON]),
      result("c1", '{"rain_mm": 4}'),
      says("Expect light showers in Lisbon tomorrow."),
      user("Then find me a flight to Porto and its weather."),
      calls(null, [LIS_OPO]),
      result("c5", '{"flights": ["TP1944 09:30"]}'),
      calls("Booked options found; checking Porto.", [PORTO]),
      result("c2", '{"rain_mm": 0}'),
    ],
    pretokenizePositions: [3, 5, 7, 9],
  },
  {
    name: "tool_failure_user_retry",
    description: "system, user, assistant(no tool call), user(parse-failure notice), assistant(tool call), tool",
    tools: FORECAST_ONLY,
    messages: [
      SYSTEM,
      user("Forecast for Porto please."),
      says("get_forecast(Porto)"),
      user("Your last turn held no parseable tool call. Call the tool again with valid arguments."),
      calls(null, [PORTO]),
      result("c2", '{"rain_mm": 0}'),
    ],
    pretokenizePositions: [3, 5],
  },
  {
    name: "chat_with_reminder",
    description: "system, user, assistant, system reminder, user, assistant (no tools)",
    tools: null,
    messages: [
      SYSTEM,
      user("Suggest a museum in Lisbon."),
      says("The Gulbenkian Museum is a good choice."),
      system(REMINDER),
      user("And one in Porto?"),
      says("Try the Serralves Museum."),
    ],
    pretokenizePositions: [3, 4, 5],
  },
  {
    name: "chat_user_turns",
    description: "system, user, assistant, user, assistant, user (no tools)",
    tools: null,
    messages: [SYSTEM, user("What currency does Portugal use?"), says("The euro."), user("And Brazil?"), says("The Brazilian real."), user("Thanks.")],
    pretokenizePositions: [3, 5],
  },
  {
    name: "thinking_chat_user_turns",
    description: "system, user, assistant(reasoning), user, assistant(reasoning), user (no tools)",
    tools: null,
    messages: [
      SYSTEM,
      user("Is a 40 minute layover in Lisbon enough?"),
      says("It is tight but usually fine within Schengen.", "Lisbon is compact; intra-Schengen transfers need no passport check."),
      user("What if I fly in from London?"),
      says("Then allow at least an hour for passport control.", "London is outside Schengen, so there is a border check."),
      user("Understood."),
    ],
    pretokenizePositions: [3, 5],
  },
  {
    name: "thinking_tool_and_user_turns",
    description: "system, user, assistant(reasoning + tool call), tool, user, assistant(reasoning + tool call), tool, user, assistant",
    tools: TRAVEL_TOOLS,
    messages: [
      SYSTEM,
      user("Lisbon weather tomorrow?"),
      calls(null, [LISBON], "The user wants tomorrow's forecast for Lisbon."),
      result("c1", '{"rain_mm": 4}'),
      user("Convert 250 EUR to USD as well."),
      calls(null, [EUR_USD], "A currency conversion; the tool handles it."),
      result("c4", '{"amount": 271.5}'),
      user("Summarize."),
      says("Showers in Lisbon tomorrow; 250 EUR is about 271 USD.", "Both results are in; combine them briefly."),
    ],
    pretokenizePositions: [3, 4, 5, 6, 7, 8],
  },
  {
    name: "thinking_two_tool_turns",
    description: "system, user, assistant(reasoning + tool call), tool, assistant(reasoning + tool call), tool",
    tools: FORECAST_ONLY,
    messages: [
      SYSTEM,
      user("Is Porto or Faro warmer today?"),
      calls(null, [PORTO], "Start with Porto."),
      result("c2", '{"celsius": 19}'),
      calls("Porto is 19 C.", [FARO], "Now Faro to compare."),
      result("c3", '{"celsius": 24}'),
    ],
    pretokenizePositions: [3, 5],
  },
  {
    name: "thinking_long_chain",
    description: "system, user, three assistant(reasoning + tool call) + tool rounds",
    tools: TRAVEL_TOOLS,
    messages: [
      SYSTEM,
      user("Flights LIS to OPO, the Porto weather, and the fare in dollars."),
      calls(null, [LIS_OPO], "Flights first."),
      result("c5", '{"flights": ["TP1940 07:00"], "fare_eur": 250}'),
      calls(null, [PORTO], "Then the destination weather."),
      result("c2", '{"rain_mm": 0}'),
      calls(null, [EUR_USD], "Finally convert the fare."),
      result("c4", '{"amount": 271.5}'),
    ],
    pretokenizePositions: [3, 5, 7],
  },
  {
    name: "thinking_user_turns_with_tools",
    description: "system, user, assistant(reasoning + tool call), tool, assistant(reasoning), user, assistant(reasoning + tool call), tool",
    tools: FORECAST_ONLY,
    messages: [
      SYSTEM,
      user("Faro weather today?"),
      calls(null, [FARO], "Look up Faro for today."),
      result("c3", '{"sky": "clear"}'),
      says("Clear skies in Faro today.", "Report the result plainly."),
      user("And Porto tomorrow?"),
      calls(null, [call("c7", "get_forecast", { city: "Porto", day: "tomorrow" })], "Same tool, another city and day."),
      result("c7", '{"sky": "overcast"}'),
    ],
    pretokenizePositions: [3, 5, 7],
  },
  {
    name: "thinking_reminders_between_tools",
    description: "system, user, assistant(reasoning + tool call), tool, system reminder, assistant(reasoning + tool call), tool",
    tools: TRAVEL_TOOLS,
    messages: [
      SYSTEM,
      user("Check flights LIS-OPO and convert 250 EUR."),
      calls(null, [LIS_OPO], "Flights first."),
      result("c5", '{"flights": []}'),
      system(REMINDER),
      calls(null, [EUR_USD], "No flights; still do the conversion, briefly."),
      result("c4", '{"amount": 271.5}'),
    ],
    pretokenizePositions: [3, 6],
  },
  {
    name: "mixed_roles",
    description: "system, user, assistant(tool call), tool, user, assistant(tool call), system reminder, tool, assistant",
    tools: TRAVEL_TOOLS,
    messages: [
      SYSTEM,
      user("Porto forecast?"),
      calls(null, [PORTO]),
      result("c2", '{"rain_mm": 0}'),
      user("Also flights from Lisbon."),
      calls("Looking them up.", [LIS_OPO]),
      system(REMINDER),
      result("c5", '{"flights": ["TP1944 09:30"]}'),
      says("Dry in Porto; one direct flight at 09:30."),
    ],
    pretokenizePositions: [3, 4, 6],
  },
  {
    name: "thinking_mixed_roles",
    description: "system, user, assistant(reasoning + tool call), tool, system reminder, user, assistant(reasoning + tool call), tool",
    tools: TRAVEL_TOOLS,
    messages: [
      SYSTEM,
      user("Forecast for Lisbon tomorrow?"),
      calls(null, [LISBON], "A forecast lookup."),
      result("c1", '{"rain_mm": 4}'),
      system(REMINDER),
      user("Now the flights to Porto."),
      calls(null, [LIS_OPO], "Short answer; call the flights tool."),
      result("c5", '{"flights": ["TP1940 07:00"]}'),
    ],
    pretokenizePositions: [3, 4, 5, 7],
  },
];

/** Non-assistant roles that follow the first assistant message (miles' `APPEND_ROLES`). */
function appendRolesOf(messages: readonly ChatMessage[]): Set<string> {
  const first = messages.findIndex((message) => message.role === "assistant");
  const roles = new Set<string>();
  if (first < 0) return roles;
  for (const message of messages.slice(first + 1)) if (message.role !== "assistant") roles.add(message.role);
  return roles;
}

/** True when an assistant message carries reasoning (miles' `IS_THINKING`). */
function isThinkingTrajectory(messages: readonly ChatMessage[]): boolean {
  return messages.some((message) => message.role === "assistant" && typeof message.reasoning_content === "string" && message.reasoning_content !== "");
}

/** A trajectory with its append roles and thinking flag. */
export function classifyTrajectory(trajectory: VerifyTrajectory): ClassifiedTrajectory {
  return { ...trajectory, appendRoles: appendRolesOf(trajectory.messages), thinking: isThinkingTrajectory(trajectory.messages) };
}
