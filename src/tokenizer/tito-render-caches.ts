// The render caches of TITO rules (prefix renders, memoized render ids), which several rule sets over the same
// vocabulary and template may share: the v1 and v2 servers of one process then render a conversation once, not twice.
import { RenderedIdsMemo } from "./rendered-ids-memo";
import { TitoPrefixCache } from "./tito-prefix-cache";

/**
 * The bounded caches a {@link FamilyTito} renders through. Every entry is keyed by the exact inputs of a render,
 * so rule sets that render with the same vocabulary and the same template may share one set: each gets the ids it
 * would have computed itself, and the bounds hold for the set as a whole.
 */
export class TitoRenderCaches {
  /** Renders of `[dummySystem, dummyAssistant]` per tools, kwargs and stored tool calls. */
  readonly prefixRenders: TitoPrefixCache;
  /** Ids of whole renders by exact inputs (used only by rule sets that memoize renders). */
  readonly renderedIds: RenderedIdsMemo;

  /**
   * @param prefixRenders the prefix-render cache (default bounds when omitted)
   * @param renderedIds the render-ids memo (default bounds when omitted)
   */
  constructor(prefixRenders?: TitoPrefixCache, renderedIds?: RenderedIdsMemo) {
    this.prefixRenders = prefixRenders ?? new TitoPrefixCache();
    this.renderedIds = renderedIds ?? new RenderedIdsMemo();
  }
}

/** Shared sets per vocabulary object, then per template object, then per family name; dropped with either object. */
const shared = new WeakMap<object, WeakMap<object, Map<string, TitoRenderCaches>>>();

/**
 * The one process-wide {@link TitoRenderCaches} of rule sets that render with this `vocabulary` object (the loaded
 * checkpoint's tokenizer), this `template` object (its chat-template renderer) and this family. Objects, not
 * names, decide: two loads that parse a template anew get two sets (they may differ), and a set goes when its
 * vocabulary or template is collected.
 */
export function sharedTitoRenderCaches(vocabulary: object, template: object, family: string): TitoRenderCaches {
  let byTemplate = shared.get(vocabulary);
  if (byTemplate === undefined) {
    byTemplate = new WeakMap();
    shared.set(vocabulary, byTemplate);
  }
  let byFamily = byTemplate.get(template);
  if (byFamily === undefined) {
    byFamily = new Map();
    byTemplate.set(template, byFamily);
  }
  let caches = byFamily.get(family);
  if (caches === undefined) {
    caches = new TitoRenderCaches();
    byFamily.set(family, caches);
  }
  return caches;
}
