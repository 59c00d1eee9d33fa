// The `nemotron3` family (miles' Nemotron3TITOTokenizer): NVIDIA Nemotron 3 on the checkpoint's own template.
// Qwen3's <|im_end|>\n boundary (the model stops before the newline); history thinking is kept so renders only grow.
import type { TitoFamily } from "./types";

/** `--tito-model nemotron3`: mirrors `Nemotron3TITOTokenizer` (tito_tokenizer.py at miles 31f1ca96). */
export const NEMOTRON3_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  name: "nemotron3",
  pythonClass: "Nemotron3TITOTokenizer",
  summary: "NVIDIA Nemotron 3: the checkpoint's own template with truncate_history_thinking off, Qwen3's <|im_end|> boundary, XML tool calls",
  // FixedTemplate(template=None, extra_kwargs={"truncate_history_thinking": False})
  template: { kind: "checkpoint" },
  acceptsChatTemplatePath: false,
  pinnedKwargs: Object.freeze({ truncate_history_thinking: false }),
  kwargAliases: [],
  allowedAppendRoles: ["tool", "user", "system", "assistant"],
  suffixRender: "dummy-prefix",
  // inherited from Qwen3TITOTokenizer: "\n" after a stored <|im_end|>; "\n" is the comparator's trailing id
  boundary: {
    appendAfter: { whenLastIs: [{ token: "<|im_end|>" }], append: [{ text: "\n" }] },
    trailing: [{ text: "\n" }],
    maxTrimTokens: 0,
  },
  // _default_assistant_start_str keeps the newline after the role name
  comparator: { assistantStart: "<|im_start|>assistant\n", specialTokens: { kind: "vocabulary" } },
  // the generation prompt opens <think> only while thinking is on (the fixture turns it off): the mock answers plainly
  wire: { toolCallParser: "qwen3_coder", reasoningParser: "nemotron_3", reasoningOpenedByPrompt: false },
  requiredTokens: [{ token: "<|im_start|>" }],
});
