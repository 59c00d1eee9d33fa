// The `kimi25` family (miles' Kimi25TITOTokenizer): Moonshot Kimi K2.5 on miles' fixed template, shipped unchanged.
// Turns end at <|im_end|> with no newline after it, so stored ids and the appended suffix simply concatenate.
import type { TitoFamily } from "./types";

/**
 * `--tito-model kimi25`: mirrors `Kimi25TITOTokenizer` (tito_tokenizer.py at miles 31f1ca96, from PR #1117).
 * miles binds no SGLang parsers for it (TestParserBinding: `(KIMI25, None, None)`): the user's flags choose; the
 * mock then speaks what SGLang serves Kimi K2.5 with (`kimi_k2` for both), see {@link WireFormats.unboundDefaults}.
 */
export const KIMI25_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  name: "kimi25",
  pythonClass: "Kimi25TITOTokenizer",
  summary: "Moonshot Kimi K2.5: miles' fixed template (preserve_thinking pinned on), <|im_end|> boundary, Kimi tool-call sections",
  // FixedTemplate(template="kimi_k25_fixed.jinja", extra_kwargs={"preserve_thinking": True})
  template: { kind: "bundled", file: "miles-templates/kimi_k25_fixed.jinja", verbatim: true },
  acceptsChatTemplatePath: false,
  pinnedKwargs: Object.freeze({ preserve_thinking: true }),
  kwargAliases: [],
  // FixedTemplate's default: all four roles
  allowedAppendRoles: ["tool", "user", "system", "assistant"],
  suffixRender: "dummy-prefix",
  // the base class's merge_tokens (plain concatenation) and no trailing_token_ids
  boundary: { trailing: [], maxTrimTokens: 0 },
  // _kimi_segment_special_token_ids: every special less <|im_middle|> (it separates a role name from its body)
  comparator: { assistantStart: "<|im_assistant|>", specialTokens: { kind: "vocabulary", except: [{ token: "<|im_middle|>" }] } },
  // the generation prompt opens <think> (unless thinking=false); the model ends its turn with <|im_end|>
  wire: {
    toolCallParser: null,
    reasoningParser: null,
    unboundDefaults: { toolCallParser: "kimi_k2", reasoningParser: "kimi_k2" },
    reasoningOpenedByPrompt: true,
    stopToken: { token: "<|im_end|>" },
  },
  // nothing beyond the tokens the rules name (miles resolves no other): a checkpoint is not refused for lacking one
  requiredTokens: [],
});
