// The names the v2 server gives a path's messages and tools for the canonical render memo: on random forests (odd
// messages: -0, NaN, undefined, class instances, nesting at the bound), two paths share a name only when their exact
// keys are equal, and have one exactly when they have an exact key; each leaf's mismatch report computed through them
// is an unmemoized TITO's report of the same path (real tokenizer).
import { beforeAll, describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../../src/agent/texts";
import { strictMessageMatches, type PolicyContext } from "../../../src/server";
import { computeSessionMismatch, recordTools } from "../../../src/server/session-metadata";
import type { SessionRecord } from "../../../src/server/types";
import { TrajectoryForest, type TrajectoryNode } from "../../../src/server/v2/forest";
import { pathInputsName, TextIds } from "../../../src/server/v2/path-keys";
import { pathMismatch } from "../../../src/server/v2/session-view";
import {
  exactDataKey,
  exactDataKeyAt,
  loadTokenizer,
  Qwen3Tito,
  type ChatMessage,
  type Qwen3Tokenizer,
  type ToolCall,
  type ToolSpec,
} from "../../../src/tokenizer";
import { PyFloat } from "../../../src/wire/py-json";
import { expectSame } from "../../support/fast-expect";

function nested(depth: number, inner: unknown): unknown {
  let value = inner;
  for (let i = 0; i < depth; i += 1) value = [value];
  return value;
}

function record(id: number, tools: unknown): SessionRecord {
  return {
    timestamp: id,
    request_timestamp: id,
    method: "POST",
    path: "/v1/chat/completions",
    request: tools === undefined ? {} : { tools: tools },
    response: { id: `resp-${id}` },
    status_code: 200,
  };
}

/** Odd values a message may carry: lossy for a plain serialization, keyless, or nested right at the bound. */
const oddValue = fc.oneof(
  fc.constantFrom<unknown>(0, -0, 1.5, Number.NaN, Infinity, null, undefined, "", '"\\', new PyFloat(1), new Date(0)),
  fc.integer({ min: 58, max: 63 }).map((depth) => nested(depth, 1)),
  fc.dictionary(fc.constantFrom("a", "b"), fc.constantFrom<unknown>(0, -0, undefined), { maxKeys: 2 }),
);

const message = fc.record(
  { role: fc.constantFrom("user", "assistant", "tool", "system"), content: fc.string({ maxLength: 6 }), extra: oddValue },
  { requiredKeys: ["role", "content"] },
) as fc.Arbitrary<ChatMessage>;

/** A forest shape: for each node, its parent among the earlier ones (or a root), its delta and its record's tools. */
const forestShape = fc.array(
  fc.record({
    parent: fc.nat(),
    root: fc.boolean(),
    delta: fc.array(message, { maxLength: 3 }),
    tools: fc.constantFrom<unknown>(undefined, null, WEATHER_TOOLS, [{ type: "function", function: { name: "f", parameters: { x: -0 } } }], nested(63, 1)),
  }),
  { minLength: 1, maxLength: 8 },
);

function buildForest(shape: ReadonlyArray<{ parent: number; root: boolean; delta: ChatMessage[]; tools: unknown }>): TrajectoryForest {
  const forest = new TrajectoryForest();
  shape.forEach((spec, id) => {
    const parent = id === 0 || spec.root ? null : forest.nodes[spec.parent % id];
    forest.createNode(parent, {
      deltaMessages: spec.delta,
      tokenIds: [id],
      completionSpan: [0, 1],
      committedAt: id,
      responseId: `r${id}`,
      record: record(id, spec.tools),
      finishReason: "stop",
    });
  });
  return forest;
}

/** exactDataKey of the canonical render's memo inputs for `node`'s path and `tools` (the reference the names stand for). */
function exactInputsKey(node: TrajectoryNode, tools: readonly ToolSpec[] | null): string | undefined {
  return exactDataKey(["canonical", node.pathMessages(), tools, {}]);
}

describe("pathInputsName", () => {
  test("equal names only for equal exact keys, and a name exactly when there is an exact key (random forests)", () => {
    let named = 0;
    let unnamed = 0;
    let shared = 0;
    fc.assert(
      fc.property(forestShape, forestShape, fc.array(fc.nat(), { minLength: 1, maxLength: 12 }), (shapeA, shapeB, asks) => {
        const forests = [buildForest(shapeA), buildForest(shapeB), buildForest(shapeA)];
        const nodes = forests.flatMap((forest) => forest.nodes);
        const byName = new Map<string, string>();
        for (const ask of [...asks, ...nodes.map((_, i) => i)]) {
          const node = nodes[ask % nodes.length];
          const tools = recordTools(node.record);
          const name = pathInputsName(node, tools);
          const key = exactInputsKey(node, tools);
          expectSame(name === null, key === undefined);
          if (name === null || key === undefined) {
            unnamed += 1;
            continue;
          }
          named += 1;
          const known = byName.get(name);
          if (known === undefined) byName.set(name, key);
          else {
            shared += 1;
            expectSame(key, known);
          }
        }
      }),
      { numRuns: 300, seed: 2929 },
    );
    expect(named).toBeGreaterThan(200);
    expect(unnamed).toBeGreaterThan(200);
    expect(shared).toBeGreaterThan(200);
  });

  test("a message nested one container short of the bound has no key where the path puts it, so no name", () => {
    const forest = new TrajectoryForest();
    // 62 arrays: the innermost sits at depth 2 + 1 + 61 = 64 in the memo inputs, one past the bound
    const deep = { role: "user", content: "x", extra: nested(62, 1) } as ChatMessage;
    const node = forest.createNode(null, {
      deltaMessages: [deep],
      tokenIds: [1],
      completionSpan: [0, 1],
      committedAt: 0,
      responseId: "r",
      record: record(0, undefined),
      finishReason: "stop",
    });
    expect(exactDataKeyAt(deep, 0)).toBeDefined();
    expect(exactInputsKey(node, null)).toBeUndefined();
    expect(pathInputsName(node, null)).toBeNull();
  });

  test("TextIds: past its bound it forgets every text and numbers it afresh, never giving an id to a second text", () => {
    const ids = new TextIds(10);
    const seen = new Map<number, string>();
    const texts = ["[1]", "[2]", "[1]", "[12345]", "[2]", "[1]", "[3]", "[123]", "[1]"];
    let repeats = 0;
    for (const text of texts) {
      const id = ids.idOf(text);
      if (seen.has(id)) {
        expect(seen.get(id)).toBe(text);
        repeats += 1;
      }
      seen.set(id, text);
    }
    expect(repeats).toBeGreaterThan(0);
    expect(new Set(seen.values()).size).toBeLessThan(seen.size); // some text was numbered again after a reset
  });
});

let tokenizer: Qwen3Tokenizer;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
});

function context(memoize: boolean): PolicyContext {
  return {
    tokenizer,
    tito: new Qwen3Tito(tokenizer, {}, { memoizeRenders: memoize }),
    defaultChatTemplateKwargs: {},
    messagesMatch: strictMessageMatches,
    logger: { warn: () => undefined },
  };
}

describe("pathMismatch through path keys", () => {
  test("every leaf's report is an unmemoized TITO's report of the same path (shared nodes, odd messages, mismatches)", () => {
    const memoized = context(true);
    const plain = context(false);
    const forest = new TrajectoryForest();
    const call = (city: string, id: string): ToolCall[] => [{ id, type: "function", function: { name: "get_weather", arguments: `{"location": "${city}"}` } }];
    const tokens = (messages: readonly ChatMessage[], tools: readonly ToolSpec[] | null, drift: number): number[] => {
      const ids = plain.tito.renderPromptIds(messages, tools, {});
      if (drift > 0) ids[ids.length - drift] = 11; // a retokenization drift the report must show
      return ids;
    };
    const grow = (parent: TrajectoryNode | null, delta: ChatMessage[], tools: readonly ToolSpec[] | null, drift = 0): TrajectoryNode => {
      const path = [...(parent?.pathMessages() ?? []), ...delta];
      const ids = tokens(path, tools, drift);
      return forest.createNode(parent, {
        deltaMessages: delta,
        tokenIds: ids,
        completionSpan: [ids.length - 1, ids.length],
        committedAt: forest.nodes.length,
        responseId: `r${forest.nodes.length}`,
        record: record(forest.nodes.length, tools === null ? undefined : structuredClone(tools)),
        finishReason: "stop",
      });
    };
    const root = grow(null, [...buildInitialMessages(), { role: "assistant", content: "Looking.", tool_calls: call("Beijing", "c0") }], WEATHER_TOOLS);
    const middle = grow(
      root,
      [
        { role: "tool", content: MOCK_TOOL_RESULTS[0], tool_call_id: "c0" },
        { role: "assistant", content: "Sunny, 22." },
      ],
      WEATHER_TOOLS,
    );
    const leaves = [
      grow(
        middle,
        [
          { role: "user", content: "And 東京?" },
          { role: "assistant", content: "Checking.", tool_calls: call("東京", "c1") },
        ],
        WEATHER_TOOLS,
      ),
      grow(
        middle,
        [
          { role: "user", content: "And 東京?" },
          { role: "assistant", content: "Checking." },
        ],
        WEATHER_TOOLS,
        3,
      ),
      grow(
        middle,
        [
          { role: "user", content: "Thanks", extra: -0 },
          { role: "assistant", content: "" },
        ],
        null,
        1,
      ),
      grow(
        root,
        [
          { role: "tool", content: "oops", tool_call_id: "c0", extra: new PyFloat(2) },
          { role: "assistant", content: "?" },
        ],
        WEATHER_TOOLS,
      ),
      grow(
        root,
        [
          { role: "tool", content: "deep", tool_call_id: "c0", extra: nested(62, 0) },
          { role: "assistant", content: "!" },
        ],
        WEATHER_TOOLS,
      ),
    ];
    let drifted = 0;
    for (const leaf of [...leaves, ...leaves.slice().reverse()]) {
      const expected = computeSessionMismatch(plain, leaf.pathMessages(), leaf.tokenIds, recordTools(leaf.record));
      expect(pathMismatch(leaf, memoized)).toEqual(expected);
      if (expected !== null && expected.length > 0) drifted += 1;
    }
    expect(drifted).toBeGreaterThanOrEqual(4);
  });
});
