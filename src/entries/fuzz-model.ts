// The pure part of the fuzzer a test author reads and writes: schedules, their wording, report formatting.
// Loads no server code (the runner is behind `on-demand-fuzz.ts`).
export { formatFuzzReport, replayTestSource } from "../fuzz/report";
export { describeSchedule, type AgentSchedule } from "../fuzz/schedule";
export type { FuzzOptions, FuzzReport, FuzzCounterexample } from "../fuzz/runner";
