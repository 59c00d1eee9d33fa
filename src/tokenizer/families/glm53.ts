// The `glm53` family (miles PR #3087, after the 31f1ca96 snapshot): GLM-5.3 / GLM-5.3-Flash text sessions.
// GLM 4.7's boundary and parsers; its template opens <think> whatever enable_thinking says, so that kwarg is pinned too.
import { GLM47_FAMILY } from "./glm47";
import type { TitoFamily } from "./types";

/**
 * `--tito-model glm53`: the checkpoint's own template with `clear_thinking=False` and `enable_thinking=True` pinned,
 * then GLM 4.7's token boundary and parser bindings (PR #3087's design notes). The PR text does not name the class;
 * miles' naming gives `GLM53TITOTokenizer`.
 */
export const GLM53_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  ...GLM47_FAMILY,
  name: "glm53",
  pythonClass: "GLM53TITOTokenizer",
  summary: "GLM-5.3 / GLM-5.3-Flash (text): the checkpoint's own template with enable_thinking pinned on, GLM 4.7's boundary",
  pinnedKwargs: Object.freeze({ clear_thinking: false, enable_thinking: true }),
  // the generation prompt always opens <think>: the model's reply starts inside the block
  wire: { ...GLM47_FAMILY.wire, reasoningOpenedByPrompt: true },
});
