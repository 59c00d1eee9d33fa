// The replay fixture as a thin function that loads its implementation (servers, mock, undici) on first call,
// so importing the package root costs none of them.
import type { ReplayConversationsOptions, ReplayedConversationRun } from "../replay/replay-conversations";
import { PEERS_OF, requirePeers } from "../peers/optional-peers";
import { explainEsmLoadError } from "./esm-load-hint";

/**
 * Replays recorded conversations — miles' `--save-debug-trajectory-data` rows or OpenAI chat records, from a file
 * (`.jsonl`, `.jsonl.gz`) or given inline — through one session-server version, every recorded assistant message
 * played by the mock as the model's reply in the family's wire format, with retries injected when asked. Returns one
 * run per conversation in corpus order; compare a v1 run with the v2 run of the same index with
 * `expect(v1[i]).toHaveTrainingPayloadParity(v2[i], REPLAY_PARITY_OPTIONS)`.
 *
 * @param options - The corpus, the version, the retries and where the servers are (embedded by default).
 * @returns One parity run per conversation; a refused call sets the run's `failure`.
 * @throws ReplayCorpusError naming every malformed line and unrenderable conversation (image part, refused role,
 *   no final assistant message, a tool call without a result); Error on bad options.
 */
export async function replayConversations(options: ReplayConversationsOptions): Promise<ReplayedConversationRun[]> {
  try {
    requirePeers("replayConversations()", PEERS_OF.servers);
    const implementation = await import("../replay/replay-conversations");
    return await implementation.replayConversations(options);
  } catch (error) {
    return explainEsmLoadError(error, "replayConversations");
  }
}
