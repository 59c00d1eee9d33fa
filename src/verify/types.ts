// Shapes of the chat-template verifier: the family seam it checks through, its trajectories and its report.
// The seam (TemplateVerifyFamily) is what a tokenizer family provides; the verifier itself never loads anything.
import type { ChatMessage, ChatTemplateKwargs, ToolSpec } from "../tokenizer/types";

/** `--thinking`: which trajectories run and with which `enable_thinking` values (miles' `THINKING_MODES`). */
export type ThinkingMode = "off" | "on" | "both";

/** All {@link ThinkingMode} values. */
export const THINKING_MODES: readonly ThinkingMode[] = ["off", "on", "both"];

/** One scripted conversation of the verifier's pool. */
export interface VerifyTrajectory {
  /** snake_case name used in case ids (`single_tool`). */
  readonly name: string;
  /** The message sequence in words. */
  readonly description: string;
  /** Tools advertised with every render (null: none). */
  readonly tools: readonly ToolSpec[] | null;
  /** The whole conversation. */
  readonly messages: readonly ChatMessage[];
  /** Message counts N at which the history is pretokenized (the render of `messages[:N]` is the stored prefix). */
  readonly pretokenizePositions: readonly number[];
}

/** A trajectory with what the verifier derives from it (miles declares these as `APPEND_ROLES` / `IS_THINKING`). */
export interface ClassifiedTrajectory extends VerifyTrajectory {
  /** Non-assistant roles that follow the first assistant message. */
  readonly appendRoles: ReadonlySet<string>;
  /** True when some assistant message carries `reasoning_content`. */
  readonly thinking: boolean;
}

/** Options of one render through a family. */
export interface FamilyRenderOptions {
  /** Tools advertised with the render (null: none). */
  tools: readonly ToolSpec[] | null;
  /** Whether the generation prompt follows the messages. */
  addGenerationPrompt: boolean;
}

/** A chat template bound to one set of kwargs: all the text layer needs. */
export interface TemplateRenderTarget {
  /** The kwargs every render uses: the case's kwargs with the family's pinned ones applied. */
  readonly kwargs: Readonly<ChatTemplateKwargs>;
  /** Renders with the template and {@link kwargs}. */
  render(messages: readonly ChatMessage[], options: FamilyRenderOptions): string;
}

/**
 * What the verifier needs from a tokenizer family, built for one set of chat-template kwargs (miles rebuilds its
 * TITO tokenizer per case with the case's kwargs, `run_all_checks_via_tito`). A family registry provides it.
 */
export interface TemplateVerifyFamily extends TemplateRenderTarget {
  /** The family name (`qwen3`, `default`, ...). */
  readonly name: string;
  /** Ids the model stops before (the family's trailing ids), trimmed off an encoded prefix as production does. */
  readonly trailingIds: ReadonlySet<number>;
  /** Encodes text without adding special tokens. */
  encode(text: string): number[];
  /** Decodes ids, keeping special tokens. */
  decode(ids: readonly number[]): string;
  /** The family's merge: stored prefix ids plus the ids of `fullMessages` beyond `prefixMessages` and the generation prompt. */
  mergeTokens(
    prefixMessages: readonly ChatMessage[],
    fullMessages: readonly ChatMessage[],
    prefixIds: readonly number[],
    tools: readonly ToolSpec[] | null,
  ): number[];
}

/** What one verification checks: a template (text layer) and, with a family, the TITO layer too. */
export interface TemplateVerifyPlan {
  /** The family checked through, or null for the template-only check. */
  titoModel: string | null;
  /** Where the template came from, in words (reported). */
  templateSource: string;
  /** Append roles trajectories are filtered by (the family's, or all four for the template-only check). */
  allowedAppendRoles: ReadonlySet<string>;
  /** `--thinking`. */
  thinking: ThinkingMode;
  /** Kwargs of every case (`--chat-template-kwargs` plus what the family auto-sets); the variant is layered on top. */
  templateKwargs: ChatTemplateKwargs;
  /** The kwargs the family set because the user did not (reported). */
  autoSetKwargs?: ChatTemplateKwargs;
  /** The template for one case's kwargs (text layer). */
  renderer(kwargs: ChatTemplateKwargs): TemplateRenderTarget;
  /** The family for one case's kwargs (TITO layer); absent for the template-only check. */
  family?: (kwargs: ChatTemplateKwargs) => TemplateVerifyFamily;
  /** The trajectory pool (default: the package's own). */
  trajectories?: readonly VerifyTrajectory[];
}

/** Which check a result line reports. */
export type VerifyLayer = "text" | "tito";

/** The first place two texts differ, with context on each side. */
export interface TextDivergence {
  /** Character offset of the first differing character (the shorter length when one is a prefix of the other). */
  index: number;
  /** The expected text around `index`. */
  expected: string;
  /** The actual text around `index`. */
  actual: string;
}

/** One check: a layer on one trajectory at one pretokenize position under one kwargs variant. */
export interface VerifyCaseResult {
  /** `<trajectory>-N<n>` plus the kwargs (`single_tool-N3-enable_thinking_on`), as miles' `format_case_id`. */
  id: string;
  /** The check: text (prefix renders) or tito (merge and decode). */
  layer: VerifyLayer;
  /** The trajectory's name. */
  trajectory: string;
  /** The pretokenize position. */
  position: number;
  /** The case's kwargs (variant and `--chat-template-kwargs`; the family's pinned ones are applied on top). */
  kwargs: ChatTemplateKwargs;
  /** True when the check passed. */
  passed: boolean;
  /** One line saying what failed (null when passed). */
  error: string | null;
  /** Where the texts first differ (null when passed or when the check failed before comparing). */
  divergence: TextDivergence | null;
}

/** A `(thinking, append roles beyond tool)` combination and the trajectories that fall in it. */
export interface CoverageCell {
  /** True for the thinking trajectories' half of the grid. */
  thinking: boolean;
  /** Sorted append roles other than `tool`. */
  roles: string[];
  /** Trajectory names in the cell. */
  trajectories: string[];
}

/** What the trajectory pool and this run exercised of `thinking x {user, system}` appends (miles' `check_coverage`). */
export interface CoverageReport {
  /** Cells no trajectory of the pool falls in. */
  poolGaps: CoverageCell[];
  /** Cells this run exercised no trajectory of (filtered out by the family's roles or by `--thinking`). */
  notExercised: CoverageCell[];
  /** Every cell with the trajectories this run exercised in it. */
  exercised: CoverageCell[];
}

/** The structured report of one verification. */
export interface TemplateVerifyReport {
  /** The family checked through, or null for the template-only (text layer) check. */
  titoModel: string | null;
  /** Where the template came from, in words. */
  templateSource: string;
  /** Append roles the trajectories were filtered by. */
  allowedAppendRoles: string[];
  /** `--thinking`. */
  thinking: ThinkingMode;
  /** The kwargs given by the user plus those the family sets (before the per-case variant). */
  templateKwargs: ChatTemplateKwargs;
  /** Kwargs the family set because the user did not (miles prints them as "Auto-set"). */
  autoSetKwargs: ChatTemplateKwargs;
  /** Trajectories selected after filtering, and the pool size. */
  selectedTrajectories: number;
  /** Trajectories in the pool. */
  poolTrajectories: number;
  /** What the pool and this run exercised of the `thinking x {user, system}` grid. */
  coverage: CoverageReport;
  /** Every check, in trajectory, variant, position and layer order. */
  results: VerifyCaseResult[];
  /** Checks run, passed and failed; `pass` when there was at least one and none failed. */
  summary: { checks: number; passed: number; failed: number; pass: boolean };
}
