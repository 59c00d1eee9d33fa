// Locates the first character where two renders differ and quotes the text around it on both sides.
// The TITO layer's failure message (miles: verify_append_only_via_tito_instance's ~60 characters of context).
import type { TextDivergence } from "./types";

/** Characters of context quoted on each side of a divergence. */
const DIVERGENCE_CONTEXT_CHARS = 60;

/** The first index where `expected` and `actual` differ with context around it, or null when they are equal. */
export function firstDivergence(expected: string, actual: string, context = DIVERGENCE_CONTEXT_CHARS): TextDivergence | null {
  if (expected === actual) return null;
  const common = Math.min(expected.length, actual.length);
  let index = 0;
  while (index < common && expected.charCodeAt(index) === actual.charCodeAt(index)) index += 1;
  const start = Math.max(0, index - context);
  return { index, expected: expected.slice(start, index + context), actual: actual.slice(start, index + context) };
}

/** `at char 812: expected ..."..."... actual ..."..."...` on one line (JSON-quoted so newlines stay visible). */
export function describeDivergence(divergence: TextDivergence): string {
  return `at char ${divergence.index}: expected ...${JSON.stringify(divergence.expected)}... actual ...${JSON.stringify(divergence.actual)}...`;
}
