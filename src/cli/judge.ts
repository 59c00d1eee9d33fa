// Judges one v1/v2 trajectory pair with the same pure checks the matchers use, and shapes the verdicts for the report.
// A run that could not even start becomes a failed `run` part instead of a verdict.
import type { ToolCallFailureMode } from "../agent/weather-agent";
import {
  checkRetryTopology,
  checkTrainingPayloadParity,
  weatherAgentMetadata,
  weatherRecordCount,
  weatherRetryTopology,
  type ParityVerdict,
  type TrainingPayloadParityOptions,
} from "../matchers";
import type { SessionParityRun } from "../fixture/types";
import { toReportDifferences, type ReportCheck, type ReportTrajectory } from "./report";

/**
 * Options of the payload-parity check for a schedule of `cycles` cycles under `mode`: the records, agent counters
 * and retry tree the scripted weather run produces then (weather-schedule-expectations), plus the first two tool
 * round trips, sample and session-metadata parity.
 */
function parityOptionsFor(cycles: number, mode: ToolCallFailureMode): TrainingPayloadParityOptions {
  return cycles === 1
    ? {}
    : { recordCount: weatherRecordCount(cycles, mode), agentMetadata: { ...weatherAgentMetadata(cycles, mode) }, topology: weatherRetryTopology(cycles, mode) };
}

/**
 * The verdicts of trajectory `index`: `toHaveTrainingPayloadParity` (v1 against v2) and `toHaveRetryTopology`
 * against the scripted run's tree for `cycles` under `mode` (v2). An `Error` in place of a run fails the pair.
 */
export function judgePair(
  index: number,
  v1: SessionParityRun | Error,
  v2: SessionParityRun | Error,
  cycles: number,
  mode: ToolCallFailureMode = "rollback",
): ReportTrajectory {
  const broken = [v1, v2].flatMap((run, k) =>
    run instanceof Error ? [{ part: `${k === 0 ? "v1" : "v2"} run`, message: run.message, differences: [], totalDifferences: 0 }] : [],
  );
  if (broken.length > 0 || v1 instanceof Error || v2 instanceof Error) {
    return { trajectory: index, pass: false, parity: { pass: false, failures: broken }, topology: null };
  }
  const [parityVerdict, topologyVerdict] = pairVerdicts(v1, v2, cycles, mode);
  const parity = toReportCheck(parityVerdict);
  const topology = topologyVerdict === null ? null : toReportCheck(topologyVerdict);
  return { trajectory: index, pass: parity.pass && (topology?.pass ?? true), parity, topology };
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
): [ParityVerdict, ParityVerdict | null] {
  const parity = checkTrainingPayloadParity(v1, v2, parityOptionsFor(cycles, mode));
  const topology = checkRetryTopology(v2, weatherRetryTopology(cycles, mode));
  return [parity, topology];
}

/** A matcher verdict as report data. */
export function toReportCheck(verdict: ParityVerdict): ReportCheck {
  return {
    pass: verdict.pass,
    failures: verdict.failures.map((failure) => ({
      part: failure.part,
      message: failure.message,
      differences: toReportDifferences(failure.differences),
      totalDifferences: failure.totalDifferences,
    })),
  };
}
