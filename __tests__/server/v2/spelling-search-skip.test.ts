// v2 runs its spelling-tolerant attach search (for the re-spelled tool-call warning) only when the positioning search
// refused a pair that the tolerant matcher accepts; otherwise the tolerant search would walk the very same pairs.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { MESSAGE_MATCHERS, type MessageMatcherName } from "../../../src/server/message-matchers";
import { spellingTolerant, toolCallSpellingDifference } from "../../../src/server/replay-diagnosis";
import { TrajectoryForest, type TrajectoryNode } from "../../../src/server/v2/forest";
import type { ChatMessage } from "../../../src/tokenizer/types";
import { stubRecord } from "./support/forest-builders";
import { expectEqual, expectSame } from "../../support/fast-expect";

const call = (args: string, extra: Record<string, unknown> = {}): NonNullable<ChatMessage["tool_calls"]>[number] => ({
  id: "c0",
  type: "function",
  function: { name: "get_weather", arguments: args },
  ...extra,
});

// A small alphabet: assistant turns whose calls come in several spellings of the same and of other arguments.
const messageArb = fc.constantFrom<ChatMessage>(
  { role: "user", content: "q1" },
  { role: "user", content: "q2" },
  { role: "tool", content: "t", tool_call_id: "c0" },
  { role: "assistant", content: "a" },
  { role: "assistant", content: "a", tool_calls: [call('{"city": "Oslo"}')] },
  { role: "assistant", content: "a", tool_calls: [call('{"city":"Oslo"}')] },
  { role: "assistant", content: "a", tool_calls: [call('{"city": "Oslo"}', { parsed: 1 })] },
  { role: "assistant", content: "a", tool_calls: [call('{"city": "Rome"}')] },
);

/** A forest grown by commits: each node under a random earlier node (or a new root). */
const forestArb = fc.array(fc.record({ parent: fc.nat(), root: fc.boolean(), delta: fc.array(messageArb, { minLength: 1, maxLength: 3 }) }), {
  minLength: 1,
  maxLength: 8,
});

function grow(spec: Array<{ parent: number; root: boolean; delta: ChatMessage[] }>): TrajectoryForest {
  const forest = new TrajectoryForest();
  for (const { parent, root, delta } of spec) {
    const under: TrajectoryNode | null = root || forest.nodes.length === 0 ? null : forest.nodes[parent % forest.nodes.length];
    const id = forest.nodes.length;
    forest.createNode(under, {
      deltaMessages: delta,
      tokenIds: [...(under?.tokenIds ?? []), id],
      completionSpan: [0, 1],
      committedAt: id,
      responseId: `r${id}`,
      record: stubRecord(id),
      finishReason: "stop",
    });
  }
  return forest;
}

/** A request: some node's path (or a prefix of it), with one message swapped, then more messages. */
const requestFor = (forest: TrajectoryForest): fc.Arbitrary<ChatMessage[]> =>
  fc
    .record({ node: fc.nat(), cut: fc.nat(), swapAt: fc.nat(), swap: fc.option(messageArb), tail: fc.array(messageArb, { maxLength: 2 }) })
    .map(({ node, cut, swapAt, swap, tail }) => {
      const path = forest.nodes[node % forest.nodes.length].pathMessages();
      const messages = path.slice(0, path.length - (cut % 2)).map((m) => ({ ...m }));
      if (swap !== null && messages.length > 0) messages[swapAt % messages.length] = swap;
      return [...messages, ...tail];
    });

describe("the tolerant attach search is skipped exactly when it cannot differ", () => {
  const names = Object.keys(MESSAGE_MATCHERS) as MessageMatcherName[];
  test("no refused pair re-spelled: the tolerant search lands where the strict one did; refused pairs are the matcher's noes", () => {
    let skipped = 0;
    let needed = 0;
    let moved = 0;
    fc.assert(
      fc.property(
        forestArb.chain((spec) => fc.tuple(fc.constant(spec), requestFor(grow(spec)))),
        fc.constantFrom(...names),
        ([spec, request], name) => {
          const forest = grow(spec);
          const matcher = MESSAGE_MATCHERS[name];
          let noes = 0;
          const counted = (a: ChatMessage, b: ChatMessage): boolean => {
            const yes = matcher(a, b);
            if (!yes) noes += 1;
            return yes;
          };
          const refused: Array<[ChatMessage, ChatMessage]> = [];
          const strict = forest.findAttachPoint(request, counted, refused);
          expectSame(refused.length, noes);
          expectEqual(forest.findAttachPoint(request, matcher), strict);
          const tolerant = forest.findAttachPoint(request, spellingTolerant(matcher));
          if (!refused.some(([a, b]) => toolCallSpellingDifference(a, b) !== null)) {
            skipped += 1;
            expectEqual(tolerant, strict);
          } else {
            needed += 1;
            if (tolerant.matchedMessages > strict.matchedMessages) moved += 1;
          }
        },
      ),
      { numRuns: 3000 },
    );
    // Both branches are exercised, and the tolerant search does find deeper attach points when it runs.
    expect(skipped).toBeGreaterThan(100);
    expect(needed).toBeGreaterThan(50);
    expect(moved).toBeGreaterThan(10);
  });
});
