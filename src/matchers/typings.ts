// Type declarations of the session-parity matchers for both import styles: `@jest/globals` / `expect`
// (module augmentation) and the `jest` global namespace of @types/jest. Loaded by `import "jest-session-parity"`.
import type { BitwiseEqualTo } from "./bitwise-equal-to";
import type { BitwiseOptions } from "./bitwise-types";
import type { ToolCallRoundTripOptions } from "./tool-call-round-trip";
import type { TrainingPayloadParityOptions } from "./training-payload-parity";
import type { TrainingSampleInvariantOptions } from "./sample-invariants";
import type { SessionVerifyGateOptions } from "./session-verify-gate";
import type { RetryTopology, ToolCallRoundTrip } from "./weather-expectations";
import type { SessionParityRun } from "../fixture/types";
import type { BitwiseSnapshotOptions } from "../snapshot/to-match-bitwise-snapshot";

/** The session-parity matchers as they appear on `expect(value)`. */
export interface SessionParityMatchers<R> {
  /**
   * Passes when received and expected have equal bit trees: numbers by float64 bits (`0` ≠ `-0`),
   * typed arrays and Tensors by dtype, shape and bytes, declared-field classes field by field with no
   * undeclared property. The failure message lists the first differing leaves and the total count.
   */
  toBeBitwiseEqual(expected: unknown, options?: BitwiseOptions): R;
  /**
   * On a v2 run, a bare `tree`, or a hand-built tree in the same tuple shape as `expected`: nodes `[id, parent]` and leaves `[nodeId, pathNodeIds]` equal the expected
   * ones in seq order and, with `selectedLeaf`, the run kept exactly that leaf. Prints both trees on failure.
   */
  toHaveRetryTopology(expected: RetryTopology): R;
  /**
   * On a run: v2's `sessionMetadata.agent` equals `expected` exactly (with `{ subset: true }`: holds each expected
   * key, extra keys allowed), and every sample's metadata holds each expected key with a bitwise-equal value.
   */
  toMatchAgentMetadata(expected: Readonly<Record<string, unknown>>, options?: { subset?: boolean }): R;
  /**
   * On a run or a `preCollect` snapshot: every record advertised exactly the expected tools, record `call` holds
   * that one tool call with those parsed arguments, record `result` ends with the tool message answering it.
   */
  toRoundTripToolCalls(expected: readonly ToolCallRoundTrip[], options?: ToolCallRoundTripOptions): R;
  /**
   * On a v1 run: the v2 run of the same input carries the same training payload (every part of the parity
   * check, named on failure with its differences).
   */
  toHaveTrainingPayloadParity(v2Run: SessionParityRun, options?: TrainingPayloadParityOptions): R;
  /**
   * Pins the received value's bit tree in the runner's snapshot file (numbers as float64 bits, typed arrays and
   * Tensors with dtype and shape, large ones as a SHA-256). `-u`, `--ci` and obsolete reporting are the runner's;
   * a mismatch lists the differing leaves like toBeBitwiseEqual. Sample metadata goes through
   * `trainingMetadataProjection` unless `options.metadataProjection` says otherwise.
   */
  toMatchBitwiseSnapshot(hint?: string, options?: BitwiseSnapshotOptions): R;
  toMatchBitwiseSnapshot(options: BitwiseSnapshotOptions): R;
  /**
   * On the report of `fuzzAgenticParity` (or the verdict of `replayAgentSchedule`): no schedule broke the model or
   * parity. Fails with the shrunk counterexample in words and a ready-to-paste Jest test that replays it.
   */
  toHaveAgenticParity(): R;
  /**
   * On a training sample: token ids are non-negative integers, `loss_mask` entries 0 or 1, log-probs finite and
   * ≤ 0, `loss_mask` / `rollout_log_probs` / `response_length` of one length, `tokens` at least that long,
   * `weight_versions` one per record (with `recordCount`), replay tensors with `len(tokens) - 1` rows.
   */
  toBeWellFormedTrainingSample(options?: TrainingSampleInvariantOptions): R;
  /**
   * On the runs of `runAgenticRetryTrajectories` (or their samples, or one of either): miles' session-verify gate.
   * Every sample carries `tito_session_mismatch` with no `special_token_count` / `special_token_type` /
   * `non_assistant_text` entry and every required driver event (`rollback`, plus `append_user` / `append_system` /
   * `append_assistant` for the allowed roles); some sample appended a tool result; the share of samples with an
   * `assistant_text` mismatch is at most the threshold (miles' per-family value, else 0.2). Failures name the
   * sample, the mismatch type and its token span.
   */
  toPassSessionVerifyGate(options?: SessionVerifyGateOptions): R;
}

/** What `expect.toBeBitwiseEqual(...)` returns: the runner's asymmetric form of the matcher. */
export interface SessionParityAsymmetricMatcher {
  /** True when `other` passes the matcher. */
  asymmetricMatch(other: unknown): boolean;
  /** The matcher's name as the runner's diff prints it. */
  toString(): string;
}

/** The session-parity asymmetric matchers as they appear on `expect` and `expect.not`. */
export interface SessionParityAsymmetricMatchers {
  /** Matches a value bitwise equal to `value` (inside `toEqual`, `toHaveBeenCalledWith`, ...). */
  bitwiseEqualTo(value: unknown, options?: BitwiseOptions): BitwiseEqualTo;
  /**
   * The runner's asymmetric form of `toBeBitwiseEqual` (every `expect.extend` matcher has one): matches a value
   * bitwise equal to `expected`. `bitwiseEqualTo` is the same check with a diff that shows the differing bits.
   */
  toBeBitwiseEqual(expected: unknown, options?: BitwiseOptions): SessionParityAsymmetricMatcher;
}

declare module "expect" {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface Matchers<R extends void | Promise<void>, T = unknown> extends SessionParityMatchers<R> {}
  interface AsymmetricMatchers extends SessionParityAsymmetricMatchers {}
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace jest {
    // T's default must repeat @types/jest's own declaration (`{}`) for the two declarations to merge
    // eslint-disable-next-line @typescript-eslint/no-unused-vars, @typescript-eslint/no-empty-object-type
    interface Matchers<R, T = {}> extends SessionParityMatchers<R> {}
    interface Expect extends SessionParityAsymmetricMatchers {}
    interface InverseAsymmetricMatchers extends SessionParityAsymmetricMatchers {}
  }
}
