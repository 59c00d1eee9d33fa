// What a scripted weather run must look like (SPEC §10): the v2 retry tree, the agent's metadata, its tool round trips.
// The matchers default to these; tests and the CLI pass them explicitly to say what they expect.
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

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}
