// The one-call API of the verifier: load what the options name, run every check, return the structured report.
// Same inputs and report as `session-parity verify-template`.
import { loadTemplateVerifyPlan, type VerifyTemplateOptions } from "./load-plan";
import type { TemplateVerifyReport } from "./types";
import { verifyChatTemplate } from "./verify-template";

/**
 * Verifies that a chat template is append-safe and, with `titoModel`, that the family's token-in/token-out merge
 * reproduces the canonical render (miles' scripts/tools/verify_chat_template.py).
 * @throws TemplateVerifyLoadError when the checkpoint, template or family cannot be loaded or the kwargs conflict
 */
export async function verifyTemplate(options: VerifyTemplateOptions = {}): Promise<TemplateVerifyReport> {
  return verifyChatTemplate(await loadTemplateVerifyPlan(options));
}
