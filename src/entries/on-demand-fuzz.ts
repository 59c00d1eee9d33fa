// The fuzzer's two entry points as thin functions that load the runner (servers, mock, agent) on first call,
// so importing the package root costs no server, msw or tokenizer code.
import type { FuzzEnvironment, FuzzEnvironmentOptions } from "../fuzz/environment";
import type { FuzzOptions, FuzzReport } from "../fuzz/runner";
import type { ScheduleVerdict } from "../fuzz/checks";
import type { AgentSchedule } from "../fuzz/schedule";
import { explainEsmLoadError } from "./esm-load-hint";
import { PEERS_OF, requirePeers } from "../peers/optional-peers";

/**
 * Draws `runs` agent schedules from the grammar with `seed`, runs them `concurrency` at a time through v1 and v2
 * (embedded reference servers unless URLs are given), checks each server against the protocol model and the two
 * training payloads against each other, and shrinks the first failing schedule to its smallest form.
 * Pair the report with `expect(report).toHaveAgenticParity()`.
 *
 * @param options - Runs, seed, maximum steps, concurrency and the servers to fuzz.
 * @returns The report: schedules per outcome, failures and the shrunk counterexample, if any.
 * @throws FuzzUsageError on bad options; start-up errors of the servers as they are.
 */
export async function fuzzAgenticParity(options: FuzzOptions = {}): Promise<FuzzReport> {
  try {
    requirePeers("fuzzAgenticParity()", PEERS_OF.fuzzer);
    const implementation = await import("../fuzz/runner");
    return await implementation.fuzzAgenticParity(options);
  } catch (error) {
    return explainEsmLoadError(error, "fuzzAgenticParity");
  }
}

/**
 * Replays one schedule (e.g. a counterexample printed by the fuzzer) through v1 and v2 and returns its verdict.
 * Pair it with `expect(verdict).toHaveAgenticParity()`.
 *
 * @param schedule - The schedule to replay.
 * @param options - Servers to use (embedded reference servers by default), an open environment, a salt.
 */
export async function replayAgentSchedule(
  schedule: AgentSchedule,
  options: FuzzEnvironmentOptions & { environment?: FuzzEnvironment; salt?: number } = {},
): Promise<ScheduleVerdict> {
  try {
    requirePeers("replayAgentSchedule()", PEERS_OF.fuzzer);
    const implementation = await import("../fuzz/runner");
    return await implementation.replayAgentSchedule(schedule, options);
  } catch (error) {
    return explainEsmLoadError(error, "replayAgentSchedule");
  }
}
