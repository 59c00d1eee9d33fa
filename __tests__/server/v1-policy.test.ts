// The v1 policy and lock in isolation: invariants that HTTP cannot reach with a correct tokenizer.
// A TITO double whose merge breaks the prefix rule proves the commit-time 500; the lock is FIFO and exclusive.
import { AsyncMutex } from "../../src/server/lock";
import { assertStoredPrefix } from "../../src/server/token-prefix";
import {
  createV1Policy,
  linearPolicy,
  SessionHttpError,
  type LinearPlan,
  type LinearTrajectory,
  type TrajectoryPolicy,
  strictMessageMatches,
  type CompletedTurn,
  type NormalizedChatRequest,
  type PolicyContext,
  type TitoLike,
} from "../../src/server";
import { loadTokenizer } from "../../src/tokenizer";
import type { ChatMessage } from "../../src/tokenizer/types";

function tito(overrides: Partial<TitoLike>): TitoLike {
  return {
    maxTrimTokens: 0,
    allowedAppendRoles: new Set(["user", "tool"]),
    renderPromptIds: (messages) => messages.map((_, i) => 100 + i),
    mergeTokens: (_old, newer, stored) => [...stored, ...newer.slice(_old.length).map((_, i) => 200 + i)],
    compareWithCanonical: () => [],
    ...overrides,
  };
}

async function context(t: TitoLike): Promise<PolicyContext> {
  return { tokenizer: await loadTokenizer(), tito: t, defaultChatTemplateKwargs: {}, messagesMatch: strictMessageMatches, logger: { warn: () => undefined } };
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
    responseId: "r",
    record: {
      timestamp: 1,
      request_timestamp: 0,
      method: "POST",
      path: "/v1/chat/completions",
      request: { input_ids: promptIds },
      response: {},
      status_code: 200,
    },
  };
}

test("commit refuses (500) a prompt that does not extend the stored ids, and keeps the state", async () => {
  const ctx = await context(tito({ mergeTokens: () => [1, 2, 3] }));
  const state = linearPolicy.createState();
  const first = [{ role: "user", content: "a" }];
  const p1 = linearPolicy.prepare(state, request(first), ctx);
  expect(linearPolicy.commit(state, p1.plan, request(first), turn(p1.promptIds, [7, 8], "b"), ctx)).toBe(true);
  const second = [...first, { role: "assistant", content: "b" }, { role: "user", content: "c" }];
  const p2 = linearPolicy.prepare(state, request(second), ctx);
  const snapshot = JSON.stringify(state);
  let error: unknown;
  try {
    linearPolicy.commit(state, p2.plan, request(second), turn(p2.promptIds, [9], "d"), ctx);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(SessionHttpError);
  expect((error as SessionHttpError).status).toBe(500);
  expect((error as Error).message).toMatch(/pretokenized prefix mismatch: stored 3 tokens .* first mismatch at index 0/);
  expect(JSON.stringify(state)).toBe(snapshot);
});

/** A session of two generated turns whose retry (diverging at message 2) would roll back one turn. */
function twoTurnState(policy: TrajectoryPolicy<LinearTrajectory, LinearPlan>, ctx: PolicyContext): { state: LinearTrajectory; retry: NormalizedChatRequest } {
  const state = policy.createState();
  const m1 = [{ role: "user", content: "a" }];
  const p1 = policy.prepare(state, request(m1), ctx);
  policy.commit(state, p1.plan, request(m1), turn(p1.promptIds, [7], "b"), ctx);
  const m2 = [...m1, { role: "assistant", content: "b" }, { role: "user", content: "c" }];
  state.checkpoints.push([...state.checkpoints[0], 200, 5]);
  state.checkpointMessageEnds.push(4);
  state.messages = [...m2, { role: "assistant", content: "d" }];
  state.records.push(state.records[0]);
  return { state, retry: request([...m2.slice(0, 2), { role: "user", content: "other" }]) };
}

const failingMerge = (): Promise<PolicyContext> =>
  context(
    tito({
      mergeTokens: () => {
        throw new Error("template is not append-only here");
      },
    }),
  );

// mirrors miles PR #3311 ("validate retry requests before rolling back"): the checkpoint is selected without mutation
// and the merge runs on what it keeps, so a tokenizer failure leaves both generated turns in place
test("a tokenizer failure while preparing a retry is a 500 and keeps the history (miles PR #3311)", async () => {
  const ctx = await failingMerge();
  const { state, retry } = twoTurnState(linearPolicy, ctx);
  const snapshot = JSON.stringify(state);
  expect(() => linearPolicy.prepare(state, retry, ctx)).toThrow(/TITO merge failed: template is not append-only here/);
  expect(JSON.stringify(state)).toBe(snapshot);
});

test("the same retry, once it can be rendered, applies the rollback (miles PR #3311)", async () => {
  const ctx = await context(tito({}));
  const { state, retry } = twoTurnState(linearPolicy, ctx);
  const before = JSON.parse(JSON.stringify(state)) as LinearTrajectory;
  const prepared = linearPolicy.prepare(state, retry, ctx);
  expect(prepared.checkpointIds).toEqual(before.checkpoints[0]);
  expect(prepared.promptIds).toEqual([...before.checkpoints[0], 200]);
  expect(state.records).toHaveLength(1);
  expect(state.messages).toEqual(before.messages.slice(0, 2));
});

// mirrors miles/rollout/session/linear_trajectory.py prepare_pretokenized at 31f1ca96: the rollback mutates the state
// before merge_tokens runs, so a tokenizer failure after it leaves the session rolled back (as the v1 pins characterize)
test('milesRevision "31f1ca96": a tokenizer failure during prepare is a 500 and keeps the rollback already applied', async () => {
  const ctx = await failingMerge();
  const policy = createV1Policy({ milesRevision: "31f1ca96" });
  const { state, retry } = twoTurnState(policy, ctx);
  const snapshot = JSON.stringify(state);
  expect(() => policy.prepare(state, retry, ctx)).toThrow(/TITO merge failed: template is not append-only here/);
  const rolledBack = JSON.parse(snapshot) as typeof state;
  expect(JSON.parse(JSON.stringify(state))).toEqual({
    messages: rolledBack.messages.slice(0, 2),
    records: rolledBack.records.slice(0, 1),
    checkpoints: rolledBack.checkpoints.slice(0, 1),
    checkpointMessageEnds: rolledBack.checkpointMessageEnds.slice(0, 1),
  });
});

test("an unknown milesRevision is refused naming the valid values", () => {
  expect(() => createV1Policy({ milesRevision: "main" as never })).toThrow('milesRevision must be one of "3311", "31f1ca96", got "main"');
});

test("AsyncMutex is exclusive and first-in first-out", async () => {
  const mutex = new AsyncMutex();
  const order: string[] = [];
  let inside = 0;
  let maxInside = 0;
  await Promise.all(
    ["a", "b", "c", "d"].map((name) =>
      mutex.runExclusive(async () => {
        inside += 1;
        maxInside = Math.max(maxInside, inside);
        order.push(name);
        await new Promise((resolve) => setImmediate(resolve));
        inside -= 1;
      }),
    ),
  );
  expect(order).toEqual(["a", "b", "c", "d"]);
  expect(maxInside).toBe(1);
  await expect(mutex.runExclusive(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
  expect(await mutex.runExclusive(() => 5)).toBe(5);
  expect(mutex.busy).toBe(false);
});

test("the stored-prefix check tolerates exactly max_trim_tokens trailing differences", () => {
  expect(() => assertStoredPrefix([], [5], 0)).not.toThrow();
  expect(() => assertStoredPrefix([1, 2, 3], [1, 2, 3, 4], 0)).not.toThrow();
  expect(() => assertStoredPrefix([1, 2, 3], [1, 2, 9, 4], 1)).not.toThrow();
  expect(() => assertStoredPrefix([1, 2, 3], [7, 8], 3)).not.toThrow();
  expect(() => assertStoredPrefix([1, 2, 3], [1, 2, 9, 4], 0)).toThrow(
    expect.objectContaining({ status: 500, message: expect.stringMatching(/checking first 3, allowing 0 trailing.*first mismatch at index 2/) }),
  );
  expect(() => assertStoredPrefix([1, 2, 3], [1, 9, 3, 4], 1)).toThrow(/first mismatch at index 1/);
  expect(() => assertStoredPrefix([1, 2, 3, 4], [1, 2], 1)).toThrow(/\(2 tokens\), first mismatch at index 2/);
});
