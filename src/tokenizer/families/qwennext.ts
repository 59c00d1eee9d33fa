// The `qwennext` family: Qwen3-Thinking-2507 / Qwen3-Next (miles' QwenNextTITOTokenizer): Qwen3's vocabulary and
// boundary, a thinking template whose generation prompt always opens <think>.
import type { TitoFamily } from "./types";
import { QWEN3_FAMILY } from "./qwen3";

/** `--tito-model qwennext`: mirrors `QwenNextTITOTokenizer` (tito_tokenizer.py at miles 31f1ca96). */
export const QWENNEXT_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  ...QWEN3_FAMILY,
  name: "qwennext",
  pythonClass: "QwenNextTITOTokenizer",
  summary: "Qwen3-Thinking-2507 / Qwen3-Next: the package's append-safe thinking template (always opens <think>), <tool_call> JSON",
  template: { kind: "bundled", file: "qwennext-append-safe.jinja" },
  wire: { toolCallParser: "qwen25", reasoningParser: "qwen3", reasoningOpenedByPrompt: true },
});
