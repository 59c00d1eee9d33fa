// SGLang's `qwen3` reasoning format: `<think>reasoning</think>content`; in forced-reasoning mode (the prompt opened
// `<think>`) the completion starts inside the block. Mirrors sglang's BaseReasoningFormatDetector.detect_and_parse.
import type { ReasoningFormat, ReasoningParse } from "./types";

const OPEN = "<think>";
const CLOSE = "</think>";

function parse(text: string, openedByPrompt: boolean): ReasoningParse {
  const stripped = text.trim();
  const inReasoning = openedByPrompt || stripped.startsWith(OPEN);
  if (!inReasoning) return { reasoning: null, content: text };
  const body = stripped.startsWith(OPEN) ? stripped.slice(OPEN.length) : stripped;
  const close = body.indexOf(CLOSE);
  // no closing tag: everything is reasoning, as the detector does when the turn ends inside the block
  if (close === -1) return { reasoning: body.trim(), content: "" };
  return { reasoning: body.slice(0, close).trim(), content: body.slice(close + CLOSE.length).trim() };
}

/** The `qwen3` reasoning format. */
export const QWEN3_REASONING: ReasoningFormat = Object.freeze({
  name: "qwen3",
  write: (reasoning: string, content: string, openedByPrompt: boolean) => `${openedByPrompt ? "" : `${OPEN}\n`}${reasoning}\n${CLOSE}\n\n${content}`,
  parse,
});
