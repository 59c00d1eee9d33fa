// The chat-template verifier's one-call API as a thin function that loads the verifier (tokenizer, Jinja) on first
// call, so importing the package root costs no tokenizer code.
import type { VerifyTemplateOptions } from "../verify/load-plan";
import type { TemplateVerifyReport } from "../verify/types";
import { PEERS_OF, requirePeers } from "../peers/optional-peers";

/**
 * Verifies that a chat template is append-safe and, with `titoModel`, that the family's token-in/token-out merge
 * reproduces the canonical render, over the verifier's agent trajectories (what `session-parity verify-template`
 * runs; miles' scripts/tools/verify_chat_template.py).
 *
 * @param options - Checkpoint, family, template override, kwargs and thinking mode.
 * @returns The structured report: every check with its first divergence, the coverage, the summary.
 * @throws TemplateVerifyLoadError when the checkpoint, template or family cannot be loaded or the kwargs conflict.
 */
export async function verifyTemplate(options: VerifyTemplateOptions = {}): Promise<TemplateVerifyReport> {
  requirePeers("verifyTemplate()", PEERS_OF.tokenizer);
  const implementation = await import("../verify/verify-template-api");
  return implementation.verifyTemplate(options);
}
