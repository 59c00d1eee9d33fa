// Judges one v1/v2 trajectory pair with the same pure checks the matchers use, and shapes the verdicts for the report.
// A run that could not even start becomes a failed `run` part instead of a verdict.
import type { ToolCallFailureMode } from "../agent/weather-agent";
import {
  ALL_WEATHER_APPEND_ROLES,
  checkRetryTopology,
  checkTrainingPayloadParity,
  weatherAgentMetadata,
  weatherRecordCount,
  weatherRetryTopology,
  weatherScenarioExpectations,
  type ParityVerdict,
  type TrainingPayloadParityOptions,
} from "../matchers";
import type { SessionParityRun } from "../fixture/types";
import { toReportDifferences, type ReportCheck, type ReportTrajectory } from "./report";
import { describeSequenceHunks } from "../matchers/sequence-hunks";

/**
 * Options of the payload-parity check for a schedule of `cycles` cycles under `mode` over the family's append
 * `roles`. With all four roles the records, agent counters and retry tree are the scripted weather run's for that
 * cycle count and mode (weather-schedule-expectations); a family with fewer roles (qwen35: no system turn) has its
 * one-cycle rollback run derived from its schedule ({@link weatherScenarioExpectations}), and otherwise only the
 * parts that do not depend on the schedule remain (the first two tool round trips, sample and session-metadata parity).
 */
function parityOptionsFor(cycles: number, mode: ToolCallFailureMode, roles: readonly string[]): TrainingPayloadParityOptions {
  const topology = expectedTopology(cycles, mode, roles);
  if (allRoles(roles)) {
    return cycles === 1 && mode === "rollback"
      ? {}
      : { recordCount: weatherRecordCount(cycles, mode), agentMetadata: { ...weatherAgentMetadata(cycles, mode) }, topology };
  }
  if (cycles !== 1 || mode !== "rollback") return { recordCount: null, agentMetadata: null, topology: null };
  const expected = weatherScenarioExpectations(roles);
  return { recordCount: expected.recordCount, agentMetadata: expected.agentMetadata, topology: expected.topology, toolCalls: expected.toolRoundTrips };
}

function allRoles(roles: readonly string[]): boolean {
  return ALL_WEATHER_APPEND_ROLES.every((role) => roles.includes(role));
}

/** The v2 retry tree the run must show, or null when no expectation is known for this schedule. */
function expectedTopology(cycles: number, mode: ToolCallFailureMode, roles: readonly string[]) {
  if (allRoles(roles)) return weatherRetryTopology(cycles, mode);
  return cycles === 1 && mode === "rollback" ? weatherScenarioExpectations(roles).topology : null;
}

/**
 * The verdicts of trajectory `index`: `toHaveTrainingPayloadParity` (v1 against v2) and `toHaveRetryTopology`
 * against the scripted run's tree for `cycles` under `mode` over the family's `roles` (v2). An `Error` in place of a
 * run fails the pair.
 */
export function judgePair(
  index: number,
  v1: SessionParityRun | Error,
  v2: SessionParityRun | Error,
  cycles: number,
  mode: ToolCallFailureMode = "rollback",
  roles: readonly string[] = ALL_WEATHER_APPEND_ROLES,
  decode?: (ids: number[]) => string,
): ReportTrajectory {
  // A run that could not start or did not complete is a server problem: only its cause is reported, no verdict.
  const broken = [v1, v2].flatMap((run, k) => {
    const cause = run instanceof Error ? run.message : run.failure;
    return cause === undefined ? [] : [{ part: `${k === 0 ? "v1" : "v2"} run`, message: shortCause(cause), differences: [], totalDifferences: 0, hunks: [] }];
  });
  if (broken.length > 0 || v1 instanceof Error || v2 instanceof Error) {
    return {
      trajectory: index,
      pass: false,
      error: broken.map((part) => `${part.part}: ${part.message}`).join("; "),
      parity: { pass: false, failures: broken },
      topology: null,
    };
  }
  const [parityVerdict, topologyVerdict] = pairVerdicts(v1, v2, cycles, mode, roles);
  const parity = toReportCheck(parityVerdict, decode);
  const topology = topologyVerdict === null ? null : toReportCheck(topologyVerdict, decode);
  return { trajectory: index, pass: parity.pass && (topology?.pass ?? true), error: null, parity, topology };
}

/** Longest cause printed for a failed run; the reply body in it is cut there (the --json report keeps the whole text). */
const CAUSE_CHARS = 400;

/** A run's failure text cut to {@link CAUSE_CHARS}: the route and status come first in it, then the reply body. */
export function shortCause(text: string): string {
  return text.length <= CAUSE_CHARS ? text : `${text.slice(0, CAUSE_CHARS)}… (${text.length - CAUSE_CHARS} more characters)`;
}

/**
 * The raw verdicts of a pair of runs: payload parity (v1 against v2) and the v2 retry topology expected for
 * `cycles` under `mode`. The HTML report prints them exactly as the matchers do.
 */
export function pairVerdicts(
  v1: SessionParityRun,
  v2: SessionParityRun,
  cycles: number,
  mode: ToolCallFailureMode = "rollback",
  roles: readonly string[] = ALL_WEATHER_APPEND_ROLES,
): [ParityVerdict, ParityVerdict | null] {
  const parity = checkTrainingPayloadParity(v1, v2, parityOptionsFor(cycles, mode, roles));
  const topology = expectedTopology(cycles, mode, roles);
  return [parity, topology === null ? null : checkRetryTopology(v2, topology)];
}

/** A matcher verdict as report data (v1 is the left side of every comparison; `decode` turns token runs into text). */
export function toReportCheck(verdict: ParityVerdict, decode?: (ids: number[]) => string): ReportCheck {
  return {
    pass: verdict.pass,
    failures: verdict.failures.map((failure) => ({
      part: failure.part,
      message: failure.message,
      differences: toReportDifferences(failure.differences),
      totalDifferences: failure.totalDifferences,
      hunks: (failure.sequences ?? []).map((sequence) => describeSequenceHunks(sequence, { leftName: "v1", rightName: "v2", decode })),
    })),
  };
}
