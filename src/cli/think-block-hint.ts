// Names the likely cause of a failure against a server that does not report its configuration, when the first
// difference of the training tokens is an inserted think block: the two sides render in different thinking modes.
import { alignSequences } from "../matchers/sequence-alignment";
import type { SessionParityRun } from "../fixture/types";

/** An empty or filled reasoning block, as a template in another thinking mode adds it (`<think>\n\n</think>\n\n`). */
const THINK_BLOCK = /^\s*<think>[\s\S]*<\/think>\s*$/;

/**
 * The hint for the first failing pair whose sample tokens first differ by a run only one side has that decodes to a
 * think block; null when no pair does (or nothing could be decoded).
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
    if (first.kind === "replace") return null;
    const [side, ids] = first.kind === "delete" ? ["v1", left.slice(first.leftStart, first.leftEnd)] : ["v2", right.slice(first.rightStart, first.rightEnd)];
    let text: string;
    try {
      text = decode(ids);
    } catch {
      return null;
    }
    if (!THINK_BLOCK.test(text)) return null;
    const silent = silentSides.join(" and ");
    return (
      `Likely cause: only ${side} has ${ids.length} tokens at ${first.leftStart} of sample.tokens (${JSON.stringify(text)}), a think block: ` +
      `the two sides render the chat template in different thinking modes (or from different templates), and the ${silent} server ` +
      `does not report its configuration. Give both sides the same kwargs, --chat-template-kwargs '{"enable_thinking": false}' ` +
      `(this package's default) or --chat-template-kwargs '{}' (miles' default, thinking on), and the same template source ` +
      `(--chat-template family or checkpoint).`
    );
  }
  return null;
}
