// Judges what the two servers did with one schedule against the model, and their payloads against each other.
// Pure: takes observations and the prediction, returns a verdict with every failure in words.
import { formatVerdict } from "../matchers/parity-verdict";
import { checkTrainingPayloadParity } from "../matchers/training-payload-parity";
import type { SessionServerVersion } from "../server/types";
import type { ServerObservation } from "./drive";
import type { SchedulePrediction, ServerPrediction } from "./model";
import { callOfWeightVersion } from "./plan";
import type { AgentSchedule } from "./schedule";

/** The outcome class of a schedule, as the model sees it (the report counts schedules per class). */
export type ScheduleOutcome =
  "payloads equal" | "v1 refuses a deep rollback" | "v2 refuses to extend a truncated node" | "v2 keeps several leaves" | "v2 keeps another path";

/** One thing that went against the model or against parity. */
interface FuzzFailure {
  /** Which side failed: one server against the model, or the v1/v2 payload comparison. */
  where: SessionServerVersion | "parity";
  message: string;
}

/** The verdict of one schedule. */
export interface ScheduleVerdict {
  schedule: AgentSchedule;
  prediction: SchedulePrediction;
  outcome: ScheduleOutcome;
  pass: boolean;
  failures: FuzzFailure[];
  /** What each server did. */
  observed: { v1: ServerObservation; v2: ServerObservation };
  /** The v2 leaf whose sample differs from v1's (parity failures) or whose keeping is wrong, else null. */
  differingLeaf: number | null;
}

/** The outcome class the model predicts. */
function outcomeOf(prediction: SchedulePrediction): ScheduleOutcome {
  if (prediction.agree) return "payloads equal";
  if (prediction.v1.calls.some((c) => c.status === 400)) return "v1 refuses a deep rollback";
  if (prediction.v2.calls.some((c) => c.status === 409)) return "v2 refuses to extend a truncated node";
  if (prediction.v2.tree.kept.length !== 1) return "v2 keeps several leaves";
  return "v2 keeps another path";
}

function recordCalls(observation: ServerObservation): Array<number | null> {
  return observation.run.preCollect.records.map((record) => {
    const choices = (record.response as { choices?: Array<{ meta_info?: { weight_version?: unknown } }> }).choices;
    return callOfWeightVersion(choices?.[0]?.meta_info?.weight_version);
  });
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Checks one server's calls and records against the model; returns its failures (empty when it behaved). */
function checkServer(version: SessionServerVersion, observed: ServerObservation, predicted: ServerPrediction): FuzzFailure[] {
  const failures: FuzzFailure[] = [];
  for (const expected of predicted.calls) {
    const got = observed.calls[expected.call];
    if (got === undefined || got.status !== expected.status) {
      const did = got === undefined ? "made no such call" : `answered ${got.status}${got.error === undefined ? "" : `: ${got.error.slice(0, 300)}`}`;
      failures.push({ where: version, message: `call ${expected.call}: the model predicted ${expected.status} (${expected.note}); ${version} ${did}` });
      return failures; // later calls ran on another history than the model's
    }
  }
  if (observed.run.failure !== undefined) failures.push({ where: version, message: observed.run.failure });
  const records = recordCalls(observed);
  if (!sameJson(records, predicted.records)) {
    failures.push({
      where: version,
      message: `GET /sessions shows the records of calls ${JSON.stringify(records)}, the model predicted calls ${JSON.stringify(predicted.records)}`,
    });
  }
  return failures;
}

function checkTree(observed: ServerObservation, prediction: SchedulePrediction, truncating: boolean): { failures: FuzzFailure[]; leaf: number | null } {
  const failures: FuzzFailure[] = [];
  const tree = observed.run.preCollect.metadata.tree as
    { nodes?: Array<{ id: number; parent: number | null }>; leaves?: Array<{ node_id: number; path_node_ids: number[] }> } | undefined;
  const nodes = (tree?.nodes ?? []).map((row) => [row.id, row.parent]);
  const leaves = (tree?.leaves ?? []).map((row) => [row.node_id, row.path_node_ids]);
  const expected = prediction.v2.tree;
  if (!sameJson(nodes, expected.nodes)) {
    const at = expected.nodes.findIndex((row, i) => !sameJson(row, nodes[i]));
    failures.push({
      where: "v2",
      message: `tree nodes [id, parent] are ${JSON.stringify(nodes)}, the model predicted ${JSON.stringify(expected.nodes)} (first difference at node ${at === -1 ? nodes.length : at})`,
    });
  }
  if (!sameJson(leaves, expected.leaves))
    failures.push({
      where: "v2",
      message: `tree leaves [node_id, path] are ${JSON.stringify(leaves)}, the model predicted ${JSON.stringify(expected.leaves)}`,
    });
  const kept = observed.run.samples.map((sample) => (sample.metadata.leaf as { node_id?: number } | undefined)?.node_id ?? null);
  const keptOk = truncating ? kept.every((id) => id !== null && expected.kept.includes(id)) : sameJson(kept, expected.kept);
  let leaf: number | null = null;
  if (!keptOk) {
    leaf = kept.find((id) => id !== null && !expected.kept.includes(id)) ?? expected.kept.find((id) => !kept.includes(id)) ?? null;
    failures.push({
      where: "v2",
      message: `the picker kept leaves ${JSON.stringify(kept)}, the model predicted ${JSON.stringify(expected.kept)} (default picker: a leaf superseded by a later sibling is dropped)`,
    });
  }
  return { failures, leaf };
}

/** Judges one schedule. */
export function judgeSchedule(schedule: AgentSchedule, prediction: SchedulePrediction, v1: ServerObservation, v2: ServerObservation): ScheduleVerdict {
  const failures: FuzzFailure[] = [...checkServer("v1", v1, prediction.v1)];
  const v2Calls = checkServer("v2", v2, prediction.v2);
  failures.push(...v2Calls);
  let differingLeaf: number | null = null;
  if (v2Calls.length === 0) {
    const tree = checkTree(v2, prediction, schedule.maxSeqLen !== null);
    failures.push(...tree.failures);
    differingLeaf = tree.leaf;
  }
  if (failures.length === 0 && schedule.maxSeqLen === null && v1.run.samples.length !== (prediction.v1.records.length > 0 ? 1 : 0)) {
    failures.push({ where: "v1", message: `returned ${v1.run.samples.length} samples for a trajectory of ${prediction.v1.records.length} records` });
  }
  if (failures.length === 0 && prediction.agree) {
    const bothEmpty = v1.run.emptyReason !== null && v1.run.emptyReason === v2.run.emptyReason;
    if (!bothEmpty) {
      const verdict = checkTrainingPayloadParity(v1.run, v2.run, { recordCount: null, toolCalls: null, agentMetadata: null, topology: null });
      if (!verdict.pass) {
        differingLeaf = prediction.v2.tree.kept[0] ?? null;
        failures.push({ where: "parity", message: `toHaveTrainingPayloadParity failed (v1 left, v2 right):\n${formatVerdict(verdict)}` });
      }
    }
  }
  return { schedule, prediction, outcome: outcomeOf(prediction), pass: failures.length === 0, failures, observed: { v1, v2 }, differingLeaf };
}
