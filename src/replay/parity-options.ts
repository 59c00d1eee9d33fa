// The payload-parity options a replayed conversation is judged with: the recorded conversation is the scenario, so
// none of the weather run's expectations apply. Pure and tiny, so the package root can export it without loading servers.
import type { TrainingPayloadParityOptions } from "../matchers/training-payload-parity";

/**
 * Options of `toHaveTrainingPayloadParity` / `checkTrainingPayloadParity` for runs of `replayConversations`: no
 * weather expectations (record count, tool round trips, retry topology, agent counters); the samples, the session
 * metadata and each sample's well-formedness are compared as for the weather runs.
 */
export const REPLAY_PARITY_OPTIONS: Readonly<TrainingPayloadParityOptions> = Object.freeze({
  recordCount: null,
  toolCalls: null,
  agentMetadata: null,
  topology: null,
});
