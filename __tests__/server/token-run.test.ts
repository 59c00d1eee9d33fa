// The shared token storage of long sessions: runs read back exactly the arrays they stand for (chains, branches,
// prefixes, a rollback and its retry), store only what each snapshot adds, and a shared record writes the same list.
import fc from "fast-check";
import { recordPromptLength, sharedRecordRun, shareRecordIds } from "../../src/server/record-ids";
import { TokenRun } from "../../src/server/token-run";
import type { SessionRecord } from "../../src/server/types";
import { dumpsPy, PY_DEFAULT_JSON, PY_RESPONSE_JSON } from "../../src/wire/py-json";
import { applyRollback, appendTurn, createLinearTrajectory, currentTokenIds } from "../../src/server/v1/linear-trajectory";
import { TrajectoryForest } from "../../src/server/v2/forest";

const record = (ids: unknown): SessionRecord => ({
  timestamp: 1.5,
  request_timestamp: 1.25,
  method: "POST",
  path: "/v1/chat/completions",
  request: { model: "m", messages: [{ role: "user", content: "hi" }], input_ids: ids, sampling_params: { temperature: 0 } },
  response: { id: "r" },
  status_code: 200,
});

describe("TokenRun", () => {
  test("a linear session: each snapshot reads back as its array and stores only the ids it added", () => {
    const snapshots: number[][] = [];
    let ids: number[] = [];
    for (let turn = 0; turn < 50; turn += 1) {
      ids = [...ids, ...Array.from({ length: 7 }, (_, i) => turn * 10 + i)];
      snapshots.push(ids);
    }
    const runs: TokenRun[] = [];
    for (const snapshot of snapshots) runs.push(TokenRun.of(snapshot, runs.at(-1) ?? null));
    runs.forEach((run, i) => {
      expect(run.toArray()).toEqual(snapshots[i]);
      expect([...run]).toEqual(snapshots[i]);
      expect(JSON.stringify(run)).toBe(JSON.stringify(snapshots[i]));
      expect(run.length).toBe(snapshots[i].length);
      expect(run.ownLength).toBe(7);
    });
    // stored once: the session holds as many ids as its last snapshot, not the sum over turns
    expect(runs.reduce((sum, run) => sum + run.ownLength, 0)).toBe(snapshots.at(-1)!.length);
  });

  test("branches share only their common prefix; prefixes and retries read back exactly", () => {
    const root = TokenRun.of([1, 2, 3, 4]);
    const left = TokenRun.of([1, 2, 3, 4, 5, 6], root);
    const right = TokenRun.of([1, 2, 3, 4, 7, 8, 9], root);
    // a retry that re-renders the tail of its base differently (max_trim_tokens > 0): shares only what is common
    const retry = TokenRun.of([1, 2, 3, 9, 9], left);
    expect([left.toArray(), right.toArray(), retry.toArray()]).toEqual([
      [1, 2, 3, 4, 5, 6],
      [1, 2, 3, 4, 7, 8, 9],
      [1, 2, 3, 9, 9],
    ]);
    expect([left.ownLength, right.ownLength, retry.ownLength]).toEqual([2, 3, 2]);
    expect(root.toArray()).toEqual([1, 2, 3, 4]); // the base is never changed by what is built on it
    expect(left.prefix(5).toArray()).toEqual([1, 2, 3, 4, 5]);
    expect(right.prefix(2).toArray()).toEqual([1, 2]);
    expect(right.prefix(0).toArray()).toEqual([]);
    expect(right.prefix(99)).toBe(right);
    expect(TokenRun.of([1, 2, 3, 4], root)).toBe(root); // the same snapshot again is the same run
    expect(TokenRun.of([8, 9], root).ownLength).toBe(2); // nothing in common: a run of its own
  });

  test("-0 is never taken for 0 (it spells -0.0 in Python)", () => {
    const base = TokenRun.of([0, 1]);
    const run = TokenRun.of([-0, 1, 2], base);
    expect(Object.is(run.toArray()[0], -0)).toBe(true);
    expect(base.commonPrefixLength([-0, 1])).toBe(0);
  });

  test("random trees of snapshots: every run equals its array, every prefix equals the slice", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ parent: fc.nat(), keep: fc.nat(), added: fc.array(fc.integer({ min: -3, max: 200_000 }), { maxLength: 6 }) }), {
          minLength: 1,
          maxLength: 30,
        }),
        fc.nat(),
        (steps, cut) => {
          const arrays: number[][] = [];
          const runs: TokenRun[] = [];
          for (const { parent, keep, added } of steps) {
            const base = runs.length === 0 ? null : runs[parent % runs.length];
            const baseIds = base === null ? [] : arrays[parent % arrays.length];
            const ids = [...baseIds.slice(0, keep % (baseIds.length + 1)), ...added];
            arrays.push(ids);
            runs.push(TokenRun.of(ids, base));
          }
          runs.forEach((run, i) => {
            expect(run.toArray()).toEqual(arrays[i]);
            const n = cut % (arrays[i].length + 1);
            expect(run.prefix(n).toArray()).toEqual(arrays[i].slice(0, n));
            expect(run.commonPrefixLength(arrays[i])).toBe(arrays[i].length);
          });
        },
      ),
    );
  });
});

describe("shared record ids", () => {
  test("a shared record writes byte for byte the same request, keeps its keys' order, and reads a fresh equal list", () => {
    const ids = [151644, 872, 198, 0, 5];
    const stored = record(ids.slice());
    const before = [dumpsPy(stored, PY_DEFAULT_JSON), dumpsPy(stored, PY_RESPONSE_JSON), JSON.stringify(stored)];
    const run = TokenRun.of([...ids, 77, 151645]).prefix(ids.length);
    expect(shareRecordIds(stored, run)).toBe(true);
    expect([dumpsPy(stored, PY_DEFAULT_JSON), dumpsPy(stored, PY_RESPONSE_JSON), JSON.stringify(stored)]).toEqual(before);
    expect(Object.keys(stored.request)).toEqual(["model", "messages", "input_ids", "sampling_params"]);
    expect(stored.request.input_ids).toEqual(ids);
    expect(stored.request.input_ids).not.toBe(stored.request.input_ids);
    expect(sharedRecordRun(stored)).toBe(run);
    expect(recordPromptLength(stored)).toBe(ids.length);
    expect({ ...stored.request }).toEqual({ ...record(ids).request });
  });

  test("a record whose ids are not the run's, or that holds none, is left as it is", () => {
    const other = record([1, 2, 3]);
    expect(shareRecordIds(other, TokenRun.of([1, 2, 4]))).toBe(false);
    expect(shareRecordIds(other, TokenRun.of([1, 2]))).toBe(false);
    expect(Object.getOwnPropertyDescriptor(other.request, "input_ids")?.value).toEqual([1, 2, 3]);
    expect(sharedRecordRun(other)).toBeUndefined();
    const none = record(undefined);
    delete none.request.input_ids;
    expect(shareRecordIds(none, TokenRun.of([1]))).toBe(false);
    expect(recordPromptLength(none)).toBeUndefined();
  });
});

describe("the sessions' layouts on shared runs", () => {
  const user = (n: number) => ({ role: "user", content: `u${n}` });
  const assistant = (n: number) => ({ role: "assistant", content: `a${n}` });

  test("v1: records and checkpoints read back what each turn stored, through a rollback and its retry", () => {
    const state = createLinearTrajectory();
    const expected: { prompts: number[][]; checkpoints: number[][] } = { prompts: [], checkpoints: [] };
    const turn = (n: number, prompt: number[]): void => {
      const ids = [...prompt, 1000 + n, 151645];
      const messages = [...state.messages, user(n)];
      appendTurn(state, messages, assistant(n), ids, record(prompt.slice()));
      expected.prompts.push(prompt);
      expected.checkpoints.push(ids);
    };
    for (let n = 0; n < 6; n += 1) turn(n, [...(expected.checkpoints.at(-1) ?? []), 198, 500 + n]);
    const check = (): void => {
      expect(state.records.map((stored) => stored.request.input_ids)).toEqual(expected.prompts);
      expect(JSON.parse(JSON.stringify(state.checkpoints))).toEqual(expected.checkpoints);
      expect(currentTokenIds(state)).toBe(currentTokenIds(state)); // the newest is one array, read as often as needed
    };
    check();
    // every record but the newest reads its prompt from the runs; the newest keeps its own array
    expect(state.records.slice(0, -1).every((stored) => sharedRecordRun(stored) !== undefined)).toBe(true);
    expect(sharedRecordRun(state.records.at(-1)!)).toBeUndefined();
    // a retry discards the newest turn and generates a different one in its place
    applyRollback(state, { keepCheckpoints: 5, keepMessages: state.checkpointMessageEnds[4], discarded: 1 });
    expected.prompts.pop();
    expected.checkpoints.pop();
    check();
    turn(99, [...expected.checkpoints.at(-1)!, 198, 4242]);
    turn(100, [...expected.checkpoints.at(-1)!, 198, 4343]);
    check();
  });

  test("v2: branches read back their own snapshots and records; only the newest node keeps an array", () => {
    const forest = new TrajectoryForest();
    const node = (parent: ReturnType<TrajectoryForest["createNode"]> | null, added: number[], n: number) => {
      const prompt = [...(parent?.tokenIds ?? []), ...added];
      const ids = [...prompt, 1000 + n];
      return forest.createNode(parent, {
        deltaMessages: [user(n), assistant(n)],
        tokenIds: ids,
        completionSpan: [prompt.length, ids.length],
        committedAt: n,
        responseId: `r${n}`,
        record: record(prompt.slice()),
        finishReason: "stop",
      });
    };
    const root = node(null, [1, 2, 3], 0);
    const a = node(root, [4], 1);
    const b = node(root, [5, 6], 2); // a retry at the same point: a sibling branch
    const c = node(a, [7], 3);
    expect([root.tokenIds, a.tokenIds, b.tokenIds, c.tokenIds]).toEqual([
      [1, 2, 3, 1000],
      [1, 2, 3, 1000, 4, 1001],
      [1, 2, 3, 1000, 5, 6, 1002],
      [1, 2, 3, 1000, 4, 1001, 7, 1003],
    ]);
    expect([root, a, b, c].map((n) => n.record.request.input_ids)).toEqual([
      [1, 2, 3],
      [1, 2, 3, 1000, 4],
      [1, 2, 3, 1000, 5, 6],
      [1, 2, 3, 1000, 4, 1001, 7],
    ]);
    expect([root, a, b, c].map((n) => n.tokenCount)).toEqual([4, 6, 7, 8]);
    expect([root, a, b, c].map((n) => n.run.ownLength)).toEqual([4, 2, 3, 2]); // each branch stores only what it adds
    expect(c.tokenIds).toBe(c.tokenIds);
    expect(a.tokenIds).not.toBe(a.tokenIds);
  });
});
