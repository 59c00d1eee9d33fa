// Runs fuzzed schedules through v1 and v2 a batch per round, then shrinks the first counterexample with fast-check.
// Same seed, same schedules, same planned replies, same verdicts.
import fc from "fast-check";
import { judgeSchedule, type ScheduleOutcome, type ScheduleVerdict } from "./checks";
import { driveSchedule, type ServerObservation } from "./drive";
import { openFuzzEnvironment, FuzzUsageError, type FuzzEnvironment, type FuzzEnvironmentOptions } from "./environment";
import { agentScheduleArbitrary } from "./grammar";
import { predictSchedule } from "./model";
import type { AgentSchedule } from "./schedule";

/** Options of {@link fuzzAgenticParity}. */
export interface FuzzOptions extends FuzzEnvironmentOptions {
  /** Schedules to run (default 100). */
  runs?: number;
  /** fast-check seed (default: a random one, reported). */
  seed?: number;
  /** Most calls per schedule, the first one included (default 12). */
  maxSteps?: number;
  /** Sessions per round, run concurrently on each server (default 8). */
  concurrency?: number;
  /** Shrink the first counterexample (default true). */
  shrink?: boolean;
  /** Called after each round with the schedules run so far. */
  onProgress?: (done: number, total: number, failures: number) => void;
  /** Servers already opened (e.g. shared between fuzz calls); left open. */
  environment?: FuzzEnvironment;
}

/** The schedule that broke parity or the model, shrunk. */
export interface FuzzCounterexample {
  /** The seed and fast-check path that replay it (`--seed S` with `--replay FILE`). */
  seed: number;
  path: string;
  /** Varies the planned log-probs; replays pass it to get the very same replies. */
  salt: number;
  /** The schedule as first drawn. */
  original: AgentSchedule;
  /** The smallest failing schedule shrinking found. */
  shrunk: AgentSchedule;
  /** Failing shrink candidates adopted on the way. */
  shrinkSteps: number;
  /** Milliseconds spent shrinking. */
  shrinkMs: number;
  /** The verdict of the shrunk schedule. */
  verdict: ScheduleVerdict;
}

/** What a fuzz run found. */
export interface FuzzReport {
  pass: boolean;
  seed: number;
  /** Schedules run before stopping (all of them when none failed). */
  runs: number;
  requestedRuns: number;
  maxSteps: number;
  concurrency: number;
  /** Schedules per model outcome class. */
  outcomes: Record<ScheduleOutcome, number>;
  /** Schedules that failed in the rounds run (before shrinking). */
  failures: number;
  counterexample: FuzzCounterexample | null;
  /** Milliseconds of the rounds, of the shrink, and schedules per second of the rounds. */
  timings: { runMs: number; shrinkMs: number; schedulesPerSecond: number };
}

function positiveInteger(value: number | undefined, fallback: number, name: string, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < min) throw new FuzzUsageError(`${name} must be an integer >= ${min}, got ${String(value)}`);
  return v;
}

/** Runs one schedule through both servers of an environment and judges it. */
async function runSchedule(environment: FuzzEnvironment, schedule: AgentSchedule, salt = 0): Promise<ScheduleVerdict> {
  const prediction = predictSchedule(schedule);
  const [v1, v2] = await Promise.all([
    driveSchedule({ version: "v1", serverUrl: environment.v1Url, plans: environment.plans, dispatcher: environment.dispatcher, salt }, schedule),
    driveSchedule({ version: "v2", serverUrl: environment.v2Url, plans: environment.plans, dispatcher: environment.dispatcher, salt }, schedule),
  ]);
  for (const [observation, url] of [
    [v1, environment.v1Url],
    [v2, environment.v2Url],
  ] as const) {
    const problem = serverProblemOf(observation);
    if (problem !== null) throw new FuzzServerProblem(`the ${observation.version} session server at ${url} ${problem}`);
  }
  return judgeSchedule(schedule, prediction, v1, v2);
}

/**
 * A server failed a schedule in a way no protocol rule explains (no reply, 404, 5xx, an unreadable collect): the
 * fuzz run stops with it instead of reporting it as a counterexample, since nothing was compared (the CLI exits 2).
 */
class FuzzServerProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FuzzServerProblem";
  }
}

/** What went wrong on a server's side of one schedule, or null: the protocol's refusals are 400 and 409 only. */
function serverProblemOf(observation: ServerObservation): string | null {
  const call = observation.calls.find((c) => c.status === 0 || c.status === 404 || c.status >= 500);
  if (call !== undefined) {
    const body = call.error === undefined ? "" : `: ${call.error.length > 300 ? `${call.error.slice(0, 300)}…` : call.error}`;
    return `answered chat call ${call.call} with ${call.status === 0 ? "no reply" : `status ${call.status}`}${body}`;
  }
  return observation.run.failure === undefined ? null : `failed the schedule: ${observation.run.failure}`;
}

async function withEnvironment<T>(options: FuzzOptions, body: (environment: FuzzEnvironment) => Promise<T>): Promise<T> {
  if (options.environment !== undefined) return body(options.environment);
  const environment = await openFuzzEnvironment(options);
  try {
    return await body(environment);
  } finally {
    await environment.close();
  }
}

/**
 * Replays one schedule through v1 and v2 (embedded reference servers unless URLs are given) and returns its verdict.
 * Pair it with `expect(verdict).toHaveAgenticParity()`.
 */
export async function replayAgentSchedule(
  schedule: AgentSchedule,
  options: FuzzEnvironmentOptions & { environment?: FuzzEnvironment; salt?: number } = {},
): Promise<ScheduleVerdict> {
  return withEnvironment(options, (environment) => runSchedule(environment, schedule, options.salt ?? 0));
}

const OUTCOMES: ScheduleOutcome[] = [
  "payloads equal",
  "v1 refuses a deep rollback",
  "v2 refuses to extend a truncated node",
  "v2 keeps several leaves",
  "v2 keeps another path",
];

/**
 * Draws `runs` schedules from the grammar with `seed`, runs them `concurrency` at a time through v1 and v2, checks each
 * server against the model and the payloads against each other, and shrinks the first failing schedule.
 * @throws FuzzUsageError on bad options; errors of the servers' start-up as they are.
 */
export async function fuzzAgenticParity(options: FuzzOptions = {}): Promise<FuzzReport> {
  const runs = positiveInteger(options.runs, 100, "runs");
  const maxSteps = positiveInteger(options.maxSteps, 12, "maxSteps");
  const concurrency = positiveInteger(options.concurrency, 8, "concurrency");
  const seed = options.seed ?? (Math.random() * 0x7fffffff) | 0;
  if (!Number.isSafeInteger(seed)) throw new FuzzUsageError(`seed must be an integer, got ${String(options.seed)}`);
  const arbitrary = agentScheduleArbitrary({ maxSteps });
  const schedules = fc.sample(arbitrary, { seed, numRuns: runs });
  const outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<ScheduleOutcome, number>;

  return withEnvironment(options, async (environment) => {
    const started = performance.now();
    let done = 0;
    let failures = 0;
    let firstFailure: number | null = null;
    for (let start = 0; start < schedules.length && firstFailure === null; start += concurrency) {
      const batch = schedules.slice(start, start + concurrency);
      const verdicts = await Promise.all(batch.map((schedule, i) => runSchedule(environment, schedule, start + i)));
      verdicts.forEach((verdict, i) => {
        outcomes[verdict.outcome] += 1;
        if (!verdict.pass) {
          failures += 1;
          firstFailure ??= start + i;
        }
      });
      done += batch.length;
      options.onProgress?.(done, runs, failures);
    }
    const runMs = performance.now() - started;
    let counterexample: FuzzCounterexample | null = null;
    let shrinkMs = 0;
    if (firstFailure !== null) {
      const shrinkStart = performance.now();
      counterexample = await shrinkCounterexample(environment, arbitrary, seed, firstFailure, schedules[firstFailure], options.shrink ?? true);
      shrinkMs = performance.now() - shrinkStart;
    }
    return {
      pass: firstFailure === null,
      seed,
      runs: done,
      requestedRuns: runs,
      maxSteps,
      concurrency,
      outcomes,
      failures,
      counterexample,
      timings: { runMs, shrinkMs, schedulesPerSecond: done / (runMs / 1000) },
    };
  });
}

async function shrinkCounterexample(
  environment: FuzzEnvironment,
  arbitrary: fc.Arbitrary<AgentSchedule>,
  seed: number,
  index: number,
  original: AgentSchedule,
  shrink: boolean,
): Promise<FuzzCounterexample> {
  const started = performance.now();
  let last: ScheduleVerdict | null = null;
  const stopped: { problem: FuzzServerProblem | null } = { problem: null };
  let shrunk = original;
  let shrinkSteps = 0;
  let path = String(index);
  if (shrink) {
    const details = await fc.check(
      fc.asyncProperty(arbitrary, async (schedule) => {
        let verdict: ScheduleVerdict;
        try {
          verdict = await runSchedule(environment, schedule, index);
        } catch (error) {
          // A server problem is not a smaller counterexample: stop shrinking and report it once fast-check returns.
          if (!(error instanceof FuzzServerProblem)) throw error;
          stopped.problem ??= error;
          return true;
        }
        if (!verdict.pass) last = verdict;
        return verdict.pass;
      }),
      { seed, path, numRuns: index + 1 },
    );
    if (stopped.problem !== null) throw stopped.problem;
    if (details.failed && details.counterexample !== null) {
      shrunk = details.counterexample[0];
      shrinkSteps = details.numShrinks;
      path = details.counterexamplePath ?? path;
    }
  }
  let verdict = last as ScheduleVerdict | null;
  if (verdict === null || JSON.stringify(verdict.schedule) !== JSON.stringify(shrunk)) verdict = await runSchedule(environment, shrunk, index);
  return { seed, path, salt: index, original, shrunk, shrinkSteps, shrinkMs: performance.now() - started, verdict };
}
