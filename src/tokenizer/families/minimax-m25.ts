// The `minimax_m25` family (miles' MinimaxM25TITOTokenizer): MiniMax-M2.5 on miles' fixed template, shipped unchanged.
// Turns end `[e~[\n`; the model stops at `[e~[`, so the merge adds the newline. Mid-session system turns are refused.
import type { TitoFamily } from "./types";

/** `--tito-model minimax_m25`: mirrors `MinimaxM25TITOTokenizer` (tito_tokenizer.py at miles 31f1ca96, PR #1117). */
export const MINIMAX_M25_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  name: "minimax_m25",
  pythonClass: "MinimaxM25TITOTokenizer",
  summary: "MiniMax-M2.5: miles' fixed template (clear_thinking pinned off), `[e~[` + newline boundary, <minimax:tool_call> XML invokes",
  // FixedTemplate(template="minimax_m25_fixed.jinja", extra_kwargs={"clear_thinking": False}, roles tool/user/assistant)
  template: { kind: "bundled", file: "miles-templates/minimax_m25_fixed.jinja", verbatim: true },
  acceptsChatTemplatePath: false,
  pinnedKwargs: Object.freeze({ clear_thinking: false }),
  kwargAliases: [],
  // the fixed template ignores a system message that is not the first one
  allowedAppendRoles: ["tool", "user", "assistant"],
  suffixRender: "dummy-prefix",
  // merge_tokens: "\n" after a stored `[e~[`; "\n" is the comparator's trailing id
  boundary: {
    appendAfter: { whenLastIs: [{ token: "[e~[" }], append: [{ text: "\n" }] },
    trailing: [{ text: "\n" }],
    maxTrimTokens: 0,
  },
  comparator: { assistantStart: "]~b]ai", specialTokens: { kind: "vocabulary" } },
  // the generation prompt opens `<think>\n`; minimax-append-think puts the tag back before the text (reasoning stays
  // in the content); the model ends its turn with `[e~[` (the checkpoint's eos)
  wire: { toolCallParser: "minimax-m2", reasoningParser: "minimax-append-think", reasoningOpenedByPrompt: true, stopToken: { token: "[e~[" } },
  // nothing beyond `[e~[` and the one-token newline the boundary names (what miles resolves)
  requiredTokens: [],
});
