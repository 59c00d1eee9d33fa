// The seam through which a host that outlives one module registry (a Jest worker's test environment) lends its
// parsed tokenizer files and built library tokenizer to every test file, instead of each file loading its own.
import type { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import type { ByteLevelTable } from "./byte-level-decoder";

/** Parsed tokenizer.json and tokenizer_config.json of one checkpoint directory. */
export interface ParsedTokenizerFiles {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
}

/**
 * What a host provides on `globalThis[SHARED_TOKENIZER_FILES]`. Both methods answer "not available" rather than
 * throw: the caller then loads the files itself, so every error a user sees comes from the ordinary load path.
 */
export interface SharedTokenizerFiles {
  /** The parsed files of `directory` (current on disk), or null when the host does not have them. */
  files(directory: string): Promise<ParsedTokenizerFiles | null>;
  /** The library tokenizer built from exactly this parsed tokenizer.json object (by identity), if the host has one. */
  libraryTokenizer(tokenizerJson: object): HfTokenizer | undefined;
  /**
   * What the host derived from exactly this pair of parsed files (by identity), computed once and then lent to
   * every test file; undefined for files the host did not lend together. Optional: without it each file computes its own.
   */
  derived?(tokenizerJson: object, tokenizerConfig: object): DerivedTokenizerTables | undefined;
}

/** Read-only facts about a vocabulary that take a walk over all of it to compute. */
export interface DerivedTokenizerTables {
  /** One past the highest token id (the library tokenizer's vocabulary size). */
  vocabSize(): number;
  /** The table decoder's tables, or null when these files must not be decoded through the table. */
  byteLevelTable(): ByteLevelTable | null;
}

/** Key on `globalThis` under which a host lends its {@link SharedTokenizerFiles}. */
export const SHARED_TOKENIZER_FILES: unique symbol = Symbol.for("jest-session-parity.shared-tokenizer-files");

/** The store lent by the host, if any. */
export function sharedTokenizerFiles(): SharedTokenizerFiles | undefined {
  const store = (globalThis as { [SHARED_TOKENIZER_FILES]?: SharedTokenizerFiles })[SHARED_TOKENIZER_FILES];
  return store !== undefined && typeof store.files === "function" && typeof store.libraryTokenizer === "function" ? store : undefined;
}
