// The weather scenario's expectations derived from a family's append roles: for all four roles they are the fixed
// expectations the matchers default to; for Qwen3.5's three roles (no system turn) they follow the shorter schedule.
import { describe, expect, test } from "@jest/globals";
import {
  WEATHER_AGENT_METADATA,
  WEATHER_RECORD_COUNT,
  WEATHER_RETRY_TOPOLOGY,
  WEATHER_TOOL_ROUND_TRIPS,
  weatherScenarioExpectations,
} from "../../src/matchers/weather-expectations";

describe("weatherScenarioExpectations", () => {
  test("all four roles give exactly the fixed weather expectations", () => {
    expect(weatherScenarioExpectations(["tool", "user", "system", "assistant"])).toEqual({
      recordCount: WEATHER_RECORD_COUNT,
      topology: WEATHER_RETRY_TOPOLOGY,
      agentMetadata: WEATHER_AGENT_METADATA,
      toolRoundTrips: WEATHER_TOOL_ROUND_TRIPS,
    });
  });

  test("without the system role the two rollbacks branch from the Shanghai call's node", () => {
    const expected = weatherScenarioExpectations(["tool", "user", "assistant"]);
    expect(expected.recordCount).toBe(6);
    expect(expected.topology).toEqual({
      nodes: [
        [0, null],
        [1, 0],
        [2, 1],
        [3, 2],
        [4, 2],
        [5, 2],
        [6, 5],
        [7, 6],
      ],
      leaves: [
        [3, [0, 1, 2, 3]],
        [4, [0, 1, 2, 4]],
        [7, [0, 1, 2, 5, 6, 7]],
      ],
      selectedLeaf: 7,
    });
    expect(expected.agentMetadata).toEqual({
      ...WEATHER_AGENT_METADATA,
      driver_events: WEATHER_AGENT_METADATA.driver_events.filter((e) => e !== "append_system"),
      system_count: 0,
    });
    expect(expected.toolRoundTrips).toEqual(WEATHER_TOOL_ROUND_TRIPS);
  });

  test("without the user role there is one tool round trip and no follow-up", () => {
    const expected = weatherScenarioExpectations(["tool"]);
    expect(expected.agentMetadata.driver_events).toEqual(["initial", "append_tool", "rollback", "rollback"]);
    expect(expected.toolRoundTrips).toEqual([WEATHER_TOOL_ROUND_TRIPS[0]]);
    expect(expected.recordCount).toBe(2);
  });

  test("roles the schedule refuses are refused", () => {
    expect(() => weatherScenarioExpectations(["user"])).toThrow(/needs the "tool" append role/);
  });
});
