// Runs a chat-template verification plan over the trajectory pool and gathers the structured report.
// The loop of miles' run_all_checks / run_all_checks_via_tito: filter, expand positions and variants, check both layers.
import type { ChatTemplateKwargs } from "../tokenizer/types";
import { caseId, coverageOf, selectTrajectories, thinkingVariants } from "./cases";
import { checkTextLayer, checkTitoLayer, hasTitoAppendix, type CheckOutcome } from "./checks";
import { classifyTrajectory, VERIFY_TRAJECTORIES } from "./trajectories";
import { THINKING_MODES, type TemplateVerifyPlan, type TemplateVerifyReport, type VerifyCaseResult, type VerifyLayer } from "./types";

/**
 * Checks every selected trajectory at every pretokenize position under every thinking variant: the text layer
 * always, the TITO layer when the plan has a family (positions whose next message is an assistant turn have no
 * appendix and get the text layer only). Each case builds its render target and family afresh with
 * `{...variant, ...templateKwargs}`, as miles rebuilds its TITO tokenizer per case.
 * @throws TypeError when `plan.thinking` is not off, on or both
 */
export function verifyChatTemplate(plan: TemplateVerifyPlan): TemplateVerifyReport {
  if (!THINKING_MODES.includes(plan.thinking)) {
    throw new TypeError(`verifyChatTemplate: thinking must be one of ${THINKING_MODES.join(", ")}, got ${JSON.stringify(plan.thinking)}`);
  }
  const pool = (plan.trajectories ?? VERIFY_TRAJECTORIES).map(classifyTrajectory);
  const selected = selectTrajectories(pool, plan.allowedAppendRoles, plan.thinking);
  const results: VerifyCaseResult[] = [];
  for (const trajectory of selected) {
    for (const variant of thinkingVariants(plan.thinking)) {
      const kwargs: ChatTemplateKwargs = { ...variant, ...plan.templateKwargs };
      const renderer = plan.renderer(kwargs);
      const family = plan.family?.(kwargs);
      for (const position of trajectory.pretokenizePositions) {
        const label = (layer: VerifyLayer, outcome: CheckOutcome): VerifyCaseResult => ({
          id: caseId(trajectory.name, position, kwargs),
          layer,
          trajectory: trajectory.name,
          position,
          kwargs,
          ...outcome,
        });
        results.push(label("text", checkTextLayer(renderer, trajectory.messages, position, trajectory.tools)));
        if (family !== undefined && hasTitoAppendix(trajectory.messages, position)) {
          results.push(label("tito", checkTitoLayer(family, trajectory.messages, position, trajectory.tools)));
        }
      }
    }
  }
  const passed = results.filter((result) => result.passed).length;
  return {
    titoModel: plan.titoModel,
    templateSource: plan.templateSource,
    allowedAppendRoles: [...plan.allowedAppendRoles],
    thinking: plan.thinking,
    templateKwargs: { ...plan.templateKwargs },
    autoSetKwargs: { ...(plan.autoSetKwargs ?? {}) },
    selectedTrajectories: selected.length,
    poolTrajectories: pool.length,
    coverage: coverageOf(pool, selected),
    results,
    summary: { checks: results.length, passed, failed: results.length - passed, pass: results.length > 0 && passed === results.length },
  };
}
