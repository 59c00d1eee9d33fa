// The fuzzer must find each planted bug within a bounded number of runs and shrink it to at most 5 calls.
import { describe, expect, test } from "@jest/globals";
import { callCount, fuzzAgenticParity } from "../../src/fuzz";
import { PLANTED_BUGS } from "./planted-bugs";

describe("planted bugs are found and shrunk", () => {
  test.each(PLANTED_BUGS.map((bug) => [bug.name, bug] as const))(
    "%s",
    async (_name, bug) => {
      const report = await fuzzAgenticParity({ seed: 7, runs: 64, maxSteps: 6, concurrency: 8, ...bug.options() });
      expect(report.pass).toBe(false);
      const counterexample = report.counterexample;
      if (counterexample === null) throw new Error("no counterexample");
      expect(counterexample.verdict.pass).toBe(false);
      expect(callCount(counterexample.shrunk)).toBeLessThanOrEqual(5);
      expect(callCount(counterexample.shrunk)).toBeLessThanOrEqual(callCount(counterexample.original));
      expect(() => expect(report).toHaveAgenticParity()).toThrow(/Replay it as a Jest test:[\s\S]*replayAgentSchedule\(schedule\)/);
    },
    180_000,
  );
});
