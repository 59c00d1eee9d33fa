// The whole v1/v2 payload-parity check of one input sample's pair of runs, as a verdict of named parts.
// The matcher, the CLI and any user report share it, so "parity" means the same thing everywhere.
import type { SessionParityRun } from "../fixture/types";
import { checkAgentMetadata } from "./agent-metadata";
import { DEFAULT_PART_DIFFERENCES, VerdictBuilder, type ParityFailure, type ParityVerdict } from "./parity-verdict";
import { checkRetryTopology } from "./retry-topology";
import { readRun } from "./run-shapes";
import { checkTrainingSampleInvariants } from "./sample-invariants";
import { checkToolCallRoundTrips } from "./tool-call-round-trip";
import { trainingMetadataProjection } from "./training-metadata-projection";
import {
  WEATHER_AGENT_METADATA,
  WEATHER_RECORD_COUNT,
  WEATHER_RETRY_TOPOLOGY,
  WEATHER_TOOL_ROUND_TRIPS,
  type RetryTopology,
  type ToolCallRoundTrip,
} from "./weather-expectations";

/** What the scenario must look like besides parity; defaults describe the scripted weather run. `null` skips a part. */
export interface TrainingPayloadParityOptions {
  /** Records each `preCollect` snapshot must hold (default {@link WEATHER_RECORD_COUNT}). */
  recordCount?: number | null;
  /** Tool round trips both snapshots must show (default {@link WEATHER_TOOL_ROUND_TRIPS}). */
  toolCalls?: readonly ToolCallRoundTrip[] | null;
  /** Agent metadata both runs must carry (default {@link WEATHER_AGENT_METADATA}). */
  agentMetadata?: Readonly<Record<string, unknown>> | null;
  /** The v2 retry tree and its kept leaf (default {@link WEATHER_RETRY_TOPOLOGY}). */
  topology?: RetryTopology | null;
  /** Differences kept per failing part (default 10). */
  maxDifferences?: number;
}

/** Session metadata keys only v2 writes, left out when comparing v1's session metadata with v2's. */
const V2_ONLY_SESSION_METADATA_KEYS: readonly string[] = ["agent", "tree"];

/**
 * Checks that a v1 run and a v2 run of the same input sample carry the same training payload (the Python parity
 * helper's whole check, with every part named): versions; no server problem (a run whose `failure` is set — a
 * non-2xx, missing or undecodable reply — ends the check with that cause alone); no empty reason; one sample each; the record count of
 * each snapshot; the tool round trips of each snapshot; the v2 retry topology and kept leaf; the agent metadata
 * on both; each side's samples well formed ({@link checkTrainingSampleInvariants}); v1's sample `max_trim_tokens` equal to v2's session one; v1's session metadata bitwise equal to v2's
 * without `agent` and `tree`; and the two samples bitwise equal under `trainingMetadataProjection`.
 * Left is v1, right is v2 in every difference.
 */
export function checkTrainingPayloadParity(v1Run: unknown, v2Run: unknown, options: TrainingPayloadParityOptions = {}): ParityVerdict {
  const limit = options.maxDifferences ?? DEFAULT_PART_DIFFERENCES;
  const builder = new VerdictBuilder(limit);
  const v1Read = readRun(v1Run, "the v1 run (received)");
  const v2Read = readRun(v2Run, "the v2 run (expected)");
  if ("problem" in v1Read || "problem" in v2Read) {
    if ("problem" in v1Read) builder.usage("runs", v1Read.problem);
    if ("problem" in v2Read) builder.usage("runs", v2Read.problem);
    return builder.verdict();
  }
  const v1 = v1Read.run;
  const v2 = v2Read.run;
  const both: [string, SessionParityRun][] = [
    ["v1", v1],
    ["v2", v2],
  ];

  if (v1.version !== "v1" || v2.version !== "v2") {
    builder.fail("versions", `expected a v1 run compared with a v2 run, got ${v1.version} (received) and ${v2.version} (expected)`);
  } else builder.passed("versions");

  // A run that never completed has no payload to compare: its cause is the whole verdict, no difference is derived
  // from the data it lacks (records, samples, metadata).
  const failed = both.filter(([, run]) => run.failure !== undefined);
  if (failed.length > 0) {
    for (const [name, run] of failed) {
      builder.serverProblem("server problem", `the ${name} run failed on a server problem, so the payloads were never compared: ${String(run.failure)}`);
    }
    return builder.verdict();
  }
  builder.passed("server problem");

  const empty = both.filter(([, run]) => run.emptyReason !== null);
  if (empty.length > 0) builder.fail("empty reason", empty.map(([name, run]) => `the ${name} reply was empty (${String(run.emptyReason)})`).join("; "));
  else builder.passed("empty reason");

  // the weather scenario's own expectations are its defaults; a run of the user's own agent has none by default
  const weather = v1.scenario !== "agent" && v2.scenario !== "agent";
  const counts = both.filter(([, run]) => run.samples.length !== 1);
  if (counts.length > 0)
    builder.fail("sample count", counts.map(([name, run]) => `the ${name} run returned ${run.samples.length} samples, expected 1`).join("; "));
  else builder.passed("sample count");
  // the user's agent has no expected topology: name the leaves v2 kept when it kept more than one
  if (!weather && v2.samples.length > 1) {
    builder.fail(
      "v2 kept leaves",
      `the v2 run kept ${v2.samples.length} samples${leavesOf(v2)}; v2 keeps the one leaf of the final trajectory (v1 returned ${v1.samples.length})`,
    );
  }

  const recordCount = options.recordCount === undefined ? (weather ? WEATHER_RECORD_COUNT : null) : options.recordCount;
  if (recordCount !== null) {
    const wrong = both.filter(([, run]) => run.preCollect.records.length !== recordCount);
    if (wrong.length > 0)
      builder.fail(
        "record count",
        wrong.map(([name, run]) => `the ${name} session held ${run.preCollect.records.length} records before the collect, expected ${recordCount}`).join("; "),
      );
    else builder.passed("record count");
  }

  const toolCalls = options.toolCalls === undefined ? (weather ? WEATHER_TOOL_ROUND_TRIPS : null) : options.toolCalls;
  if (toolCalls !== null) {
    for (const [name, run] of both) absorb(builder, `${name} tool round trip`, checkToolCallRoundTrips(run, toolCalls, { maxDifferences: limit }));
  }

  const topology = options.topology === undefined ? (weather ? WEATHER_RETRY_TOPOLOGY : null) : options.topology;
  if (topology !== null) absorb(builder, "v2 retry topology", checkRetryTopology(v2, topology, { maxDifferences: limit }));

  const agentMetadata = options.agentMetadata === undefined ? (weather ? WEATHER_AGENT_METADATA : null) : options.agentMetadata;
  if (agentMetadata !== null) {
    for (const [name, run] of both) absorb(builder, `${name} agent metadata`, checkAgentMetadata(run, agentMetadata, { maxDifferences: limit }));
  }

  // Two servers that emit the same broken sample agree bitwise: each side must also be well formed on its own.
  for (const [name, run] of both) {
    run.samples.forEach((sample, index) => {
      absorb(
        builder,
        `${name} well-formed sample${run.samples.length > 1 ? ` ${index}` : ""}`,
        checkTrainingSampleInvariants(sample, { maxDifferences: limit }),
      );
    });
  }

  if (v1.samples.length > 0) {
    const v1Metadata = v1.samples[0].metadata;
    builder.compare(
      "max_trim_tokens",
      "v1 samples[0].metadata.max_trim_tokens (left) differs from v2 sessionMetadata.max_trim_tokens (right)",
      Object.prototype.hasOwnProperty.call(v1Metadata, "max_trim_tokens") ? v1Metadata.max_trim_tokens : undefined,
      v2.sessionMetadata.max_trim_tokens,
      { rootPath: "max_trim_tokens", integers: true },
    );
  }

  const v2Linear: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(v2.sessionMetadata)) if (!V2_ONLY_SESSION_METADATA_KEYS.includes(key)) v2Linear[key] = value;
  builder.compare("session metadata", "v1 session metadata (left) is not bitwise equal to v2's without agent and tree (right)", v1.sessionMetadata, v2Linear, {
    rootPath: "sessionMetadata",
  });

  if (v1.samples.length > 0 && v2.samples.length > 0) {
    builder.compare(
      "training sample",
      "v1 samples[0] (left) is not bitwise equal to v2 samples[0] (right) under trainingMetadataProjection",
      v1.samples[0],
      v2.samples[0],
      { rootPath: "sample", metadataProjection: trainingMetadataProjection },
    );
  }
  return builder.verdict();
}

/** Copies a sub-check's outcome into `builder` as one part (its failures prefixed by their own part names). */
function absorb(builder: VerdictBuilder, part: string, verdict: ParityVerdict): void {
  if (verdict.pass) {
    builder.passed(part);
    return;
  }
  const failures: ParityFailure[] = verdict.failures;
  for (const failure of failures) {
    const name = part === failure.part ? part : `${part}: ${failure.part}`;
    if (failure.usage === true) builder.usage(name, failure.message);
    else builder.fail(name, failure.message, failure.differences, failure.totalDifferences);
  }
}

/** ` from leaves [8, 5, 4]` for v2 samples that name their tree leaf, else empty. */
function leavesOf(run: SessionParityRun): string {
  const ids = run.samples.map((sample) => (sample.metadata.leaf as { node_id?: unknown } | undefined)?.node_id);
  return ids.length > 0 && ids.every((id) => typeof id === "number") ? `, from leaves [${ids.join(", ")}]` : "";
}
