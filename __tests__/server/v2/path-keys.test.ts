// The v2 path keys put together from per-node parts are, for every node of random forests and in any order of asking,
// exactDataKeyAt of the path's messages and of the record's tools; and the mismatch report of every leaf computed
// through them is the report of an unmemoized TITO on the same path (real tokenizer, realistic and odd messages).
import { beforeAll, describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../../src/agent/texts";
import { strictMessageMatches, type PolicyContext } from "../../../src/server";
import { computeSessionMismatch, recordTools } from "../../../src/server/session-metadata";
import type { SessionRecord } from "../../../src/server/types";
import { TrajectoryForest, type TrajectoryNode } from "../../../src/server/v2/forest";
import { pathInputKeys } from "../../../src/server/v2/path-keys";
import { pathMismatch } from "../../../src/server/v2/session-view";
import { exactDataKeyAt, loadTokenizer, Qwen3Tito, type ChatMessage, type Qwen3Tokenizer, type ToolCall, type ToolSpec } from "../../../src/tokenizer";
import { PyFloat } from "../../../src/wire/py-json";

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

describe("pathInputKeys", () => {
  test("equals exactDataKeyAt of the path messages (depth 1) and of the tools, for every node in any order", () => {
    let keyed = 0;
    let keyless = 0;
    fc.assert(
      fc.property(forestShape, fc.array(fc.nat(), { minLength: 1, maxLength: 12 }), (shape, asks) => {
        const forest = buildForest(shape);
        for (const ask of [...asks, ...forest.nodes.map((node) => node.id)]) {
          const node = forest.nodes[ask % forest.nodes.length];
          const tools = recordTools(node.record);
          const keys = pathInputKeys(node, tools);
          const reference = exactDataKeyAt(node.pathMessages(), 1);
          expect(keys.messages).toBe(reference ?? null);
          expect(keys.tools).toBe(exactDataKeyAt(tools, 1) ?? null);
          if (reference === undefined) keyless += 1;
          else keyed += 1;
        }
      }),
      { numRuns: 400, seed: 2929 },
    );
    expect(keyed).toBeGreaterThan(200);
    expect(keyless).toBeGreaterThan(200);
  });

  test("a message nested one container short of the bound keeps its key only where the path puts it (depth 2)", () => {
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
    expect(exactDataKeyAt(node.pathMessages(), 1)).toBeUndefined();
    expect(pathInputKeys(node, null).messages).toBeNull();
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
