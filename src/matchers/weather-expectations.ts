// What a scripted weather run must look like (SPEC §10): the v2 retry tree, the agent's metadata, its tool round trips.
// The matchers default to these; tests and the CLI pass them explicitly to say what they expect.
import { buildDriverSchedule, type DriverAction } from "../agent/schedule";
import { ASSISTANT_INPUT_TEXTS } from "../agent/texts";
import type { WeatherAgentResult } from "../agent/weather-agent";
import type { JsonObject } from "../wire/sample";

/** Expected v2 tree shape: nodes as `[id, parent]`, leaves as `[nodeId, pathNodeIds]`, and optionally the one selected leaf. */
export interface RetryTopology {
  /** Every node in seq order as `[id, parent]` (`null` for a root). */
  readonly nodes: ReadonlyArray<readonly [number, number | null]>;
  /** Every leaf in seq order as `[nodeId, root->leaf node ids]`. */
  readonly leaves: ReadonlyArray<readonly [number, readonly number[]]>;
  /** The leaf the picker must keep, alone (checked on a run's samples; needs a run, not a bare tree). */
  readonly selectedLeaf?: number;
}

/** One tool call the agent made and the record that answered it. */
export interface ToolCallRoundTrip {
  /** Index of the record whose response holds exactly this one tool call. */
  readonly call: number;
  /** Index of the record whose last request message is the tool result answering it. */
  readonly result: number;
  /** The function name called. */
  readonly name: string;
  /** The parsed arguments. */
  readonly arguments: Readonly<JsonObject>;
}

/** Number of records on the active path of a scripted weather session (9 calls, 2 rolled back). */
export const WEATHER_RECORD_COUNT = 7;

/** The v2 retry tree of the scripted weather run: two rollbacks branch twice from node 3; leaf 8 is kept. */
export const WEATHER_RETRY_TOPOLOGY: RetryTopology = deepFreeze({
  nodes: [
    [0, null],
    [1, 0],
    [2, 1],
    [3, 2],
    [4, 3],
    [5, 3],
    [6, 3],
    [7, 6],
    [8, 7],
  ],
  leaves: [
    [4, [0, 1, 2, 3, 4]],
    [5, [0, 1, 2, 3, 5]],
    [8, [0, 1, 2, 3, 6, 7, 8]],
  ],
  selectedLeaf: 8,
} as const);

/** The weather agent's result (its v2 agent metadata) for the scripted run: driver events and counters. */
export const WEATHER_AGENT_METADATA: Readonly<WeatherAgentResult> = deepFreeze<WeatherAgentResult>({
  driver_events: ["initial", "append_tool", "append_user", "append_tool", "append_system", "rollback", "rollback", "force_final", "append_assistant"],
  rollback_count: 2,
  user_count: 2,
  system_count: 1,
  assistant_input_count: 2,
  tool_result_count: 2,
  tool_call_count: 2,
});

/** The two `get_weather` round trips of the scripted run: Beijing (records 0 -> 1) and Shanghai (records 2 -> 3). */
export const WEATHER_TOOL_ROUND_TRIPS: readonly ToolCallRoundTrip[] = deepFreeze([
  { call: 0, result: 1, name: "get_weather", arguments: { location: "Beijing" } },
  { call: 2, result: 3, name: "get_weather", arguments: { location: "Shanghai" } },
]);

/** Every role the weather agent can append, in the schedule's order (the qwen3 family's four). */
export const ALL_WEATHER_APPEND_ROLES: readonly string[] = Object.freeze(["tool", "user", "system", "assistant"]);

/** What a one-cycle scripted weather run must look like for one set of append roles. */
export interface WeatherScenarioExpectations {
  /** Records on the active path (the kept leaf's path). */
  readonly recordCount: number;
  /** The v2 retry tree and its kept leaf. */
  readonly topology: RetryTopology;
  /** The agent's metadata. */
  readonly agentMetadata: Readonly<WeatherAgentResult>;
  /** The `get_weather` round trips on the active path. */
  readonly toolRoundTrips: readonly ToolCallRoundTrip[];
}

const EVENT_OF: Readonly<Record<DriverAction, WeatherAgentResult["driver_events"][number]>> = {
  tool_result: "append_tool",
  user_followup: "append_user",
  system_reminder: "append_system",
  rollback: "rollback",
  force_final: "force_final",
  assistant_input: "append_assistant",
};

/**
 * The expectations of a one-cycle weather run whose agent may append `roles` (a family's append roles), derived from
 * the schedule ({@link buildDriverSchedule}) and the script's rules: each chat call is one node of the v2 tree, child
 * of the previous call's node, except after a rollback, whose call regenerates the previous reply (a sibling of it);
 * the kept leaf is the last call's node and the active path its records; the script answers the first prompt
 * (Beijing) and the user follow-up (Shanghai) with one `get_weather` call each, answered by the next record.
 * For all four roles this gives {@link WEATHER_RECORD_COUNT}, {@link WEATHER_RETRY_TOPOLOGY},
 * {@link WEATHER_AGENT_METADATA} and {@link WEATHER_TOOL_ROUND_TRIPS}.
 * @throws Error for roles the schedule refuses (no `tool`, unknown roles)
 */
export function weatherScenarioExpectations(roles: Iterable<string>): WeatherScenarioExpectations {
  const schedule = buildDriverSchedule(roles, 1);
  const parents: Array<number | null> = [null];
  schedule.forEach((action, position) => {
    // call `position + 1` follows the call `position`; a rollback's call replaces that call's reply
    parents.push(action === "rollback" ? parents[position] : position);
  });
  const pathTo = (node: number): number[] => {
    const path: number[] = [];
    for (let at: number | null = node; at !== null; at = parents[at]) path.unshift(at);
    return path;
  };
  const hasChild = new Set(parents.filter((parent): parent is number => parent !== null));
  const leaves = parents.map((_, node) => node).filter((node) => !hasChild.has(node));
  const kept = parents.length - 1;
  const activePath = pathTo(kept);
  // the calls that ask for the weather: the first prompt's reply, and the reply to each user follow-up
  const cities = ["Beijing", "Shanghai"];
  const callNodes = [0, ...schedule.flatMap((action, position) => (action === "user_followup" ? [position + 1] : []))];
  const toolRoundTrips = callNodes.flatMap((node, k) => {
    const call = activePath.indexOf(node);
    return call === -1 || call + 1 >= activePath.length ? [] : [{ call, result: call + 1, name: "get_weather", arguments: { location: cities[k] } }];
  });
  const count = (action: DriverAction): number => schedule.filter((step) => step === action).length;
  return deepFreeze({
    recordCount: activePath.length,
    topology: {
      nodes: parents.map((parent, node) => [node, parent] as const),
      leaves: leaves.map((node) => [node, pathTo(node)] as const),
      selectedLeaf: kept,
    },
    agentMetadata: {
      driver_events: ["initial", ...schedule.map((action) => EVENT_OF[action])],
      rollback_count: count("rollback"),
      user_count: count("user_followup") + count("assistant_input"),
      system_count: count("system_reminder"),
      assistant_input_count: ASSISTANT_INPUT_TEXTS.length * count("assistant_input"),
      tool_result_count: count("tool_result"),
      tool_call_count: callNodes.length,
    },
    toolRoundTrips,
  });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}
