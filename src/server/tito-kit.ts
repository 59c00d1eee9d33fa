// Loads what every policy needs from the tokenizer component: the Qwen3 tokenizer and its TITO rules.
// One place adapts the tokenizer component's API to the structural TitoLike seam the policies use.
import { createTito, loadTokenizer } from "../tokenizer";
import type { ChatTemplateKwargs, Tokenizer } from "../tokenizer/types";
import type { KwargsMerger } from "./chat-request";
import type { TitoLike } from "./policy";

/** The tokenizer, its TITO rules, and how request kwargs merge over the server defaults. */
export interface TitoKit {
  tokenizer: Tokenizer;
  tito: TitoLike;
  /** Server default kwargs after the TITO tokenizer's own rules (Qwen3 pins `clear_thinking: false`). */
  defaultKwargs: ChatTemplateKwargs;
  /** Request kwargs over the defaults; throws when a request contradicts a pinned kwarg. */
  mergeKwargs: KwargsMerger;
}

/**
 * Loads the tokenizer (cached per checkpoint) and builds its TITO rules with the server default kwargs.
 * @throws when the tokenizer files cannot be read or the defaults contradict a pinned kwarg
 */
export async function loadTitoKit(hfCheckpoint: string | undefined, defaultKwargs: ChatTemplateKwargs): Promise<TitoKit> {
  const tokenizer = await loadTokenizer(hfCheckpoint ? { hfCheckpoint } : {});
  // A server renders the same conversations again (retries, the sessions of a scripted batch): remember render ids.
  const tito = createTito(tokenizer, defaultKwargs, { memoizeRenders: true });
  return {
    tokenizer,
    tito,
    defaultKwargs: { ...tito.defaultKwargs },
    mergeKwargs: (_defaults, overrides) => tito.mergeKwargs(overrides),
  };
}
