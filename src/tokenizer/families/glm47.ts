// The `glm47` family (miles' GLM47TITOTokenizer): GLM-4.7 / GLM-5 / GLM-5.2 on the checkpoint's own template.
// <|user|> and <|observation|> both stop the model and open the next turn, so a stored one is dropped at the merge.
import type { TitoFamily } from "./types";

/** `--tito-model glm47`: mirrors `GLM47TITOTokenizer` (tito_tokenizer.py at miles 31f1ca96). */
export const GLM47_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  name: "glm47",
  pythonClass: "GLM47TITOTokenizer",
  summary: "GLM-4.7 / GLM-5 / GLM-5.2: the checkpoint's own template, a trailing <|user|> / <|observation|> dropped at the merge",
  // FixedTemplate(template=None, extra_kwargs={"clear_thinking": False}): GLM's native template has the kwarg
  template: { kind: "checkpoint" },
  acceptsChatTemplatePath: false,
  pinnedKwargs: Object.freeze({ clear_thinking: false }),
  kwargAliases: [],
  allowedAppendRoles: ["tool", "user", "system", "assistant"],
  suffixRender: "dummy-prefix",
  boundary: {
    // merge_tokens: `if prefix and prefix[-1] in self._ambiguous_boundary_ids: prefix = prefix[:-1]`
    dropLastWhen: [{ token: "<|user|>" }, { token: "<|observation|>" }],
    trailing: [{ token: "<|observation|>" }, { token: "<|user|>" }],
    maxTrimTokens: 1,
  },
  comparator: { assistantStart: "<|assistant|>", specialTokens: { kind: "vocabulary" } },
  // GLM-4.7's generation prompt opens <think> only while thinking is on; with the fixture's enable_thinking=false it
  // closes the block at once (`</think>`) and the model answers plainly, so the mock writes no reasoning (false).
  // The engine stops on any of the generation config's eos ids (<|endoftext|>, <|user|>, <|observation|>); a GLM model
  // ends an answer with <|user|> (after a tool call it writes <|observation|>; the boundary drops either one).
  wire: { toolCallParser: "glm47", reasoningParser: "glm45", reasoningOpenedByPrompt: false, stopToken: { token: "<|user|>" } },
  requiredTokens: [{ token: "<|assistant|>" }],
});
