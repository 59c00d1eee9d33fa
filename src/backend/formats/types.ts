// The shape of a mock wire format: how the mock writes a family's tool calls / reasoning into completion text and
// reads them back the way the SGLang parser of that name does. One file per parser name, listed in registry.ts.
import type { ToolSpec } from "../../tokenizer/types";

/** A tool call the scripted reply wants to make. */
export interface ScriptedToolCall {
  name: string;
  /** Arguments as a JSON object (written in the family's own spelling). */
  arguments: Record<string, unknown>;
}

/** One tool call recovered from completion text. */
export interface ParsedToolCall {
  /** Position of the called tool in the request's `tools` list. */
  toolIndex: number;
  name: string;
  /** Arguments re-serialized as the SGLang parser does (Python's `json.dumps`). */
  arguments: string;
  /** The reply's tool-call id when the parser sets it (Kimi: the id the model wrote); absent: the mock numbers calls. */
  id?: string;
}

/** What a tool-call parser found. */
export interface ToolCallParse {
  /** The content left once the calls are cut out (the parser's `normal_text`); the whole text when none parsed. */
  content: string;
  /** Calls in text order; empty when none parsed. */
  calls: ParsedToolCall[];
}

/** Writer + parser of one SGLang `--tool-call-parser` format (`qwen25`, `qwen3_coder`, `glm47`, ...). */
export interface ToolCallFormat {
  /** The SGLang parser name. */
  readonly name: string;
  /** Completion text for `lead` (plain content, may be empty) followed by `calls`, as the family's model writes it. */
  write(lead: string, calls: readonly ScriptedToolCall[]): string;
  /** Splits completion text into content and calls like the SGLang parser (unknown tools and bad blocks skipped). */
  parse(text: string, tools: readonly ToolSpec[]): ToolCallParse;
  /** How the model writes a plain answer (Inkling: inside a text block). Absent: the text as it is. */
  writeText?(text: string): string;
  /**
   * True when the reply's tool-call ids must differ between the turns of a session, as SGLang's random `call_` ids
   * do (the Inkling template finds a tool result's name by its id among every earlier call): the mock then numbers
   * calls within the prompt's length (`call_<prompt tokens>_<position>`). Absent: `call00000`, `call00001`, ...
   */
  readonly idsPerPrompt?: boolean;
}

/** What a reasoning parser found. */
export interface ReasoningParse {
  /** The reasoning text, or null when the completion has none. */
  reasoning: string | null;
  /** The rest of the completion (what the tool-call parser sees next). */
  content: string;
}

/** Writer + parser of one SGLang `--reasoning-parser` format (`qwen3`, `glm45`, ...). */
export interface ReasoningFormat {
  /** The SGLang parser name. */
  readonly name: string;
  /**
   * Completion text carrying `reasoning` before `content`. `openedByPrompt`: the generation prompt already opened the
   * reasoning block (the text then starts inside it, without the opening tag).
   */
  write(reasoning: string, content: string, openedByPrompt: boolean): string;
  /** Splits completion text like the SGLang reasoning parser (`openedByPrompt` = its forced-reasoning mode). */
  parse(text: string, openedByPrompt: boolean): ReasoningParse;
}
