// What each side of a parity run renders with (family, template source, default kwargs, from its /health), and the
// configuration problem to report first when the two sides differ: two differently configured servers never match.
import { getTitoFamily } from "../tokenizer/families/registry";

/** One side's model configuration as its `/health` reports it (this package's servers do; others report nothing). */
export interface SideConfiguration {
  /** `--tito-model`. */
  family: string;
  /** `family`, `checkpoint` or `path` (`--chat-template`, `--chat-template-path`). */
  template: string;
  /** The template's file: bundled name, `tokenizer_config.json`, `chat_template.jinja`, or a given file's name. */
  templateOrigin: string;
  /** Default chat-template kwargs in force (after the family's pinned ones). */
  kwargs: Record<string, unknown>;
}

/** Both sides' configurations (null: the server reported none) and the problem when they differ. */
export interface ConfigurationCheck {
  v1: SideConfiguration | null;
  v2: SideConfiguration | null;
  /** What differs and the flag that aligns the sides; null when they agree or a side reported nothing. */
  problem: string | null;
  /**
   * When a side reported nothing and the first token difference is a think block only one side has: the likely
   * cause and the flags that align it (set by the run after judging; null otherwise).
   */
  hint: string | null;
}

type Side = "v1" | "v2";

/** Reads the configuration fields of a `/health` body; null when any is missing (a foreign server). */
function readSideConfiguration(health: unknown): SideConfiguration | null {
  const body = Array.isArray(health) ? (health as unknown[])[0] : health;
  if (body === null || typeof body !== "object") return null;
  const fields = body as Record<string, unknown>;
  const { tito_model: family, chat_template: template, chat_template_origin: origin, chat_template_kwargs: kwargs } = fields;
  if (typeof family !== "string" || typeof template !== "string" || typeof origin !== "string") return null;
  if (kwargs === null || typeof kwargs !== "object" || Array.isArray(kwargs)) return null;
  return { family, template, templateOrigin: origin, kwargs: kwargs as Record<string, unknown> };
}

/** `{"enable_thinking": false}` with a space after each colon and comma, as people type it. */
function kwargsText(kwargs: Record<string, unknown>): string {
  const keys = Object.keys(kwargs);
  if (keys.length === 0) return "{}";
  return `{${keys.map((key) => `${JSON.stringify(key)}: ${JSON.stringify(kwargs[key])}`).join(", ")}}`;
}

/** One side's configuration on one line: `qwen3, family template (qwen3-append-safe.jinja), kwargs {...}`. */
export function describeSideConfiguration(config: SideConfiguration | null): string {
  if (config === null) return "family, template and kwargs not reported (not a jest-session-parity server)";
  return `${config.family}, ${config.template} template (${config.templateOrigin}), kwargs ${kwargsText(config.kwargs)}`;
}

/** The kwargs a flag must name to reproduce `kwargs` (the family's pinned values are added by the server itself). */
function flagKwargs(family: string, kwargs: Record<string, unknown>): Record<string, unknown> {
  let pinned: Readonly<Record<string, unknown>> = {};
  try {
    pinned = getTitoFamily(family).pinnedKwargs;
  } catch {
    // a family this package does not implement: name every kwarg
  }
  return Object.fromEntries(Object.entries(kwargs).filter(([key, value]) => !(key in pinned && JSON.stringify(pinned[key]) === JSON.stringify(value))));
}

function sameJson(left: unknown, right: unknown): boolean {
  const canonical = (value: Record<string, unknown>): string => JSON.stringify(Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1))));
  return canonical(left as Record<string, unknown>) === canonical(right as Record<string, unknown>);
}

/**
 * Compares the sides' configurations. `embedded` says which sides the run started itself (the run's own flags
 * configure those, so the fix names the run's flag first; a given server is fixed by restarting it).
 */
export function checkConfiguration(v1Health: unknown, v2Health: unknown, embedded: { v1: boolean; v2: boolean }): ConfigurationCheck {
  const v1 = readSideConfiguration(v1Health);
  const v2 = readSideConfiguration(v2Health);
  if (v1 === null || v2 === null) return { v1, v2, problem: null, hint: null };
  const differences: string[] = [];
  const flags: Array<(side: SideConfiguration) => string> = [];
  if (v1.family !== v2.family) {
    differences.push(`family ${v1.family} vs ${v2.family}`);
    flags.push((side) => `--tito-model ${side.family}`);
  }
  if (v1.template !== v2.template || v1.templateOrigin !== v2.templateOrigin) {
    differences.push(`template ${v1.template} (${v1.templateOrigin}) vs ${v2.template} (${v2.templateOrigin})`);
    flags.push((side) => (side.template === "path" ? `--chat-template-path ${side.templateOrigin}` : `--chat-template ${side.template}`));
  }
  if (!sameJson(v1.kwargs, v2.kwargs)) {
    differences.push(`chat-template kwargs ${kwargsText(v1.kwargs)} vs ${kwargsText(v2.kwargs)}`);
    flags.push((side) => `--chat-template-kwargs '${kwargsText(flagKwargs(side.family, side.kwargs))}'`);
  }
  if (differences.length === 0) return { v1, v2, problem: null, hint: null };
  const configs = { v1, v2 };
  const fix = (target: Side): string => flags.map((flag) => flag(configs[target === "v1" ? "v2" : "v1"])).join(" ");
  const fixes: string[] = [];
  for (const side of ["v1", "v2"] as const) {
    if (embedded[side]) fixes.push(`pass ${fix(side)} to this run (its embedded ${side} server then renders as the given ${side === "v1" ? "v2" : "v1"} does)`);
  }
  for (const side of ["v1", "v2"] as const) {
    if (!embedded[side]) fixes.push(`restart the ${side} server with ${fix(side)}`);
  }
  const problem =
    `Configuration problem: v1 and v2 render with different settings (${differences.join("; ")}), so their payloads differ by construction, ` +
    `not because either server is wrong. Align them: ${fixes.join(", or ")}.`;
  return { v1, v2, problem, hint: null };
}
