// The mismatch report memo: a session's GET and samples op share one canonical render, never a stale one.
// A counting TITO double shows when the (costly) comparison runs for v1 states and v2 tree nodes.
import { linearPolicy, strictMessageMatches, type CompletedTurn, type NormalizedChatRequest, type PolicyContext, type TitoLike } from "../../src/server";
import { MismatchMemo } from "../../src/server/session-metadata";
import { commitV2Turn, createV2State, prepareV2Turn } from "../../src/server/v2/serving";
import { v2SessionMetadata, viewV2 } from "../../src/server/v2/session-view";
import { loadTokenizer } from "../../src/tokenizer";
import type { ChatMessage } from "../../src/tokenizer/types";

interface Counting {
  ctx: PolicyContext;
  calls: { messages: number; tokens: number }[];
}

async function countingContext(): Promise<Counting> {
  const calls: { messages: number; tokens: number }[] = [];
  const tito: TitoLike = {
    maxTrimTokens: 0,
    allowedAppendRoles: new Set(["user", "tool"]),
    renderPromptIds: (messages) => messages.map((_, i) => 100 + i),
    mergeTokens: (old, newer, stored) => [...stored, ...newer.slice(old.length).map((_, i) => 200 + i)],
    compareWithCanonical: (messages, tokenIds) => {
      calls.push({ messages: messages.length, tokens: tokenIds.length });
      return [{ type: "assistant_text", segment_index: calls.length, expected_text: "e", actual_text: "a", detail: `call ${calls.length}` }];
    },
  };
  const ctx: PolicyContext = {
    tokenizer: await loadTokenizer(),
    tito,
    defaultChatTemplateKwargs: {},
    messagesMatch: strictMessageMatches,
    logger: { warn: () => undefined },
  };
  return { ctx, calls };
}

function request(messages: ChatMessage[]): NormalizedChatRequest {
  return { messages, tools: null, chatTemplateKwargs: {}, upstreamBody: { messages }, clientStream: false };
}

function turn(promptIds: number[], completionIds: number[], content: string): CompletedTurn {
  return {
    promptIds,
    completionIds,
    assistantMessage: { role: "assistant", content },
    finishReason: "stop",
    responseId: `r-${content}`,
    record: {
      timestamp: 1,
      request_timestamp: 0,
      method: "POST",
      path: "/v1/chat/completions",
      request: { input_ids: promptIds },
      response: {
        choices: [
          {
            message: { role: "assistant", content },
            finish_reason: "stop",
            meta_info: { output_token_logprobs: completionIds.map((id) => [0, id]), completion_tokens: completionIds.length },
          },
        ],
      },
      status_code: 200,
    },
  };
}

test("MismatchMemo recomputes only when an input changes by identity, and hands out copies", () => {
  const memo = new MismatchMemo<object>();
  const key = {};
  const history = [1, 2];
  let computed = 0;
  const compute = () => {
    computed += 1;
    return [{ type: "t", segment_index: computed }];
  };
  const first = memo.report(key, [history, history.length], compute);
  const again = memo.report(key, [history, history.length], compute);
  expect(computed).toBe(1);
  expect(again).toEqual(first);
  expect(again).not.toBe(first);
  (again as { segment_index: number }[])[0].segment_index = 99; // a caller altering its copy
  expect(memo.report(key, [history, history.length], compute)).toEqual([{ type: "t", segment_index: 1 }]);
  history.push(3); // same array, new length
  expect(memo.report(key, [history, history.length], compute)).toEqual([{ type: "t", segment_index: 2 }]);
  expect(memo.report(key, [[1, 2, 3], 3], compute)).toEqual([{ type: "t", segment_index: 3 }]); // equal but not identical
  expect(memo.report({}, [[1, 2, 3], 3], compute)).toEqual([{ type: "t", segment_index: 4 }]); // another key
  expect(computed).toBe(4);
});

test("v1: GET and collect share one report until a turn or a rollback changes the trajectory", async () => {
  const { ctx, calls } = await countingContext();
  const state = linearPolicy.createState();
  const first: ChatMessage[] = [{ role: "user", content: "a" }];
  const p1 = linearPolicy.prepare(state, request(first), ctx);
  linearPolicy.commit(state, p1.plan, request(first), turn(p1.promptIds, [7, 8], "b"), ctx);

  const view1 = linearPolicy.view(state, ctx);
  const collected = linearPolicy.collectSamples(state, { max_seq_len: null }, ctx);
  expect(calls).toEqual([{ messages: 2, tokens: 3 }]);
  expect(collected.sessionMetadata.tito_session_mismatch).toEqual(view1.metadata.tito_session_mismatch);

  const second: ChatMessage[] = [...first, { role: "assistant", content: "b" }, { role: "user", content: "c" }];
  const p2 = linearPolicy.prepare(state, request(second), ctx);
  linearPolicy.commit(state, p2.plan, request(second), turn(p2.promptIds, [9], "d"), ctx);
  const view2 = linearPolicy.view(state, ctx);
  expect(calls).toEqual([
    { messages: 2, tokens: 3 },
    { messages: 4, tokens: 5 },
  ]);
  expect(view2.metadata.tito_session_mismatch).not.toEqual(view1.metadata.tito_session_mismatch);

  // A retry of the second turn rolls back one generated turn: the report follows the rolled-back trajectory.
  const retry: ChatMessage[] = [...first, { role: "assistant", content: "b" }, { role: "user", content: "c2" }];
  linearPolicy.prepare(state, request(retry), ctx);
  linearPolicy.view(state, ctx);
  expect(calls[2]).toEqual({ messages: 2, tokens: 3 });
  linearPolicy.view(state, ctx);
  expect(calls).toHaveLength(3);
});

test("v2: a node's report is computed once across GETs and samples ops", async () => {
  const { ctx, calls } = await countingContext();
  const state = createV2State();
  const first: ChatMessage[] = [{ role: "user", content: "a" }];
  const p1 = prepareV2Turn(state, request(first), ctx);
  commitV2Turn(state, p1.plan, request(first), turn(p1.promptIds, [7, 8], "b"), ctx);
  const view1 = viewV2(state, ctx);
  const view2 = viewV2(state, ctx);
  const meta = v2SessionMetadata(state, ctx);
  expect(calls).toHaveLength(1);
  expect(view2.metadata.tito_session_mismatch).toEqual(view1.metadata.tito_session_mismatch);
  expect(meta.tito_session_mismatch).toEqual(view1.metadata.tito_session_mismatch);

  const second: ChatMessage[] = [...first, { role: "assistant", content: "b" }, { role: "user", content: "c" }];
  const p2 = prepareV2Turn(state, request(second), ctx);
  commitV2Turn(state, p2.plan, request(second), turn(p2.promptIds, [9], "d"), ctx);
  viewV2(state, ctx);
  viewV2(state, ctx);
  expect(calls).toEqual([
    { messages: 2, tokens: 3 },
    { messages: 4, tokens: 5 },
  ]);
});
