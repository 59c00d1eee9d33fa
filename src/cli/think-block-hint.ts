// Names the likely cause of a failure against a server that does not report its configuration, when the first
// difference of the training tokens is an inserted think block: the two sides render in different thinking modes.
import { alignSequences } from "../matchers/sequence-alignment";
import type { SessionParityRun } from "../fixture/types";

/** A reasoning block's tag: a difference around one is a difference of thinking mode or template. */
const THINK_TAG = /<\/?think>/;

/**
 * The hint for the first failing pair whose sample tokens first differ in or around a think block (a run only one side
 * has, or a changed run next to a `<think>` / `</think>` tag); null when the first difference is elsewhere.
 */
export function thinkBlockHint(
  pairs: ReadonlyArray<readonly [SessionParityRun | Error, SessionParityRun | Error]>,
  silentSides: readonly string[],
  decode: (ids: number[]) => string,
): string | null {
  for (const [v1, v2] of pairs) {
    if (v1 instanceof Error || v2 instanceof Error || v1.samples.length === 0 || v2.samples.length === 0) continue;
    const left = v1.samples[0].tokens;
    const right = v2.samples[0].tokens;
    const first = alignSequences(left, right).hunks.find((hunk) => hunk.kind !== "equal");
    if (first === undefined) continue;
    // the differing run with two tokens of context on each side: a think tag in it makes it a think-block difference
    const leftIds = left.slice(Math.max(first.leftStart - 2, 0), first.leftEnd + 2);
    const rightIds = right.slice(Math.max(first.rightStart - 2, 0), first.rightEnd + 2);
    let leftText: string;
    let rightText: string;
    try {
      leftText = decode(leftIds);
      rightText = decode(rightIds);
    } catch {
      return null;
    }
    if (!THINK_TAG.test(leftText) && !THINK_TAG.test(rightText)) return null;
    let what: string;
    if (first.kind === "replace") {
      what = `at ${first.leftStart} of sample.tokens, v1 has ${JSON.stringify(leftText)} where v2 has ${JSON.stringify(rightText)}, a think-block difference`;
    } else {
      const [side, ids] = first.kind === "delete" ? ["v1", left.slice(first.leftStart, first.leftEnd)] : ["v2", right.slice(first.rightStart, first.rightEnd)];
      let text: string;
      try {
        text = decode(ids);
      } catch {
        return null;
      }
      what = `only ${side} has ${ids.length} tokens at ${first.leftStart} of sample.tokens (${JSON.stringify(text)}), a think block`;
    }
    const silent = silentSides.join(" and ");
    return (
      `Likely cause: ${what}: ` +
      `the two sides render the chat template in different thinking modes (or from different templates), and the ${silent} server ` +
      `does not report its configuration. Give both sides the same kwargs, --chat-template-kwargs '{"enable_thinking": false}' ` +
      `(this package's default) or --chat-template-kwargs '{}' (miles' default, thinking on), and the same template source ` +
      `(--chat-template family or checkpoint).`
    );
  }
  return null;
}
