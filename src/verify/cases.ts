// Which trajectories a verification runs, under which kwargs, and what the selection leaves unexercised.
// Mirrors miles' select_cases, enable_thinking_variants, format_case_id and check_coverage (utils/test_utils/chat_template_verify.py).
import type { ChatTemplateKwargs } from "../tokenizer/types";
import type { ClassifiedTrajectory, CoverageCell, CoverageReport, ThinkingMode } from "./types";

/** The role axis of the coverage grid: `tool` is left out, every session appends it (miles' `role_universe`). */
const COVERAGE_ROLES: readonly string[] = ["system", "user"];

/**
 * Trajectories whose append roles the family allows and whose thinking flag `--thinking` selects: `off` keeps the
 * non-thinking ones, `on` the thinking ones, `both` all of them (miles' `select_cases`).
 */
export function selectTrajectories(
  pool: readonly ClassifiedTrajectory[],
  allowedAppendRoles: ReadonlySet<string>,
  thinking: ThinkingMode,
): ClassifiedTrajectory[] {
  return pool.filter((trajectory) => {
    if (![...trajectory.appendRoles].every((role) => allowedAppendRoles.has(role))) return false;
    if (thinking === "off") return !trajectory.thinking;
    if (thinking === "on") return trajectory.thinking;
    return true;
  });
}

/** The `enable_thinking` variants each case runs under: off `[{}]`, on `[{true}]`, both `[{true}, {false}]`. */
export function thinkingVariants(thinking: ThinkingMode): ChatTemplateKwargs[] {
  if (thinking === "off") return [{}];
  if (thinking === "on") return [{ enable_thinking: true }];
  return [{ enable_thinking: true }, { enable_thinking: false }];
}

/** `<trajectory>-N<n>` then the kwargs in key order: booleans as `key_on` / `key_off`, others as `key=value`. */
export function caseId(trajectory: string, position: number, kwargs: ChatTemplateKwargs): string {
  const base = `${trajectory}-N${position}`;
  const parts = Object.keys(kwargs)
    .sort()
    .map((key) => {
      const value = kwargs[key];
      if (typeof value === "boolean") return `${key}_${value ? "on" : "off"}`;
      return `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`;
    });
  return parts.length === 0 ? base : `${base}-${parts.join("-")}`;
}

function coverageGrid(): CoverageCell[] {
  const subsets: string[][] = [[]];
  for (const role of COVERAGE_ROLES) for (const subset of [...subsets]) subsets.push([...subset, role].sort());
  subsets.sort((a, b) => a.length - b.length || a.join().localeCompare(b.join()));
  return [false, true].flatMap((thinking) => subsets.map((roles) => ({ thinking, roles, trajectories: [] as string[] })));
}

function fill(cells: CoverageCell[], trajectories: readonly ClassifiedTrajectory[]): CoverageCell[] {
  for (const trajectory of trajectories) {
    const roles = [...trajectory.appendRoles].filter((role) => role !== "tool").sort();
    const cell = cells.find((c) => c.thinking === trajectory.thinking && c.roles.join() === roles.join());
    cell?.trajectories.push(trajectory.name);
  }
  return cells;
}

/**
 * The `thinking x {user, system}` grid: cells the pool never covers (miles' global `check_coverage`) and cells this
 * run did not exercise because of the family's roles or `--thinking`.
 */
export function coverageOf(pool: readonly ClassifiedTrajectory[], selected: readonly ClassifiedTrajectory[]): CoverageReport {
  const poolCells = fill(coverageGrid(), pool);
  const runCells = fill(coverageGrid(), selected);
  return {
    poolGaps: poolCells.filter((cell) => cell.trajectories.length === 0),
    notExercised: runCells.filter((cell) => cell.trajectories.length === 0),
    exercised: runCells,
  };
}

/** `thinking    x {system, user}` as the report prints a cell. */
export function describeCell(cell: CoverageCell): string {
  return `${cell.thinking ? "thinking    " : "non-thinking"} x {${cell.roles.join(", ")}}`;
}
