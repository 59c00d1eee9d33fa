// The two checks of one case: the text layer (prefix renders are prefixes) and the TITO layer (merge, decode, compare).
// Pure: everything comes through the render target or family; a thrown error becomes a failed result, never escapes.
import type { ChatMessage, ToolSpec } from "../tokenizer/types";
import { describeDivergence, firstDivergence } from "./divergence";
import type { TemplateRenderTarget, TemplateVerifyFamily, TextDivergence } from "./types";

/** The outcome of one check before it is labelled with its case. */
export interface CheckOutcome {
  passed: boolean;
  error: string | null;
  divergence: TextDivergence | null;
}

const PASSED: CheckOutcome = { passed: true, error: null, divergence: null };

function thrown(error: unknown): CheckOutcome {
  const name = error instanceof Error ? error.name : "Error";
  const message = error instanceof Error ? error.message : String(error);
  return { passed: false, error: `${name}: ${message}`, divergence: null };
}

/** Deep copy of messages, so a template that mutates its input cannot leak into the next render. */
function copyMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  return JSON.parse(JSON.stringify(messages)) as ChatMessage[];
}

/**
 * Text layer at position `n`: the render of `messages[:n]` without generation prompt is a prefix of the render of
 * all messages with it, and the pretokenized path (that prefix plus the rest of the full render) equals a standard
 * render made on its own. Mirrors `simulate_pretokenized_path` / `verify_append_only` of miles'
 * utils/test_utils/chat_template_verify.py.
 */
export function checkTextLayer(target: TemplateRenderTarget, messages: readonly ChatMessage[], n: number, tools: readonly ToolSpec[] | null): CheckOutcome {
  try {
    const standard = target.render(copyMessages(messages), { tools, addGenerationPrompt: true });
    const prefix = target.render(copyMessages(messages.slice(0, n)), { tools, addGenerationPrompt: false });
    const full = target.render(copyMessages(messages), { tools, addGenerationPrompt: true });
    if (!full.startsWith(prefix)) {
      const divergence = firstDivergence(full.slice(0, prefix.length), prefix) as TextDivergence;
      return {
        passed: false,
        error: `prefix mismatch (N=${n}): render(messages[:${n}]) is not a prefix of render(messages) (expected: the full render, actual: the prefix) ${describeDivergence(divergence)}`,
        divergence,
      };
    }
    const pretokenized = prefix + full.slice(prefix.length);
    const divergence = firstDivergence(standard, pretokenized);
    if (divergence !== null) {
      return {
        passed: false,
        error: `pretokenized (N=${n}) != standard: two renders of the same messages differ ${describeDivergence(divergence)}`,
        divergence,
      };
    }
    return PASSED;
  } catch (error) {
    return thrown(error);
  }
}

/** Where the TITO layer's appended run ends: the first assistant message at or after `n` (or the end). */
function appendedRunEnd(messages: readonly ChatMessage[], n: number): number {
  let m = n;
  while (m < messages.length && messages[m].role !== "assistant") m += 1;
  return m;
}

/** True when position `n` opens a non-empty non-assistant appendix (the TITO layer skips the others, as miles does). */
export function hasTitoAppendix(messages: readonly ChatMessage[], n: number): boolean {
  return n < messages.length && messages[n].role !== "assistant";
}

/**
 * TITO layer at position `n`: encode the render of `messages[:n]`, trim the family's trailing ids (the model stops
 * before them), merge the appended non-assistant run through the family, decode, and compare with the canonical
 * render of `messages[:m]` with generation prompt. Mirrors `verify_append_only_via_tito_instance` of miles'
 * utils/test_utils/chat_template_verify.py.
 */
export function checkTitoLayer(family: TemplateVerifyFamily, messages: readonly ChatMessage[], n: number, tools: readonly ToolSpec[] | null): CheckOutcome {
  try {
    if (!hasTitoAppendix(messages, n)) {
      return { passed: false, error: `empty appendix at N=${n}: the TITO layer needs a non-assistant message at position ${n}`, divergence: null };
    }
    const m = appendedRunEnd(messages, n);
    const prefixMessages = copyMessages(messages.slice(0, n));
    const fullMessages = copyMessages(messages.slice(0, m));
    const prefixText = family.render(prefixMessages, { tools, addGenerationPrompt: false });
    const fullText = family.render(fullMessages, { tools, addGenerationPrompt: true });
    let prefixIds = family.encode(prefixText);
    let end = prefixIds.length;
    while (end > 0 && family.trailingIds.has(prefixIds[end - 1])) end -= 1;
    if (end !== prefixIds.length) prefixIds = prefixIds.slice(0, end);
    const merged = family.mergeTokens(prefixMessages, fullMessages, prefixIds, tools);
    const mergedText = family.decode(merged);
    const divergence = firstDivergence(fullText, mergedText);
    if (divergence === null) return PASSED;
    return {
      passed: false,
      error: `decode-roundtrip mismatch (N=${n}) (expected: the canonical render, actual: the merged ids decoded) ${describeDivergence(divergence)}`,
      divergence,
    };
  } catch (error) {
    return thrown(error);
  }
}
