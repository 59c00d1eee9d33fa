// The `inkling` family (miles' InklingTITOTokenizer): Inkling / Inkling-Small on miles' fixed template, shipped
// unchanged. Plain concatenation at the merge; the four message-role tokens are the comparator's only boundaries.
import type { TitoFamily } from "./types";

/** The `config.json` `model_type` values miles routes to the Inkling template (`inkling._MODEL_TYPES`). */
export const INKLING_MODEL_TYPES: readonly string[] = Object.freeze(["inkling_mm_model"]);

/** `--tito-model inkling`: mirrors `InklingTITOTokenizer` (tito_tokenizer.py at miles 31f1ca96). */
export const INKLING_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  name: "inkling",
  pythonClass: "InklingTITOTokenizer",
  summary: "Inkling / Inkling-Small: miles' fixed template, plain concatenation, the four <|message_*|> tokens as comparator boundaries",
  // FixedTemplate(template="inkling_fixed.jinja"): no pinned kwargs, all four roles
  template: { kind: "bundled", file: "miles-templates/inkling_fixed.jinja", verbatim: true },
  acceptsChatTemplatePath: false,
  pinnedKwargs: Object.freeze({}),
  kwargAliases: [],
  allowedAppendRoles: ["tool", "user", "system", "assistant"],
  suffixRender: "dummy-prefix",
  boundary: { trailing: [], maxTrimTokens: 0 },
  comparator: {
    assistantStart: "<|message_model|>",
    specialTokens: {
      kind: "only",
      tokens: [{ token: "<|message_user|>" }, { token: "<|message_model|>" }, { token: "<|message_system|>" }, { token: "<|message_tool|>" }],
    },
  },
  // the generation prompt opens the model's first block header (<|message_model|>): the model writes typed blocks and
  // ends with <|content_model_end_sampling|>
  wire: { toolCallParser: "inkling", reasoningParser: "inkling", reasoningOpenedByPrompt: true, stopToken: { token: "<|content_model_end_sampling|>" } },
  // nothing beyond the four role tokens the comparator names (what miles resolves)
  requiredTokens: [],
});
