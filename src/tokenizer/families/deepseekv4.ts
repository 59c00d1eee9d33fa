// The `deepseekv4` family (miles' DeepSeekV4TITOTokenizer): SGLang's encoding_dsv4 folds adjacent tool/user turns into
// one block, so the appended suffix is the difference of the real history's renders, not a dummy-prefix render.
import type { TitoFamily } from "./types";

/** `--tito-model deepseekv4`: mirrors `DeepSeekV4TITOTokenizer` (tito_tokenizer.py at miles 31f1ca96). */
export const DEEPSEEKV4_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  name: "deepseekv4",
  pythonClass: "DeepSeekV4TITOTokenizer",
  summary: "DeepSeek V4: SGLang's encoding_dsv4 (no Jinja; model_type deepseek_v4), real-history suffixes, DSML tool_calls, reasoning_effort",
  template: { kind: "encoder", encoder: "deepseek_v4" },
  acceptsChatTemplatePath: false,
  pinnedKwargs: Object.freeze({ drop_thinking: false }),
  kwargAliases: ["thinking_mode", "enable_thinking", "thinking"],
  // FixedTemplate(allowed_append_roles={"tool", "user", "assistant"}): a system turn is not append-only there
  allowedAppendRoles: ["tool", "user", "assistant"],
  // tokenize_additional_messages diffs the renders of the real old and new message lists
  suffixRender: "real-history",
  // trailing_token_ids = {<｜Assistant｜>, <think>, </think>} (an id the vocabulary lacks is None there: matches nothing)
  boundary: {
    trailing: [{ token: "<｜Assistant｜>" }, { token: "<think>", optional: true }, { token: "</think>", optional: true }],
    maxTrimTokens: 0,
  },
  comparator: { assistantStart: "<｜Assistant｜>", specialTokens: { kind: "only", tokens: [{ token: "<｜User｜>" }, { token: "<｜Assistant｜>" }] } },
  wire: { toolCallParser: "deepseekv4", reasoningParser: "deepseek-v4", reasoningOpenedByPrompt: false, reasoningForcedByKwarg: "thinking" },
  setsThinkingKwarg: true,
  requiredTokens: [],
});
