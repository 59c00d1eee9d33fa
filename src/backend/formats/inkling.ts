// SGLang's Inkling formats (`inkling` tool calls and reasoning): the model writes typed blocks after the prompt's
// `<|message_model|>`: `<|content_thinking|>`, `<|content_text|>`, and `NAME<|content_invoke_tool_json|>{json}`.
import { dumpsPy, parsePyJson, PY_RESPONSE_JSON, PY_TOJSON, pyObjectKeys, type PyJson } from "../../wire/py-json";
import type { ParsedToolCall, ReasoningFormat, ReasoningParse, ScriptedToolCall, ToolCallFormat, ToolCallParse } from "./types";

const MESSAGE_MODEL = "<|message_model|>";
const CONTENT_TEXT = "<|content_text|>";
const CONTENT_THINKING = "<|content_thinking|>";
const INVOKE = "<|content_invoke_tool_json|>";
const END_MESSAGE = "<|end_message|>";
const END_SAMPLING = "<|content_model_end_sampling|>";

/** The control tokens SGLang's Inkling parsers cut at and clean out of visible text (`INKLING_CONTROL_TOKENS`). */
const CONTROL_TOKENS = [
  "<|message_user|>",
  MESSAGE_MODEL,
  "<|message_system|>",
  "<|message_tool|>",
  CONTENT_TEXT,
  CONTENT_THINKING,
  "<|content_xml|>",
  INVOKE,
  END_MESSAGE,
  END_SAMPLING,
];
const CONTROL = new RegExp(
  [...CONTROL_TOKENS]
    .sort()
    .map((token) => token.replace(/[|]/g, "\\|"))
    .join("|"),
  "g",
);

function clean(text: string): string {
  return text.replace(CONTROL, "");
}

/** The position of a trailing `<|message_model|>` whose header holds no control token yet (`_pending_tool_header_start`). */
function pendingHeaderStart(text: string): number | undefined {
  const at = text.lastIndexOf(MESSAGE_MODEL);
  if (at < 0) return undefined;
  const header = text.slice(at + MESSAGE_MODEL.length);
  return CONTROL_TOKENS.some((token) => header.includes(token)) ? undefined : at;
}

/** `_split_trailing_tool_header`: the text before a trailing tool header, and the header's name. */
function splitHeader(text: string): [string, string | null] {
  const at = pendingHeaderStart(text);
  if (at === undefined) return [text, null];
  const header = text.slice(at + MESSAGE_MODEL.length).trim();
  return [text.slice(0, at), header === "" ? null : header];
}

/** Python's `json.dumps(x, ensure_ascii=False)` of a parsed value, keys in the order the text gave them. */
function dumpArguments(args: PyJson): string {
  return dumpsPy(args, PY_TOJSON);
}

function isMapping(value: unknown): value is Record<string, PyJson> {
  return value !== null && typeof value === "object" && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
}

/**
 * `InklingDetector.detect_and_parse` (function_call/inkling_detector.py): every
 * `<|content_invoke_tool_json|>{json}<|end_message|>` gives a call (its payload `{"name", "args"}`, the name agreeing
 * with the header before it; calls to undeclared tools are kept, as the detector surfaces them); a call's index is
 * its position; the content is the text before the first call less its header, control tokens removed.
 */
function parseInklingToolCalls(text: string): ToolCallParse {
  const first = text.indexOf(INVOKE);
  if (first === -1) return { content: clean(text), calls: [] };
  const calls: ParsedToolCall[] = [];
  const pattern = /<\|content_invoke_tool_json\|>\s*([\s\S]*?)\s*<\|end_message\|>/g;
  try {
    for (const match of text.matchAll(pattern)) {
      const payload = parsePyJson(match[1].trim());
      const [, header] = splitHeader(text.slice(0, match.index));
      if (!isMapping(payload)) continue;
      const name = payload["name"];
      const args = payload["args"];
      if (typeof name !== "string" || !isMapping(args) || (header !== null && header !== name)) continue;
      calls.push({ toolIndex: calls.length, name, arguments: dumpArguments(args) });
    }
  } catch {
    // a payload that is not JSON: the detector logs and keeps only the text before the first call
    return { content: clean(text.slice(0, first)), calls: [] };
  }
  const [prefix] = splitHeader(text.slice(0, first));
  return { content: clean(prefix), calls };
}

/** Keys sorted as Python's `sort_keys=True` does, at every depth (the template's `tojson(sort_keys=true)`). */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isMapping(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of [...pyObjectKeys(value)].sort()) out[key] = sortedKeys(value[key]);
  return out;
}

/**
 * What an Inkling model writes after the prompt's `<|message_model|>`, as the fixed template renders a turn: the lead
 * (when there is one) as a text block, then per call a `<|message_model|>NAME<|content_invoke_tool_json|>` block
 * whose payload is `{"name":...,"args":...}` with sorted keys and compact separators; the first block's
 * `<|message_model|>` is the prompt's.
 */
function writeInklingToolCalls(lead: string, calls: readonly ScriptedToolCall[]): string {
  const blocks = lead === "" ? [] : [`${MESSAGE_MODEL}${CONTENT_TEXT}${lead}${END_MESSAGE}`];
  for (const call of calls) {
    const payload = `{"name":${dumpsPy(call.name, PY_RESPONSE_JSON)},"args":${dumpsPy(sortedKeys(call.arguments), PY_RESPONSE_JSON)}}`;
    blocks.push(`${MESSAGE_MODEL}${call.name}${INVOKE}${payload}${END_MESSAGE}`);
  }
  return blocks.join("").slice(MESSAGE_MODEL.length);
}

/** SGLang's `inkling` tool-call parser (InklingDetector). */
export const INKLING_TOOL_CALLS: ToolCallFormat = Object.freeze({
  name: "inkling",
  write: writeInklingToolCalls,
  parse: parseInklingToolCalls,
  writeText: (text: string) => (text === "" ? "" : `${CONTENT_TEXT}${text}${END_MESSAGE}`),
  // the template names a tool result by the call with its id among all earlier turns: ids must not repeat
  idsPerPrompt: true,
});

/**
 * `InklingDetector._parse_blocks` of reasoning_parser.py in one shot: `<|content_thinking|>` blocks are reasoning,
 * `<|content_text|>` blocks content, a tool-call block (with its header) is handed on to the tool-call parser as it
 * is. The completion follows the prompt's `<|message_model|>`, which the parser reads as the first block's header
 * (SGLang's serving layer sees that token in the prompt; the mock puts it back in front).
 */
function parseInklingBlocks(completion: string, openedByPrompt: boolean): ReasoningParse {
  const text = openedByPrompt ? `${MESSAGE_MODEL}${completion}` : completion;
  const reasoning: string[] = [];
  const content: string[] = [];
  let kind: "reasoning" | "content" | "tool" | "header" | null = null;
  let header = "";
  let sawControl = false;
  let position = 0;
  const emit = (part: string): void => {
    if (kind === "reasoning") reasoning.push(part);
    else if (kind === "header") header += part;
    else if (part !== "") content.push(part);
  };
  for (const match of text.matchAll(CONTROL)) {
    sawControl = true;
    emit(text.slice(position, match.index));
    const token = match[0];
    position = match.index + token.length;
    if (token === MESSAGE_MODEL) {
      if (kind === null || kind === "header") {
        header = "";
        kind = "header";
      } else emit(token);
    } else if (token === INVOKE) {
      if (kind === "header") content.push(MESSAGE_MODEL, header, INVOKE);
      else content.push(token);
      header = "";
      kind = "tool";
    } else if (kind === "tool") {
      content.push(token);
      if (token === END_MESSAGE || token === END_SAMPLING) kind = null;
    } else if (token === CONTENT_THINKING || token === CONTENT_TEXT) {
      header = "";
      kind = token === CONTENT_THINKING ? "reasoning" : "content";
    } else if (token === END_MESSAGE || token === END_SAMPLING) {
      header = "";
      kind = null;
    }
  }
  const tail = text.slice(position);
  if (sawControl || kind !== null) emit(tail);
  else content.push(text);
  const thought = reasoning.join("");
  return { reasoning: thought === "" ? null : thought, content: content.join("") };
}

/** SGLang's `inkling` reasoning parser: typed content blocks. */
export const INKLING_REASONING: ReasoningFormat = Object.freeze({
  name: "inkling",
  // a reasoning block, then the answer's blocks under a header of their own (the prompt opened the first header)
  write: (reasoning: string, content: string, openedByPrompt: boolean) =>
    `${openedByPrompt ? "" : MESSAGE_MODEL}${CONTENT_THINKING}${reasoning}${END_MESSAGE}${content === "" ? "" : MESSAGE_MODEL + content}`,
  parse: parseInklingBlocks,
});
