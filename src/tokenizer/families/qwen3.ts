// The `qwen3` family: Qwen3's vocabulary and our append-safe Qwen3 template (miles' Qwen3TITOTokenizer).
// The model stops at <|im_end|> without the template's newline, so the merge puts "\n" back.
import type { TitoFamily } from "./types";

/** `--tito-model qwen3`: mirrors `Qwen3TITOTokenizer` (tito_tokenizer.py at miles 31f1ca96). */
export const QWEN3_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  name: "qwen3",
  pythonClass: "Qwen3TITOTokenizer",
  summary: "Qwen3 (hybrid thinking): the package's append-safe Qwen3 template, <tool_call> JSON",
  template: { kind: "bundled", file: "qwen3-append-safe.jinja" },
  acceptsChatTemplatePath: false,
  pinnedKwargs: Object.freeze({ clear_thinking: false }),
  kwargAliases: [],
  allowedAppendRoles: ["tool", "user", "system", "assistant"],
  suffixRender: "dummy-prefix",
  boundary: {
    appendAfter: { whenLastIs: [{ token: "<|im_end|>" }], append: [{ text: "\n" }] },
    trailing: [{ text: "\n" }],
    maxTrimTokens: 0,
  },
  comparator: { assistantStart: "<|im_start|>assistant", specialTokens: { kind: "vocabulary" } },
  wire: { toolCallParser: "qwen25", reasoningParser: "qwen3", reasoningOpenedByPrompt: false },
  requiredTokens: [{ token: "<|im_start|>" }],
});
