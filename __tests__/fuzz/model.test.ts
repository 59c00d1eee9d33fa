// The pure server model on hand-written schedules: the protocol rules it encodes, one per case.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { agentScheduleArbitrary, predictSchedule, type AgentSchedule, type FuzzStep } from "../../src/fuzz";

const text = { kind: "text", variant: 0 } as const;
const first = { stream: false, tools: true, reply: text };
const step = (action: FuzzStep["action"], reply: FuzzStep["reply"] = text): FuzzStep => ({ action, stream: false, tools: true, reply });
const schedule = (steps: FuzzStep[], extra: Partial<AgentSchedule> = {}): AgentSchedule => ({ fewShot: false, first, steps, maxSeqLen: null, ...extra });

describe("the v1/v2 model", () => {
  // mirrors tests/fast/router/test_session_v1_v2_parity.py: a pure retry is a superseded sibling, v2 keeps v1's line
  test("a pure retry becomes a sibling that supersedes the old leaf", () => {
    const p = predictSchedule(
      schedule([step({ kind: "user", variant: 0 }), step({ kind: "retry", depth: 1, divergent: false, variant: 0 }, { kind: "text", variant: 1 })]),
    );
    expect(p.v1.calls.map((c) => c.status)).toEqual([200, 200, 200]);
    expect(p.v1.records).toEqual([0, 2]);
    expect(p.v2.tree.nodes).toEqual([
      [0, null],
      [1, 0],
      [2, 0],
    ]);
    expect(p.v2.tree.kept).toEqual([2]);
    expect(p.agree).toBe(true);
  });

  // mirrors miles/rollout/session/linear_trajectory.py: rolling back more than one generated turn is refused
  test("a two-step rewind is a v1 400 and a v2 branch", () => {
    const p = predictSchedule(schedule([step({ kind: "user", variant: 0 }), step({ kind: "retry", depth: 2, divergent: false, variant: 0 })]));
    expect(p.v1.calls.map((c) => c.status)).toEqual([200, 200, 400]);
    expect(p.v2.tree.nodes).toEqual([
      [0, null],
      [1, 0],
      [2, null],
    ]);
    expect(p.v2.tree.kept).toEqual([1, 2]);
    expect(p.agree).toBe(false);
  });

  // mirrors miles/rollout/session/v2/tree_trajectory.py: a node cut off by "length" cannot be extended (409)
  test("extending a length-truncated node is a v2 409 only", () => {
    const p = predictSchedule(schedule([step({ kind: "user", variant: 0 }, { kind: "length", variant: 0 }), step({ kind: "user", variant: 1 })]));
    expect(p.v1.calls.map((c) => c.status)).toEqual([200, 200, 200]);
    expect(p.v2.calls.map((c) => c.status)).toEqual([200, 200, 409]);
    expect(p.agree).toBe(false);
  });

  test("a divergent retry of the first question opens a second root, which v2 keeps beside the first", () => {
    const p = predictSchedule(schedule([step({ kind: "retry", depth: 1, divergent: true, variant: 0 })]));
    expect(p.v1.calls.map((c) => c.status)).toEqual([200, 200]);
    expect(p.v1.records).toEqual([1]);
    expect(p.v2.tree.nodes).toEqual([
      [0, null],
      [1, null],
    ]);
    expect(p.v2.tree.kept).toEqual([1, 0]);
    expect(p.agree).toBe(false);
  });

  test("identical retries attach under the newest equal node (ties go to the newest)", () => {
    const p = predictSchedule(schedule([step({ kind: "retry", depth: 1, divergent: false, variant: 0 }), step({ kind: "user", variant: 0 })]));
    expect(p.v2.tree.nodes).toEqual([
      [0, null],
      [1, null],
      [2, 1],
    ]);
  });

  test("tool results answer each tool call of the last reply", () => {
    const p = predictSchedule(
      schedule([step({ kind: "user", variant: 0 }, { kind: "tool_calls", cities: [0, 1] }), step({ kind: "tool_results", variant: 0 })]),
    );
    expect(p.agree).toBe(true);
    expect(p.v1.records).toEqual([0, 1, 2]);
  });

  test("is pure and deterministic: the same seed draws the same schedules and predictions", () => {
    const a = fc.sample(agentScheduleArbitrary({ maxSteps: 8 }), { seed: 99, numRuns: 30 });
    const b = fc.sample(agentScheduleArbitrary({ maxSteps: 8 }), { seed: 99, numRuns: 30 });
    expect(b).toEqual(a);
    expect(b.map(predictSchedule)).toEqual(a.map(predictSchedule));
    expect(a.every((s) => s.steps.length <= 7)).toBe(true);
  });
});
