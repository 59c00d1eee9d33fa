// What the scripted weather run looks like for any cycle count and tool-call failure mode: events, counters, v2 tree.
// Derived from the schedule and the script's known answers, never from a run, so a server that drifts cannot agree.
import type { ToolCallFailureMode, WeatherAgentResult } from "../agent/weather-agent";
import type { RetryTopology } from "./weather-expectations";

type DriverEvent = WeatherAgentResult["driver_events"][number];

function checkCycles(cycles: number, where: string): void {
  if (!Number.isSafeInteger(cycles) || cycles < 1) throw new TypeError(`${where}: cycles must be an integer >= 1, got ${String(cycles)}`);
}

/**
 * The driver events of the scripted weather run on Qwen3's four append roles. The first cycle's tool-result steps
 * both find a tool call; every later cycle opens on the w4 one-sentence promise (no tool call), so its first
 * tool-result step takes the failure mode (`tool_call_failure_<mode>`), and the follow-up gets a real tool round trip.
 */
export function weatherDriverEvents(cycles: number, failureMode: ToolCallFailureMode = "rollback"): DriverEvent[] {
  checkCycles(cycles, "weatherDriverEvents");
  const events: DriverEvent[] = ["initial", "append_tool", "append_user", "append_tool", "append_system", "rollback", "rollback"];
  for (let cycle = 2; cycle <= cycles; cycle += 1) events.push(`tool_call_failure_${failureMode}`, "append_user", "append_tool", "append_system", "rollback");
  events.push("force_final", "append_assistant");
  return events;
}

/**
 * The v2 retry tree those events grow: every chat call adds a node under the last generated turn still in the
 * agent's conversation; a rollback (scheduled or as the failure fallback) pops that turn first, so the re-inference
 * becomes its sibling. Leaves in seq order; the last node is the kept leaf (the picker drops superseded retries).
 */
export function weatherRetryTopology(cycles: number, failureMode: ToolCallFailureMode = "rollback"): RetryTopology {
  const nodes: [number, number | null][] = [];
  const path: number[] = [];
  const chat = (): void => {
    const id = nodes.length;
    nodes.push([id, path.length === 0 ? null : path[path.length - 1]]);
    path.push(id);
  };
  for (const event of weatherDriverEvents(cycles, failureMode)) {
    if (event === "rollback" || event === "tool_call_failure_rollback") path.pop();
    chat();
  }
  const parents = new Set(nodes.map(([, parent]) => parent));
  const pathTo = (id: number): number[] => {
    const ids: number[] = [];
    for (let at: number | null = id; at !== null; at = nodes[at][1]) ids.unshift(at);
    return ids;
  };
  const leaves = nodes.filter(([id]) => !parents.has(id)).map(([id]): [number, number[]] => [id, pathTo(id)]);
  return { nodes, leaves, selectedLeaf: nodes.length - 1 };
}

/** Records on the active path of the scripted session (what `GET /sessions/{id}` lists): the kept leaf's depth. */
export function weatherRecordCount(cycles: number, failureMode: ToolCallFailureMode = "rollback"): number {
  const topology = weatherRetryTopology(cycles, failureMode);
  return topology.leaves.find(([id]) => id === topology.selectedLeaf)![1].length;
}

/**
 * The agent's result (its v2 agent metadata) for the scripted run. Each cycle after the first adds a system
 * reminder, a user follow-up, one tool result, one rollback, the Shanghai tool call, plus what the failure mode
 * adds: rollback pops one more turn, append_user appends one more user message, and both append modes get the
 * w5 retried tool call.
 */
export function weatherAgentMetadata(cycles: number, failureMode: ToolCallFailureMode = "rollback"): WeatherAgentResult {
  const extra = cycles - 1;
  return {
    driver_events: weatherDriverEvents(cycles, failureMode),
    rollback_count: 2 + extra * (failureMode === "rollback" ? 2 : 1),
    user_count: 2 + extra * (failureMode === "append_user" ? 2 : 1),
    system_count: cycles,
    assistant_input_count: 2,
    tool_result_count: 2 + extra,
    tool_call_count: 2 + extra * (failureMode === "rollback" ? 1 : 2),
  };
}
