// SGLang's Kimi K2 formats: `kimi_k2` / `kimi_k2_raw_id` tool calls (a `<|tool_calls_section_begin|>` section of
// `<|tool_call_begin|>functions.NAME:N<|tool_call_argument_begin|>{json}<|tool_call_end|>`) and `kimi_k2` reasoning.
import { dumpsPy, PY_TOJSON } from "../../wire/py-json";
import type { ParsedToolCall, ReasoningFormat, ReasoningParse, ScriptedToolCall, ToolCallFormat, ToolCallParse } from "./types";

const SECTION_BEGIN = "<|tool_calls_section_begin|>";
const SECTION_END = "<|tool_calls_section_end|>";
/** Python's `\w` (Unicode letters, marks, digits, connectors) for the detector's `[\w\.]+`. */
const WORD = "[\\p{L}\\p{M}\\p{Nd}\\p{Pc}.]";
/** KimiK2Detector.tool_call_regex; `.` does not cross a newline (no DOTALL), `{.*?}` stops at the first `}` that lets the rest match. */
const CALL = new RegExp(`<\\|tool_call_begin\\|>\\s*(${WORD}+:\\d+)\\s*<\\|tool_call_argument_begin\\|>\\s*(\\{.*?\\})\\s*<\\|tool_call_end\\|>`, "gu");
/** KimiK2Detector.tool_call_id_regex: `functions.NAME:N`, or `NAME:N`. */
const CALL_ID = new RegExp(`^(?:functions\\.)?(${WORD}+):(\\d+)$`, "u");

/**
 * `KimiK2Detector.detect_and_parse` (kimik2_detector.py): nothing without the section opener; else every complete
 * call in the text, named by its id (`functions.NAME:N` → NAME, index N), arguments kept as written (no check against
 * `tools`: the detector does none), and the content is the text before the section opener.
 * `rawId`: the reply's tool-call id is the id the model wrote (`kimi_k2_raw_id`); else `functions.NAME:N` as SGLang's
 * serving layer spells it for `kimi_k2` (it adds the request's earlier tool-call count to N; the mock does not).
 */
function parseKimiK2(text: string, rawId: boolean): ToolCallParse {
  const start = text.indexOf(SECTION_BEGIN);
  if (start === -1) return { content: text, calls: [] };
  const calls: ParsedToolCall[] = [];
  for (const match of text.matchAll(CALL)) {
    const id = CALL_ID.exec(match[1]);
    if (id === null) continue;
    const index = Number(id[2]);
    calls.push({ toolIndex: index, name: id[1], arguments: match[2], id: rawId ? match[1] : `functions.${id[1]}:${index}` });
  }
  return { content: text.slice(0, start), calls };
}

/**
 * What a Kimi K2 model writes after `lead`: one section holding a call per entry, numbered from 0 within the turn,
 * arguments as the template's `tojson` writes them (Python's `json.dumps`), nothing between the markers.
 */
function writeKimiK2(lead: string, calls: readonly ScriptedToolCall[]): string {
  if (calls.length === 0) return lead;
  const body = calls
    .map(
      (call, index) => `<|tool_call_begin|>functions.${call.name}:${index}<|tool_call_argument_begin|>${dumpsPy(call.arguments, PY_TOJSON)}<|tool_call_end|>`,
    )
    .join("");
  return `${lead}${SECTION_BEGIN}${body}${SECTION_END}`;
}

/** SGLang's `kimi_k2` tool-call parser (KimiK2Detector): reply ids `functions.NAME:N`. */
export const KIMI_K2_TOOL_CALLS: ToolCallFormat = Object.freeze({ name: "kimi_k2", write: writeKimiK2, parse: (text: string) => parseKimiK2(text, false) });

/** SGLang's `kimi_k2_raw_id` tool-call parser: the same detector, the id the model wrote kept verbatim (miles' kimi26). */
export const KIMI_K2_RAW_ID_TOOL_CALLS: ToolCallFormat = Object.freeze({
  name: "kimi_k2_raw_id",
  write: writeKimiK2,
  parse: (text: string) => parseKimiK2(text, true),
});

const THINK_OPEN = "<think>";
const THINK_CLOSE = "</think>";

/**
 * `KimiK2Detector` of reasoning_parser.py through `BaseReasoningFormatDetector.detect_and_parse` (the revision that
 * strips neither side): not reasoning unless the prompt opened `<think>` or the text holds it; leading `<think>`s
 * dropped; without `</think>` a tool-call section ends the reasoning (the section stays content) or the whole text is
 * reasoning; else the text splits at the first `</think>`. An empty reasoning is none.
 */
function parseKimiReasoning(text: string, openedByPrompt: boolean): ReasoningParse {
  if (!openedByPrompt && !text.includes(THINK_OPEN)) return { reasoning: null, content: text };
  let rest = text;
  while (rest.startsWith(THINK_OPEN)) rest = rest.slice(THINK_OPEN.length);
  const close = rest.indexOf(THINK_CLOSE);
  if (close === -1) {
    const section = rest.indexOf(SECTION_BEGIN);
    if (section !== -1) return { reasoning: section === 0 ? null : rest.slice(0, section), content: rest.slice(section) };
    return { reasoning: rest === "" ? null : rest, content: "" };
  }
  return { reasoning: close === 0 ? null : rest.slice(0, close), content: rest.slice(close + THINK_CLOSE.length) };
}

/** SGLang's `kimi_k2` reasoning parser: `<think>reasoning</think>content` (the K2.5 / K2.6 prompt opens `<think>`). */
export const KIMI_K2_REASONING: ReasoningFormat = Object.freeze({
  name: "kimi_k2",
  write: (reasoning: string, content: string, openedByPrompt: boolean) => `${openedByPrompt ? "" : THINK_OPEN}${reasoning}${THINK_CLOSE}${content}`,
  parse: parseKimiReasoning,
});
