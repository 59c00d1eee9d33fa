// The grammar of agent schedules as fast-check arbitraries: random draws that shrink towards short, plain schedules.
// Pure: fast-check only; the runner samples and shrinks through these.
import fc from "fast-check";
import type { AgentSchedule, FuzzAction, FuzzCall, FuzzReply, FuzzStep } from "./schedule";

/** Options of {@link agentScheduleArbitrary}. */
export interface ScheduleGrammarOptions {
  /** Most calls per schedule, the first one included (default 12). */
  maxSteps?: number;
}

const variant = fc.nat({ max: 5 });

/** A model reply; shrinks towards plain text. */
const fuzzReplyArbitrary: fc.Arbitrary<FuzzReply> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("text" as const), variant }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("tool_calls" as const), cities: fc.array(fc.nat({ max: 2 }), { minLength: 1, maxLength: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("malformed_tool_call" as const), variant }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("reasoning" as const), variant }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("length" as const), variant }) },
);

/** An action before a call; shrinks towards a user follow-up. */
const fuzzActionArbitrary: fc.Arbitrary<FuzzAction> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("user" as const), variant }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("tool_results" as const), variant }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("system" as const), variant }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("assistant_input" as const), variant }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("retry" as const),
      depth: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 2, arbitrary: fc.constant(2) }, { weight: 1, arbitrary: fc.constant(3) }),
      divergent: fc.boolean(),
      variant,
    }),
  },
);

const callFields = {
  stream: fc.boolean(),
  tools: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  reply: fuzzReplyArbitrary,
};

/** One call spec. */
const fuzzCallArbitrary: fc.Arbitrary<FuzzCall> = fc.record(callFields);

/** One step (action + call). */
const fuzzStepArbitrary: fc.Arbitrary<FuzzStep> = fc.record({ action: fuzzActionArbitrary, ...callFields });

/** Whole schedules of 1 to `maxSteps` calls; shrinking removes steps first, then simplifies each one. */
export function agentScheduleArbitrary(options: ScheduleGrammarOptions = {}): fc.Arbitrary<AgentSchedule> {
  const maxSteps = options.maxSteps ?? 12;
  if (!Number.isSafeInteger(maxSteps) || maxSteps < 1) throw new Error(`agentScheduleArbitrary: maxSteps must be an integer >= 1, got ${String(maxSteps)}`);
  return fc.record({
    fewShot: fc.boolean(),
    first: fuzzCallArbitrary,
    steps: fc.array(fuzzStepArbitrary, { maxLength: maxSteps - 1 }),
    maxSeqLen: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.integer({ min: 160, max: 640 }) }),
  });
}
