// SGLang's `<think>`-tag reasoning detectors other than Qwen3's: `glm45` (a <tool_call> also ends the reasoning) and
// `nemotron_3` (DeepSeek-R1's format). Mirrors BaseReasoningFormatDetector.detect_and_parse (non-streaming).
import type { ReasoningFormat, ReasoningParse } from "./types";

const OPEN = "<think>";
const CLOSE = "</think>";

/** Python's `str.strip()` whitespace (JS's `trim` also strips U+FEFF and keeps U+001C-U+001F, U+0085). */
const PY_SPACE = "\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, "g");

function strip(text: string): string {
  return text.replace(PY_STRIP, "");
}

/**
 * `detect_and_parse`: nothing is reasoning unless the block was opened by the prompt (forced reasoning) or the text
 * holds `<think>`; a tool-start token before `</think>` ends the reasoning there (the rest, unstripped, goes to the
 * tool-call parser); no `</think>` means the turn was cut inside the block; else reasoning is the text before
 * `</think>` and content the text after it, both stripped, every `<think>` removed from the reasoning.
 */
function parseThink(text: string, openedByPrompt: boolean, toolStart: string | null): ReasoningParse {
  if (!openedByPrompt && !text.includes(OPEN)) return { reasoning: null, content: text };
  const end = text.indexOf(CLOSE);
  const tool = toolStart === null ? -1 : text.indexOf(toolStart);
  const withoutOpen = (part: string): string => strip(part.split(OPEN).join(""));
  if (tool !== -1 && (end === -1 || tool < end)) return { reasoning: withoutOpen(text.slice(0, tool)), content: text.slice(tool) };
  if (end === -1) return { reasoning: withoutOpen(text), content: "" };
  return { reasoning: withoutOpen(text.slice(0, end)), content: strip(text.slice(end + CLOSE.length)) };
}

/** A model's text for `reasoning` then `content`: `<think>` unless the prompt opened it, the reasoning, `</think>`. */
function writeThink(reasoning: string, content: string, openedByPrompt: boolean): string {
  return `${openedByPrompt ? "" : OPEN}${reasoning}${CLOSE}${content}`;
}

/** SGLang's `glm45` reasoning parser (Glm45Detector): `<tool_call>` also closes the reasoning. */
export const GLM45_REASONING: ReasoningFormat = Object.freeze({
  name: "glm45",
  write: writeThink,
  parse: (text: string, openedByPrompt: boolean) => parseThink(text, openedByPrompt, "<tool_call>"),
});

/** SGLang's `nemotron_3` reasoning parser (Nemotron3Detector): DeepSeek-R1's `<think>...</think>` format. */
export const NEMOTRON3_REASONING: ReasoningFormat = Object.freeze({
  name: "nemotron_3",
  // the Nemotron 3 template writes a newline inside the block on each side of the reasoning and one after it
  write: (reasoning: string, content: string, openedByPrompt: boolean) => `${openedByPrompt ? "" : `${OPEN}\n`}${reasoning}\n${CLOSE}\n${content}`,
  parse: (text: string, openedByPrompt: boolean) => parseThink(text, openedByPrompt, null),
});
