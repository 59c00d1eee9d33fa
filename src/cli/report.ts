// The report of one `session-parity run`: what ran where, each pair's verdicts with their differences, timings.
// Plain JSON data (what `--json FILE` writes); the summary table and failure listing are rendered from it.
import type { BitwiseDifference } from "../matchers/bitwise-types";
import { formatDifference } from "../matchers/format-differences";
import type { ToolCallFailureMode } from "../agent/weather-agent";
import type { SessionServerVersion } from "../server/types";
import type { ConfigurationCheck } from "./configuration-check";

/** One bitwise difference as the report stores it: its path, its kind and the line the matchers print. */
export interface ReportDifference {
  /** Path of the differing leaf, e.g. `sample.loss_mask[3]`. */
  path: string;
  /** Kind of difference (`value`, `missing`, `length`, `type`, ...). */
  reason: string;
  /** The line `toBeBitwiseEqual` prints for it. */
  text: string;
}

/** One failed part of a check (e.g. the `samples` part of the payload-parity check). */
interface ReportCheckFailure {
  /** Which part failed. */
  part: string;
  /** What the matcher says about it. */
  message: string;
  /** The first differences of that part (empty when the part is not a bitwise comparison). */
  differences: ReportDifference[];
  /** How many leaves differ in total (at least `differences.length`). */
  totalDifferences: number;
  /**
   * The differing number sequences (tokens, loss masks, log-probs, accumulated ids) as aligned runs, one line each,
   * token runs decoded: `sample.tokens: +4 tokens in v1 at 242 ("<think>\n\n</think>\n\n"), then equal for 360`.
   */
  hunks: string[];
}

/** Verdict of one check on one trajectory pair. */
export interface ReportCheck {
  /** True when every part of the check passed. */
  pass: boolean;
  /** The failing parts, in check order (empty when it passed). */
  failures: ReportCheckFailure[];
}

/** One trajectory through one session-server version. */
export interface ReportRun {
  /** Input sample index (the same for the v1 and v2 run of a pair). */
  trajectory: number;
  /** Which session-server version the run went through. */
  version: SessionServerVersion;
  /** Session id the run used (null when no session could be created). */
  sessionId: string | null;
  /** The session server instance the run's chat requests went to (null when none was sent). */
  server: string | null;
  /** Records on the session's active path right before the collect. */
  records: number;
  /** Chat requests the agent sent to the session. */
  requests: number;
  /** Training samples the collect returned. */
  samples: number;
  /** `empty_reason` of the samples reply, if any. */
  emptyReason: string | null;
  /** What went wrong during the run (agent, snapshot, collect or decode), if anything. */
  failure: string | null;
  /** Milliseconds from the start of the batch to the start of this run. */
  startedMs: number;
  /** Wall time of the run in milliseconds (session create to delete). */
  wallMs: number;
}

/** The verdicts of one v1/v2 pair. */
export interface ReportTrajectory {
  /** Input sample index of the pair. */
  trajectory: number;
  /** True when every check passed. */
  pass: boolean;
  /**
   * Why the pair has no verdict: a run met a server problem (non-2xx, no reply, undecodable reply) or could not
   * start, so the payloads were never compared. Null when both runs completed and were judged.
   */
  error: string | null;
  /** The `toHaveTrainingPayloadParity` check of the v1 run against the v2 run. */
  parity: ReportCheck;
  /** The `toHaveRetryTopology` check of the v2 run (null when no expected topology applies, e.g. `--cycles` > 1). */
  topology: ReportCheck | null;
}

/** A server the run talked to. */
export interface ReportServer {
  /** Base URL (comma-separated for several instances). */
  url: string | null;
  /** `embedded` when the run started it, `given` when it came from a flag or an environment variable. */
  origin: "embedded" | "given" | "unused";
  /** Body of its `GET /health` reply when it answered one. */
  health?: unknown;
}

/** Everything `session-parity run` found out, as written by `--json`. */
export interface ParityReport {
  /** Report format version. */
  reportVersion: 1;
  /** Package and runtime versions. */
  versions: { package: string; node: string; sessionServers: SessionServerVersion[] };
  /** When the run started (ISO 8601). */
  startedAt: string;
  /** The effective options. */
  options: {
    batch: number;
    cycles: number;
    latencyMs: number;
    hfCheckpoint: string | null;
    /** The agent's fallback when a tool-result step finds no tool call. */
    toolCallFailureMode: ToolCallFailureMode;
    /** Whether the session-verify gate was applied (`--verify-gate`). */
    verifyGate: boolean;
  };
  /** The session-verify gate of each version's batch (`--verify-gate`; null when not asked for). */
  gate: { v1: ReportCheck; v2: ReportCheck } | null;
  /** The backend and the two session servers, and where each came from. */
  servers: { backend: ReportServer; v1: ReportServer; v2: ReportServer };
  /**
   * What each side renders with (family, template source, default kwargs; null when its `/health` does not say) and,
   * when the two differ, the configuration problem naming the flag that aligns them (reported before any difference).
   */
  configuration: ConfigurationCheck;
  /**
   * Pairs run, passed and failed (an ERROR pair counts as failed); `pass` when none failed. `serverProblems` counts
   * the runs that failed on a server problem (a non-2xx, missing or undecodable reply, or a run that could not start)
   * rather than a payload difference, `firstServerProblem` names the first; `configurationProblem` marks failures
   * explained by two differently configured sides.
   */
  summary: {
    trajectories: number;
    passed: number;
    failed: number;
    pass: boolean;
    serverProblems: number;
    firstServerProblem: string | null;
    /** True when some pair failed while the two sides are configured differently (`configuration.problem`): exit 2, not a parity FAIL. */
    configurationProblem: boolean;
  };
  /** Wall times of the run's phases, in milliseconds. */
  timings: {
    /** Starting (or probing) the servers. */
    startupMs: number;
    /** Running every trajectory of both versions (they run concurrently). */
    trajectoriesMs: number;
    /** Judging every pair. */
    judgeMs: number;
    /** Whole command, from the process's start (under the CLI) to the report. */
    totalMs: number;
    /** The floor of one trajectory on the embedded backend: chat calls per trajectory × latency (null for a given backend). */
    floorMs: number | null;
  };
  /** Chat requests sent in total, over both versions. */
  requests: number;
  /** Warnings the embedded session servers logged (e.g. the picker's retry notes), deduplicated with counts. */
  warnings: { message: string; count: number }[];
  /** One entry per pair, in trajectory order. */
  trajectories: ReportTrajectory[];
  /** Every run, 2 × batch of them: trajectory order, v1 before v2. */
  runs: ReportRun[];
}

/** Converts the matchers' differences to report entries. */
export function toReportDifferences(differences: readonly BitwiseDifference[]): ReportDifference[] {
  return differences.map((difference) => ({ path: difference.path, reason: difference.reason, text: formatDifference(difference) }));
}
