// Words for fuzz results: a schedule verdict (steps, prediction, what each server did, the differing leaf) and
// a fuzz report, each ending with a ready-to-paste Jest test that replays the counterexample.
import type { ScheduleVerdict } from "./checks";
import type { ServerObservation } from "./drive";
import type { FuzzReport } from "./runner";
import { callCount, describeSchedule, type AgentSchedule } from "./schedule";

function indent(lines: string[], by = "  "): string {
  return lines.map((line) => `${by}${line}`).join("\n");
}

function observedLines(observation: ServerObservation): string[] {
  const lines = observation.calls.map((c) => `call ${c.call}: ${c.status}${c.error === undefined ? "" : ` ${c.error.slice(0, 160)}`}`);
  const records = observation.run.preCollect.records.map((record) => {
    const choices = (record.response as { choices?: Array<{ meta_info?: { weight_version?: unknown } }> }).choices;
    return String(choices?.[0]?.meta_info?.weight_version ?? "?");
  });
  lines.push(`records (by weight version): [${records.join(", ")}]`);
  const tree = observation.run.preCollect.metadata.tree as { nodes?: Array<{ id: number; parent: number | null }> } | undefined;
  if (tree?.nodes !== undefined) lines.push(`tree nodes [id, parent]: ${JSON.stringify(tree.nodes.map((n) => [n.id, n.parent]))}`);
  const leaves = observation.run.samples.map((s) => (s.metadata.leaf as { node_id?: number } | undefined)?.node_id ?? "-");
  lines.push(
    `samples: ${observation.run.samples.length}${observation.version === "v2" ? ` (leaves ${JSON.stringify(leaves)})` : ""}${observation.run.emptyReason === null ? "" : `, empty: ${observation.run.emptyReason}`}`,
  );
  return lines;
}

/** A ready-to-paste Jest test replaying `schedule` through the embedded reference servers. */
export function replayTestSource(schedule: AgentSchedule, title = "fuzz counterexample"): string {
  return [
    'import { replayAgentSchedule } from "jest-session-parity";',
    "",
    `test(${JSON.stringify(title)}, async () => {`,
    `  const schedule = ${JSON.stringify(schedule)};`,
    "  // pass { v1Server, v2Server } (or backendUrl, v1Url, v2Url) to replay it against your own servers",
    "  expect(await replayAgentSchedule(schedule)).toHaveAgenticParity();",
    "}, 60_000);",
  ].join("\n");
}

/** One schedule's verdict in words. */
export function formatScheduleVerdict(verdict: ScheduleVerdict, title?: string): string {
  const p = verdict.prediction;
  const out: string[] = [];
  out.push(`Schedule (${callCount(verdict.schedule)} calls):`, indent(describeSchedule(verdict.schedule)));
  out.push("The model predicted:");
  out.push(indent(p.v1.calls.map((c) => `v1 call ${c.call}: ${c.status}, ${c.note}`)));
  out.push(indent(p.v2.calls.map((c) => `v2 call ${c.call}: ${c.status}, ${c.note}`)));
  out.push(
    indent([
      `v1 records: calls ${JSON.stringify(p.v1.records)}; v2 active path: calls ${JSON.stringify(p.v2.records)}`,
      `v2 tree nodes [id, parent]: ${JSON.stringify(p.v2.tree.nodes)}; kept leaves: ${JSON.stringify(p.v2.tree.kept)}`,
      `payloads ${p.agree ? "must be equal" : "must differ"}: ${p.why}`,
    ]),
  );
  out.push("v1 did:", indent(observedLines(verdict.observed.v1)));
  out.push("v2 did:", indent(observedLines(verdict.observed.v2)));
  if (verdict.differingLeaf !== null) out.push(`Differing leaf: v2 node ${verdict.differingLeaf}`);
  if (verdict.failures.length > 0) {
    out.push("Failures:");
    for (const failure of verdict.failures) out.push(indent(`[${failure.where}] ${failure.message}`.split("\n")));
  } else out.push("Every check passed.");
  out.push("Replay it as a Jest test:", indent(replayTestSource(verdict.schedule, title).split("\n")));
  return out.join("\n");
}

/** A fuzz report in words: the tally per outcome, then the shrunk counterexample when there is one. */
export function formatFuzzReport(report: FuzzReport): string {
  const out: string[] = [];
  out.push(
    `${report.pass ? "PASS" : "FAIL"}: ${report.runs} of ${report.requestedRuns} schedules run (seed ${report.seed}, max ${report.maxSteps} steps, ${report.concurrency} per round), ` +
      `${report.failures} failing, ${report.timings.schedulesPerSecond.toFixed(1)} schedules/s`,
  );
  for (const [outcome, count] of Object.entries(report.outcomes)) out.push(`  ${String(count).padStart(5)}  ${outcome}`);
  const ce = report.counterexample;
  if (ce !== null) {
    out.push(
      "",
      `Counterexample (seed ${ce.seed}, path ${ce.path}): shrunk from ${callCount(ce.original)} to ${callCount(ce.shrunk)} calls ` +
        `in ${ce.shrinkSteps} shrinks (${(ce.shrinkMs / 1000).toFixed(1)} s)`,
      formatScheduleVerdict(ce.verdict, `fuzz counterexample (seed ${ce.seed})`),
    );
  }
  return out.join("\n");
}
