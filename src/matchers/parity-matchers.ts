// The scenario matchers (retry topology, agent metadata, tool-call round trips, payload parity, well-formed samples), each with `.not`.
// Thin wrappers over the pure checks; a value a check cannot read is a usage error, thrown even under `.not`.
import type { MatcherContext, SyncExpectationResult } from "expect";
import { checkAgentMetadata } from "./agent-metadata";
import { formatVerdict, usageFailures, type ParityVerdict } from "./parity-verdict";
import { checkRetryTopology } from "./retry-topology";
import { checkToolCallRoundTrips, type ToolCallRoundTripOptions } from "./tool-call-round-trip";
import { checkTrainingPayloadParity, type TrainingPayloadParityOptions } from "./training-payload-parity";
import { checkTrainingSampleInvariants, type TrainingSampleInvariantOptions } from "./sample-invariants";
import type { RetryTopology, ToolCallRoundTrip } from "./weather-expectations";
import { notifyVerdict } from "./verdict-observers";

/** Tells the verdict observers (the HTML reporter's recorder) what a matcher concluded. */
function observe(context: MatcherContext, matcher: string, received: unknown, expected: unknown, verdict: ParityVerdict): void {
  notifyVerdict({ matcher, received, expected, verdict, isNot: context.isNot === true, testPath: context.testPath, testName: context.currentTestName });
}

function hint(context: MatcherContext, name: string, secondArgument?: string, expectedLabel?: string): string {
  return context.utils.matcherHint(name, undefined, expectedLabel, { isNot: context.isNot, promise: context.promise, secondArgument });
}

function result(
  context: MatcherContext,
  name: string,
  verdict: ParityVerdict,
  failedHeadline: string,
  passedHeadline: string,
  extra = "",
  secondArgument?: string,
  expectedLabel?: string,
): SyncExpectationResult {
  const usage = usageFailures(verdict);
  // A wrong argument is never "not matching": under .not it would otherwise pass silently.
  if (usage.length > 0) throw new TypeError(`${name}: ${usage.map((failure) => failure.message).join("; ")}`);
  // A run that failed on a server problem proves neither parity nor a difference: `.not` must not pass on it.
  const problems = verdict.failures.filter((failure) => failure.serverProblem === true);
  if (problems.length > 0 && context.isNot === true) throw new Error(`${name}: ${problems.map((failure) => failure.message).join("; ")}`);
  const head = hint(context, name, secondArgument, expectedLabel);
  if (verdict.pass) {
    return { pass: true, message: () => `${head}\n\n${passedHeadline}\nChecked: ${verdict.checkedParts.join(", ")}; every part passed, so .not fails.` };
  }
  const parts = verdict.failures.map((failure) => failure.part);
  const distinct = [...new Set(parts)];
  return {
    pass: false,
    message: () => `${head}\n\n${failedHeadline} (${distinct.length === 1 ? "part" : "parts"} ${distinct.join(", ")}):\n${formatVerdict(verdict)}${extra}`,
  };
}

/**
 * `expect(v2Run).toHaveRetryTopology({nodes, leaves, selectedLeaf?})` (also on a bare `tree` object): the tree's
 * `(id, parent)` nodes and `(node_id, path_node_ids)` leaves equal the expected ones and, with `selectedLeaf`, the run
 * kept exactly that leaf. The failure prints both trees as indented ASCII and the first differing node or leaf.
 */
export function toHaveRetryTopology(this: MatcherContext, received: unknown, expected: RetryTopology): SyncExpectationResult {
  const verdict = checkRetryTopology(received, expected);
  observe(this, "toHaveRetryTopology", received, expected, verdict);
  const indent = (text: string): string =>
    text
      .split("\n")
      .map((line) => `  ${line}`)
      .join("\n");
  const trees =
    `\n\n${verdict.firstDifference === null ? "" : `First difference: ${verdict.firstDifference}\n\n`}` +
    `Received tree:\n${verdict.receivedTree === null ? "  (none)" : indent(verdict.receivedTree)}\n\nExpected tree:\n${indent(verdict.expectedTree)}`;
  return result(
    this,
    "toHaveRetryTopology",
    verdict,
    "The retry tree does not have the expected topology",
    "The retry tree has the expected topology.",
    verdict.pass ? "" : trees,
  );
}

/**
 * `expect(run).toMatchAgentMetadata(expected, { subset? })`: a v2 run's `sessionMetadata.agent` equals `expected`
 * (with `subset: true`: holds each expected key), and every
 * sample's metadata holds each expected key with a bitwise-equal value. The failure names the key and the sample.
 */
export function toMatchAgentMetadata(
  this: MatcherContext,
  received: unknown,
  expected: Readonly<Record<string, unknown>>,
  options?: { subset?: boolean },
): SyncExpectationResult {
  const verdict = checkAgentMetadata(received, expected, { subset: options?.subset });
  return result(
    this,
    "toMatchAgentMetadata",
    verdict,
    "The run does not carry the expected agent metadata",
    "The run carries the expected agent metadata.",
    "",
    options === undefined ? undefined : "options",
  );
}

/**
 * `expect(runOrSnapshot).toRoundTripToolCalls([{call, result, name, arguments}, ...], options?)`: every record
 * advertised exactly the expected tools, record `call` holds exactly that tool call with those parsed arguments,
 * and record `result`'s last request message is the tool message answering that call id.
 */
export function toRoundTripToolCalls(
  this: MatcherContext,
  received: unknown,
  expected: readonly ToolCallRoundTrip[],
  options?: ToolCallRoundTripOptions,
): SyncExpectationResult {
  const verdict = checkToolCallRoundTrips(received, expected, options);
  return result(
    this,
    "toRoundTripToolCalls",
    verdict,
    "The session's records do not show the expected tool-call round trips",
    "The session's records show the expected tool-call round trips.",
    "",
    options === undefined ? undefined : "options",
  );
}

/**
 * `expect(v1Run).toHaveTrainingPayloadParity(v2Run, options?)`: the whole v1/v2 parity check of
 * {@link checkTrainingPayloadParity}. The failure names each failing part and shows its differences (left v1, right v2).
 */
export function toHaveTrainingPayloadParity(
  this: MatcherContext,
  received: unknown,
  v2Run: unknown,
  options?: TrainingPayloadParityOptions,
): SyncExpectationResult {
  const verdict = checkTrainingPayloadParity(received, v2Run, options);
  observe(this, "toHaveTrainingPayloadParity", received, v2Run, verdict);
  return result(
    this,
    "toHaveTrainingPayloadParity",
    verdict,
    "The v1 run (received, left) and the v2 run (expected, right) do not carry the same training payload",
    "The v1 and v2 runs carry the same training payload.",
    "",
    options === undefined ? undefined : "options",
  );
}

/**
 * `expect(sample).toBeWellFormedTrainingSample(options?)`: the sample satisfies every rule of
 * {@link checkTrainingSampleInvariants}; the failure names each broken rule and the offending entries.
 */
export function toBeWellFormedTrainingSample(this: MatcherContext, received: unknown, options?: TrainingSampleInvariantOptions): SyncExpectationResult {
  const verdict = checkTrainingSampleInvariants(received, options);
  return result(
    this,
    "toBeWellFormedTrainingSample",
    verdict,
    "The sample is not a well-formed training sample",
    "The sample is a well-formed training sample.",
    "",
    undefined,
    options === undefined ? "" : "options",
  );
}
