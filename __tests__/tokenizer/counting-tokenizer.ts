// A tokenizer that forwards to a real one and counts its chat-template renders: the memo and cache tests prove a
// render happened once (or not at all) by this count.
import type { ChatMessage, RenderOptions, Tokenizer } from "../../src/tokenizer";

/**
 * `base` behind a counter of the renders `counts` selects (every render by default). `renders()` reads the count.
 */
export function countingTokenizer(base: Tokenizer, counts: (options?: RenderOptions) => boolean = () => true): { tokenizer: Tokenizer; renders: () => number } {
  let count = 0;
  const counting: Tokenizer = {
    family: base.family,
    source: base.source,
    specialIds: base.specialIds,
    encode: (text) => base.encode(text),
    decode: (ids, options) => base.decode(ids, options),
    tokenToId: (token) => base.tokenToId(token),
    renderChatTemplate: (messages: readonly ChatMessage[], options?: RenderOptions) => {
      if (counts(options)) count += 1;
      return base.renderChatTemplate(messages, options);
    },
  };
  return { tokenizer: counting, renders: () => count };
}
