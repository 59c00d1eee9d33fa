// The data a replay works on: one recorded conversation read from a corpus line, or the reason a line was refused.
// Pure shapes shared by the corpus reader, the renderability check, the replay plan, the drivers and the report.
import type { ChatMessage, ToolSpec } from "../tokenizer/types";

/** Which corpus format a line was read as: miles' trajectory dump row, or an OpenAI chat record. */
export type CorpusFormat = "miles" | "openai";

/** Where a corpus line came from. */
export interface CorpusPosition {
  /** The file as the user named it. */
  file: string;
  /** 1-based line number in that file (after decompression). */
  line: number;
  /** 0-based position of the line among every non-blank line of the corpus, all files in order (the conversation index). */
  index: number;
}

/** One recorded conversation. */
export interface RecordedConversation extends CorpusPosition {
  format: CorpusFormat;
  /** The whole conversation, its last message the final assistant reply. */
  messages: ChatMessage[];
  /** The tool specs sent with every request (derived from the called names when a dump row carries none). */
  tools: ToolSpec[];
  /**
   * Messages before this index are the agent's initial prompt: an assistant message among them is an input the agent
   * wrote (a few-shot example), not a model reply (miles' rows give their `prompt`; OpenAI records start at 0).
   */
  promptLength: number;
  /** A short name from the record (`sample_index` of a dump row, an `id` of a chat record), or null. */
  label: string | null;
}

/** A line that is not a conversation at all (bad JSON, no `messages` array, a message that is not an object). */
interface MalformedLine extends CorpusPosition {
  problem: string;
}

/** What one non-blank corpus line holds. */
export type CorpusEntry = { kind: "conversation"; conversation: RecordedConversation } | { kind: "malformed"; malformed: MalformedLine };
