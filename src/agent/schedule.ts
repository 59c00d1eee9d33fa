// Builds the weather agent's driver schedule from the chat template's allowed append roles and a cycle count.
// Pure data: the agent walks the returned action list, one chat call after each action (SPEC §10).

/** Roles a chat template may allow to be appended after a generated turn, in canonical order. */
const VALID_APPEND_ROLES = ["tool", "user", "system", "assistant"] as const;

/** One appendable role. */
export type AppendRole = (typeof VALID_APPEND_ROLES)[number];

/** Append roles of the Qwen3 append-safe template (all four). */
export const QWEN3_APPEND_ROLES: readonly AppendRole[] = VALID_APPEND_ROLES;

/** One step of the driver schedule; each is followed by one chat call. */
export type DriverAction = "tool_result" | "user_followup" | "system_reminder" | "rollback" | "force_final" | "assistant_input";

/**
 * The action list the agent runs after its initial call.
 *
 * One cycle is `tool_result`, then `user_followup, tool_result` when `user` is allowed, then
 * `system_reminder` when `system` is allowed, then `rollback`. The first cycle is followed by an extra
 * `rollback` (two rollbacks in a row), the cycle repeats `cycles - 1` more times, then `force_final`
 * when `user` is allowed and `assistant_input` when `assistant` is allowed.
 *
 * @throws Error on an unknown role, a role list without `tool`, or `cycles` that is not an integer >= 1.
 */
export function buildDriverSchedule(allowedRoles: Iterable<string>, cycles: number): DriverAction[] {
  const roles = new Set<string>(allowedRoles);
  const unknown = [...roles].filter((role) => !(VALID_APPEND_ROLES as readonly string[]).includes(role)).sort();
  if (unknown.length > 0) {
    throw new Error(`buildDriverSchedule: unknown append roles ${JSON.stringify(unknown)}; valid roles are ${VALID_APPEND_ROLES.join(", ")}`);
  }
  if (!roles.has("tool")) {
    throw new Error(`buildDriverSchedule: the weather agent needs the "tool" append role, got ${JSON.stringify([...roles].sort())}`);
  }
  if (!Number.isSafeInteger(cycles) || cycles < 1) {
    throw new Error(`buildDriverSchedule: cycles must be an integer >= 1, got ${String(cycles)}`);
  }
  const cycle: DriverAction[] = ["tool_result"];
  if (roles.has("user")) cycle.push("user_followup", "tool_result");
  if (roles.has("system")) cycle.push("system_reminder");
  cycle.push("rollback");

  const schedule: DriverAction[] = [...cycle, "rollback"];
  for (let i = 1; i < cycles; i++) schedule.push(...cycle);
  if (roles.has("user")) schedule.push("force_final");
  if (roles.has("assistant")) schedule.push("assistant_input");
  return schedule;
}
