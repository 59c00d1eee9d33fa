// The v2 samples a replay sets aside: a reply dropped by a retry at the first recorded reply is a root leaf, and miles'
// default picker keeps every root leaf (v1 rolls that attempt back), so its sample is the design's, not a difference.
import type { Sample } from "../wire/sample";
import type { ReplayPlan } from "./replay-plan";

/** Retry schedules whose first attempt the agent drops (rewinds) rather than answers. */
const DROPPING = new Set(["pure_retry", "divergent_retry", "tool_call_failure_rollback"]);

/**
 * The weight versions of the injected attempts dropped at the conversation's first recorded reply: each such attempt
 * is a root node of v2's tree whose only record carries that version.
 */
function droppedRootVersions(plan: ReplayPlan): Set<string> {
  const first = plan.calls[0]?.turn;
  const versions = new Set<string>();
  for (const call of plan.calls) {
    if (call.turn !== first) break;
    if (call.injected !== null && DROPPING.has(call.injected)) versions.add(plan.replies[call.call].weight_version);
  }
  return versions;
}

/**
 * Splits v2's samples into those compared with v1's and those set aside: a sample whose every weight version is a
 * dropped first-reply attempt's is the root leaf miles' `drop_retries` keeps (`miles/rollout/session/v2/picker_hub/
 * drop_retries.py`: "No later sibling -> keep (root leaves included)"), which v1 never produces.
 */
export function setAsideDroppedRoots(plan: ReplayPlan, samples: readonly Sample[]): { kept: Sample[]; setAside: Sample[] } {
  const versions = droppedRootVersions(plan);
  const kept: Sample[] = [];
  const setAside: Sample[] = [];
  for (const sample of samples) {
    const dropped = versions.size > 0 && sample.weight_versions.length > 0 && sample.weight_versions.every((version) => versions.has(version));
    (dropped ? setAside : kept).push(sample);
  }
  return { kept, setAside };
}
