// The `default` family (miles' base TITOTokenizer): any checkpoint, its own template in transformers' environment,
// plain concatenation at the boundary, no pinned kwargs, and the best-effort four-role append surface.
import type { TitoFamily } from "./types";

/** `--tito-model default`: mirrors the base `TITOTokenizer` (tito_tokenizer.py at miles 31f1ca96). */
export const DEFAULT_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  name: "default",
  pythonClass: "TITOTokenizer",
  summary: "any checkpoint: its own chat template (or --chat-template-path), plain concatenation, parsers chosen by flag",
  template: { kind: "checkpoint" },
  acceptsChatTemplatePath: true,
  pinnedKwargs: Object.freeze({}),
  kwargAliases: [],
  allowedAppendRoles: ["tool", "user", "system", "assistant"],
  suffixRender: "dummy-prefix",
  boundary: { trailing: [], maxTrimTokens: 0 },
  // miles passes no assistant_start_str for the base class: every content difference is non_assistant_text
  comparator: { assistantStart: null, specialTokens: { kind: "vocabulary" } },
  wire: { toolCallParser: null, reasoningParser: null, reasoningOpenedByPrompt: false },
  requiredTokens: [],
});
