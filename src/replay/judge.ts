// Judges what v1 and v2 did with one replayed conversation: the calls' statuses, then the payload-parity check the
// matchers use. Pure: observations in, a PASS / FAIL / ERROR row with its failure kind and first differing leaves out.
import { formatDifference } from "../matchers/format-differences";
import type { ParityVerdict } from "../matchers/parity-verdict";
import { checkTrainingPayloadParity } from "../matchers/training-payload-parity";
import type { ReplayObservation } from "./drive-conversation";
import { REPLAY_PARITY_OPTIONS } from "./parity-options";
import type { ReplayPlan } from "./replay-plan";

/** One failing part of the parity check, as plain data (what `--json` writes). */
interface ReplayFailurePart {
  part: string;
  message: string;
  /** The first differing leaves: path and the line the matchers print. */
  differences: Array<{ path: string; text: string }>;
  totalDifferences: number;
}

function failureParts(verdict: ParityVerdict): ReplayFailurePart[] {
  return verdict.failures.map((failure) => ({
    part: failure.part,
    message: failure.message,
    differences: failure.differences.map((difference) => ({ path: difference.path, text: formatDifference(difference) })),
    totalDifferences: failure.totalDifferences,
  }));
}

/** How a conversation ended. */
type ReplayVerdictStatus = "PASS" | "FAIL" | "ERROR";

/** The verdict of one conversation. */
export interface ReplayVerdict {
  status: ReplayVerdictStatus;
  /** The failure kind the summary counts (a parity part such as `training sample`, `status differs`, `server problem`, ...); null on PASS. */
  kind: string | null;
  /** The cause in one line (ERROR) or the first failing part's message (FAIL); null on PASS. */
  cause: string | null;
  /** Message index the cause points at, when it points at one. */
  messageIndex: number | null;
  /** The failing parts of the parity check (empty on PASS and when the payloads were never compared). */
  failures: ReplayFailurePart[];
  /** True when the failure is the servers' (no reply, 404, 5xx, an unreadable collect), not the conversation's. */
  serverProblem: boolean;
}

const CAUSE_CHARS = 300;

function short(text: string): string {
  return text.length <= CAUSE_CHARS ? text : `${text.slice(0, CAUSE_CHARS)}… (${text.length - CAUSE_CHARS} more characters)`;
}

function isServerProblem(status: number): boolean {
  return status === 0 || status === 404 || status >= 500;
}

/** Judges one conversation's two observations against each other. */
export function judgeReplay(plan: ReplayPlan, v1: ReplayObservation, v2: ReplayObservation): ReplayVerdict {
  const turnOf = (call: number): number | null => plan.calls[call]?.turn ?? null;
  const at = (call: number): string => `conversation ${plan.conversation}, message ${turnOf(call)}`;
  for (const observation of [v1, v2]) {
    const broken = observation.calls.find((call) => isServerProblem(call.status));
    if (broken !== undefined) {
      const what = broken.status === 0 ? "no reply" : `status ${broken.status}`;
      return {
        status: "ERROR",
        kind: "server problem",
        cause: `${observation.version} answered call ${broken.call} (${at(broken.call)}) with ${what}${broken.error === undefined ? "" : `: ${short(broken.error)}`}`,
        messageIndex: turnOf(broken.call),
        failures: [],
        serverProblem: true,
      };
    }
  }
  const calls = Math.max(v1.calls.length, v2.calls.length);
  for (let i = 0; i < calls; i += 1) {
    const a = v1.calls[i];
    const b = v2.calls[i];
    if (a?.status === b?.status) {
      if (a !== undefined && a.status !== 200) {
        return {
          status: "ERROR",
          kind: "refused by both servers",
          cause: `both servers refused call ${i} (${at(i)}) with status ${a.status}: ${short(a.error ?? "")}`,
          messageIndex: turnOf(i),
          failures: [],
          serverProblem: false,
        };
      }
      continue;
    }
    const said = (version: string, call: typeof a): string =>
      call === undefined ? `${version} made no such call` : `${version} ${call.status}${call.error === undefined ? "" : ` (${short(call.error)})`}`;
    return {
      status: "FAIL",
      kind: "status differs",
      cause: `call ${i} (${at(i)}): ${said("v1", a)}, ${said("v2", b)}`,
      messageIndex: turnOf(i),
      failures: [],
      serverProblem: false,
    };
  }
  for (const observation of [v1, v2]) {
    if (observation.run.failure !== undefined) {
      return {
        status: "ERROR",
        kind: "server problem",
        cause: `${observation.version}: ${short(observation.run.failure)}`,
        messageIndex: null,
        failures: [],
        serverProblem: true,
      };
    }
  }
  const verdict = checkTrainingPayloadParity(v1.run, v2.run, REPLAY_PARITY_OPTIONS);
  if (verdict.pass) return { status: "PASS", kind: null, cause: null, messageIndex: null, failures: [], serverProblem: false };
  const failures = failureParts(verdict);
  return { status: "FAIL", kind: failures[0].part, cause: short(failures[0].message), messageIndex: null, failures, serverProblem: false };
}
