// The fixture's two heavy entry points as thin functions that load their implementation on first call.
// Importing the package root therefore costs no HTTP client, no msw, no tokenizer and no server code.
import type { ParityEnvironment, ParityEnvironmentOptions } from "../fixture/parity-environment";
import type { AgenticRetryOptions, SessionParityRun } from "../fixture/types";
import type { AgentParityOptions, AgentParityResult } from "../fixture/agent-parity";
import { explainEsmLoadError } from "./esm-load-hint";
import { PEERS_OF, requirePeers } from "../peers/optional-peers";

/**
 * Runs the weather agent once per input sample through one session-server version and returns one
 * {@link SessionParityRun} per input sample, in input order. Each trajectory opens a session, makes the
 * agent's 9 calls, snapshots the session (`preCollect`), collects and decodes the training samples and deletes
 * the session. Servers come from `options.sessionServerUrls`, else from the global setup's variables, else
 * are started (in process) for the call and stopped before it returns.
 *
 * @param options - Which version, the input samples (see `buildWeatherInputSamples`) and where the servers are.
 * @returns One run per input sample; a failed trajectory yields an aborted copy of its input with `failure` set.
 * @throws Error on bad options, or when a session cannot be created.
 */
export async function runAgenticRetryTrajectories(options: AgenticRetryOptions): Promise<SessionParityRun[]> {
  try {
    requirePeers("runAgenticRetryTrajectories()", PEERS_OF.servers);
    const implementation = await import("../fixture/run-trajectories");
    return await implementation.runAgenticRetryTrajectories(options);
  } catch (error) {
    return explainEsmLoadError(error, "runAgenticRetryTrajectories");
  }
}

/**
 * Starts what a parity run needs and is not given — a mock backend, a v1 and a v2 session server on free
 * loopback ports — and returns their URLs with a `stop()` that shuts down everything it started. Options win
 * over `SESSION_PARITY_BACKEND_URL`, `SESSION_PARITY_V1_URL`, `SESSION_PARITY_V2_URL` and
 * `SESSION_PARITY_HF_CHECKPOINT`. Use it in a `beforeAll` (Vitest, or Jest without the global setup).
 *
 * @param options - URLs to adopt instead of starting parts, latency of the mock backend, tokenizer checkpoint.
 * @returns The running environment.
 * @throws Error naming the part that failed to start, after stopping every part already started; under a Jest
 *   config that does not transform msw's ESM-only dependencies, an Error naming the preset line that does.
 */
export async function startParityEnvironment(options: ParityEnvironmentOptions = {}): Promise<ParityEnvironment> {
  try {
    requirePeers("startParityEnvironment()", PEERS_OF.servers);
    const implementation = await import("../fixture/parity-environment");
    return await implementation.startParityEnvironment(options);
  } catch (error) {
    return explainEsmLoadError(error, "startParityEnvironment");
  }
}

/**
 * Runs your own agent function once through a v1 and once through a v2 session server, both on one deterministic
 * backend (a cassette: replayed, or recorded from `backendUrl` / `cassette.upstream` during the v1 run and replayed for
 * v2), and returns the two runs: `expect(result.v1).toHaveTrainingPayloadParity(result.v2)`. See docs/cassettes.md.
 *
 * @param options - The agent (`({ baseURL, sessionId, signal, version }) => ...`), the cassette or backend, per-version targets.
 * @returns The v1 and v2 runs, marked `scenario: "agent"`.
 * @throws AgentRunError naming the version when the agent throws (with its error) or never calls the session; Error on
 *   bad options or when a server or the cassette cannot be started.
 */
export async function runAgentParity(options: AgentParityOptions): Promise<AgentParityResult> {
  try {
    requirePeers("runAgentParity()", PEERS_OF.servers);
    const implementation = await import("../fixture/agent-parity");
    return await implementation.runAgentParity(options);
  } catch (error) {
    return explainEsmLoadError(error, "runAgentParity");
  }
}
