// Pure tests of v2 prepare/commit with a stand-in TITO: commit-time races the HTTP tests cannot time reliably.
// The TITO stand-in gives one token per message so expected prompt ids are easy to write down.
import { describe, expect, test } from "@jest/globals";
import type { PolicyContext, TitoLike } from "../../../src/server/policy";
import { SessionHttpError, type CompletedTurn, type NormalizedChatRequest } from "../../../src/server/types";
import { commitV2Turn, createV2State, prepareV2Turn } from "../../../src/server/v2/serving";
import type { ChatMessage } from "../../../src/tokenizer/types";
import { recordingLogger, stubRecord } from "./support/forest-builders";

/** A TITO stand-in: one token per message, prompt = stored ids + one id per appended message. */
const tito: TitoLike = {
  maxTrimTokens: 0,
  allowedAppendRoles: new Set(["tool", "user", "system", "assistant"]),
  renderPromptIds: (messages) => messages.map((_, i) => 1000 + i),
  mergeTokens: (oldMessages, newMessages, storedIds) => [...storedIds, ...newMessages.slice(oldMessages.length).map((_, i) => 2000 + i)],
  compareWithCanonical: () => [],
};

const ctx: PolicyContext = {
  tokenizer: undefined as never,
  tito,
  defaultChatTemplateKwargs: {},
  messagesMatch: (a, b) => a.role === b.role && a.content === b.content,
  logger: recordingLogger(),
};

function request(messages: ChatMessage[]): NormalizedChatRequest {
  return { messages, tools: null, chatTemplateKwargs: {}, upstreamBody: {}, clientStream: false };
}

function completed(promptIds: number[], completionIds: number[], content: string): CompletedTurn {
  return {
    promptIds,
    completionIds,
    assistantMessage: { role: "assistant", content },
    finishReason: "stop",
    responseId: `r-${content}`,
    record: stubRecord(0),
  };
}

const U: ChatMessage = { role: "user", content: "u" };

describe("prepare/commit", () => {
  test("two requests prepared from one spot commit as siblings under the captured parent", () => {
    const state = createV2State();
    const first = prepareV2Turn(state, request([U]), ctx);
    commitV2Turn(state, first.plan, request([U]), completed(first.promptIds, [7], "a"), ctx);
    const next = request([U, { role: "assistant", content: "a" }, { role: "user", content: "v" }]);
    const p1 = prepareV2Turn(state, next, ctx);
    const p2 = prepareV2Turn(state, next, ctx);
    expect(p1.promptIds).toEqual([1000, 7, 2000]);
    const n1 = commitV2Turn(state, p1.plan, next, completed(p1.promptIds, [8], "b"), ctx);
    const n2 = commitV2Turn(state, p2.plan, next, completed(p2.promptIds, [9], "c"), ctx);
    expect([n1.parent?.id, n2.parent?.id]).toEqual([0, 0]);
    expect(n2.deltaMessages).toEqual([
      { role: "user", content: "v" },
      { role: "assistant", content: "c" },
    ]);
    expect(n2.completionSpan).toEqual([3, 4]);
    expect(state.activeLeaf).toBe(n2);
  });

  test("the cap reached while a request was upstream refuses the commit with 422", () => {
    const state = createV2State(1);
    const p1 = prepareV2Turn(state, request([U]), ctx);
    const p2 = prepareV2Turn(state, request([U]), ctx);
    commitV2Turn(state, p1.plan, request([U]), completed(p1.promptIds, [7], "a"), ctx);
    let error: unknown;
    try {
      commitV2Turn(state, p2.plan, request([U]), completed(p2.promptIds, [8], "b"), ctx);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SessionHttpError);
    expect((error as SessionHttpError).status).toBe(422);
    expect((error as Error).message).toMatch(/^node cap reached \(1\): /);
    expect(state.forest.nodes).toHaveLength(1);
    expect(() => prepareV2Turn(state, request([U]), ctx)).toThrow(/node cap reached/);
  });

  test("a parent snapshot that is not a prefix of prompt + completion is a 500 and nothing is stored", () => {
    const state = createV2State();
    const first = prepareV2Turn(state, request([U]), ctx);
    commitV2Turn(state, first.plan, request([U]), completed(first.promptIds, [7], "a"), ctx);
    const next = request([U, { role: "assistant", content: "a" }, U]);
    const p = prepareV2Turn(state, next, ctx);
    expect(() => commitV2Turn(state, p.plan, next, completed([1000, 99, 2000], [5], "x"), ctx)).toThrow(
      expect.objectContaining({ status: 500, message: expect.stringMatching(/first mismatch at index 1/) }),
    );
    expect(state.forest.nodes).toHaveLength(1);
  });

  // mirrors miles PR #3258: GET follows the last committed node, so a refused request moves nothing
  test("a request refused after positioning (disallowed role, tokenizer failure) leaves the view on the last commit", () => {
    const state = createV2State();
    const first = prepareV2Turn(state, request([U]), ctx);
    expect(state.activeLeaf).toBeNull();
    const root = commitV2Turn(state, first.plan, request([U]), completed(first.promptIds, [7], "a"), ctx);
    const second = request([U, { role: "assistant", content: "a" }, { role: "user", content: "v" }]);
    const p2 = prepareV2Turn(state, second, ctx);
    expect(state.activeLeaf).toBe(root);
    const child = commitV2Turn(state, p2.plan, second, completed(p2.promptIds, [8], "b"), ctx);
    expect(state.activeLeaf).toBe(child);
    const badRole = request([U, { role: "assistant", content: "a" }, { role: "developer", content: "x" }]);
    const narrow: PolicyContext = { ...ctx, tito: { ...tito, allowedAppendRoles: new Set(["user"]) } };
    expect(() => prepareV2Turn(state, badRole, narrow)).toThrow(expect.objectContaining({ status: 400 }));
    expect(state.activeLeaf).toBe(child);
    const noRender: PolicyContext = {
      ...ctx,
      tito: {
        ...tito,
        renderPromptIds: () => {
          throw new Error("template exploded");
        },
      },
    };
    expect(() => prepareV2Turn(state, request([{ role: "user", content: "fresh" }]), noRender)).toThrow(expect.objectContaining({ status: 500 }));
    expect(state.activeLeaf).toBe(child);
    // A positioned request that is never committed (its upstream call failed) does not move the view either.
    prepareV2Turn(state, request([U, { role: "assistant", content: "a" }, { role: "user", content: "w" }]), ctx);
    expect(state.activeLeaf).toBe(child);
  });

  // mirrors tests/fast/router/test_sessions_v2.py::test_disallowed_append_role_400_with_rollback_side_effect at 31f1ca96
  // (Python's position_for_request moves the view before prepare_pretokenized can refuse)
  test('milesRevision "31f1ca96": a request refused after positioning leaves the view on its attach node', () => {
    const state = createV2State();
    const first = prepareV2Turn(state, request([U]), ctx, true);
    const root = commitV2Turn(state, first.plan, request([U]), completed(first.promptIds, [7], "a"), ctx);
    const second = request([U, { role: "assistant", content: "a" }, { role: "user", content: "v" }]);
    const p2 = prepareV2Turn(state, second, ctx, true);
    const child = commitV2Turn(state, p2.plan, second, completed(p2.promptIds, [8], "b"), ctx);
    expect(state.activeLeaf).toBe(child);
    // Attaches at the root (a sibling of `child`), then is refused: the view is left on the root.
    const badRole = request([U, { role: "assistant", content: "a" }, { role: "developer", content: "x" }]);
    const narrow: PolicyContext = { ...ctx, tito: { ...tito, allowedAppendRoles: new Set(["user"]) } };
    expect(() => prepareV2Turn(state, badRole, narrow, true)).toThrow(expect.objectContaining({ status: 400 }));
    expect(state.activeLeaf).toBe(root);
    state.activeLeaf = child;
    const broken: PolicyContext = {
      ...ctx,
      tito: {
        ...tito,
        mergeTokens: () => {
          throw new Error("not append-only");
        },
      },
    };
    expect(() => prepareV2Turn(state, request([U, { role: "assistant", content: "a" }, { role: "user", content: "w" }]), broken, true)).toThrow(
      expect.objectContaining({ status: 500, message: "TITO merge failed: not append-only" }),
    );
    expect(state.activeLeaf).toBe(root);
    // A new root that fails to render leaves the view empty (the attach point of a new root is "no node").
    const noRender: PolicyContext = {
      ...ctx,
      tito: {
        ...tito,
        renderPromptIds: () => {
          throw new Error("template exploded");
        },
      },
    };
    expect(() => prepareV2Turn(state, request([{ role: "user", content: "other" }]), noRender, true)).toThrow(expect.objectContaining({ status: 500 }));
    expect(state.activeLeaf).toBeNull();
    expect(state.forest.nodes).toEqual([root, child]);
  });

  test("a tokenizer failure is a 500 naming the step", () => {
    const state = createV2State();
    const broken: PolicyContext = {
      ...ctx,
      tito: {
        ...tito,
        renderPromptIds: () => {
          throw new Error("template exploded");
        },
      },
    };
    expect(() => prepareV2Turn(state, request([U]), broken)).toThrow(
      expect.objectContaining({ status: 500, message: "TITO render failed: template exploded" }),
    );
  });
});
