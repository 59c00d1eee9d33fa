// The `qwen35` family (miles' Qwen35TITOTokenizer): Qwen3.5 on our append-safe rendering of its template.
// Qwen3's <|im_end|> boundary; no mid-session system turn; XML `<function=...>` tool calls (SGLang's qwen3_coder).
import { QWEN3_FAMILY } from "./qwen3";
import type { TitoFamily } from "./types";

/**
 * `--tito-model qwen35`: mirrors `Qwen35TITOTokenizer` (tito_tokenizer.py at miles 31f1ca96): Qwen3's boundary and
 * comparator, `clear_thinking=False` pinned, appends limited to tool, user and assistant (the template accepts a
 * system message only first), and the `qwen3` reasoning / `qwen3_coder` tool-call parsers.
 */
export const QWEN35_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  ...QWEN3_FAMILY,
  name: "qwen35",
  pythonClass: "Qwen35TITOTokenizer",
  summary: "Qwen3.5: the package's append-safe Qwen3.5 template (no mid-session system turn), XML <function=...> tool calls",
  template: { kind: "bundled", file: "qwen35-append-safe.jinja" },
  allowedAppendRoles: ["tool", "user", "assistant"],
  // The generation prompt opens <think> only while thinking is on; with the fixture's enable_thinking=false it writes
  // an empty, closed think block and the model answers plainly. A static flag cannot say both: false keeps the
  // fixture's runs exact (with thinking on, the mock's plain reply is an assistant-text difference in the report).
  wire: { toolCallParser: "qwen3_coder", reasoningParser: "qwen3", reasoningOpenedByPrompt: false },
});
