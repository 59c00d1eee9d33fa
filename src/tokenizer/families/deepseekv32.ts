// The `deepseekv32` family (miles' DeepSeekV32TITOTokenizer): DeepSeek V3.2 has no Jinja template; prompts come from
// its official encoder (ported in ../deepseek/), with every turn's thinking kept so renders only grow.
import type { TitoFamily } from "./types";

/** `--tito-model deepseekv32`: mirrors `DeepSeekV32TITOTokenizer` (tito_tokenizer.py at miles 31f1ca96). */
export const DEEPSEEKV32_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  name: "deepseekv32",
  pythonClass: "DeepSeekV32TITOTokenizer",
  summary: "DeepSeek V3.2: the official encoding_dsv32 (no Jinja; config.json model_type deepseek_v32) with drop_thinking off, DSML tool calls",
  template: { kind: "encoder", encoder: "deepseek_v32" },
  acceptsChatTemplatePath: false,
  // FixedTemplate(template=None, extra_kwargs={"drop_thinking": False}): miles' vendored encoder honours it per turn
  pinnedKwargs: Object.freeze({ drop_thinking: false }),
  // _DEEPSEEK_MODE_KWARG_ALIASES: a layer setting any of them replaces all three from the layers below
  kwargAliases: ["thinking_mode", "enable_thinking", "thinking"],
  allowedAppendRoles: ["tool", "user", "system", "assistant"],
  suffixRender: "dummy-prefix",
  // the base class: plain concatenation (the model stops on <｜end▁of▁sentence｜>, which the encoder also writes)
  boundary: { trailing: [], maxTrimTokens: 0 },
  // assistant_start_str "<｜Assistant｜>"; special_token_ids = {<｜User｜>, <｜Assistant｜>}
  comparator: { assistantStart: "<｜Assistant｜>", specialTokens: { kind: "only", tokens: [{ token: "<｜User｜>" }, { token: "<｜Assistant｜>" }] } },
  // reasoning_parser "deepseek-v3" (forced by the request's `thinking`), tool_call_parser "deepseekv32"
  wire: { toolCallParser: "deepseekv32", reasoningParser: "deepseek-v3", reasoningOpenedByPrompt: false, reasoningForcedByKwarg: "thinking" },
  setsThinkingKwarg: true,
  requiredTokens: [],
});
