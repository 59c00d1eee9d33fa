// The `kimi26` family (miles' Kimi26TITOTokenizer): Moonshot Kimi K2.6 on the checkpoint's own template, which
// already has the preserve_thinking gate K2.5 needed patched in; K2.5's boundary and comparator otherwise.
import { KIMI25_FAMILY } from "./kimi25";
import type { TitoFamily } from "./types";

/**
 * `--tito-model kimi26`: mirrors `Kimi26TITOTokenizer` (tito_tokenizer.py at miles 31f1ca96): `template=None`,
 * `preserve_thinking=True` pinned, SGLang's `kimi_k2` reasoning parser and `kimi_k2_raw_id` tool-call parser (the
 * tool-call ids the model writes come back verbatim, never renumbered).
 */
export const KIMI26_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  ...KIMI25_FAMILY,
  name: "kimi26",
  pythonClass: "Kimi26TITOTokenizer",
  summary: "Moonshot Kimi K2.6: the checkpoint's own template (preserve_thinking pinned on), K2.5's boundary, raw tool-call ids",
  template: { kind: "checkpoint" },
  wire: { toolCallParser: "kimi_k2_raw_id", reasoningParser: "kimi_k2", reasoningOpenedByPrompt: true, stopToken: { token: "<|im_end|>" } },
});
