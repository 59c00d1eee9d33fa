// Benchmark of `session-parity replay`: CPU per chat call against `session-parity run` at the same number of calls
// (each in its own process, side by side in one run), and peak RSS for a corpus 10x larger. npm run bench replay.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import * as path from "node:path";
import type { PartyFigures } from "./replay-party";

/** Conversations of the base corpus (the 10x corpus has ten times as many). */
const CONVERSATIONS = Number(process.env.REPLAY_BENCH_CONVERSATIONS ?? 1000);
/** Recorded replies per conversation (7 tool calls, then the final answer). */
const REPLIES = 8;
/** Chat calls per weather trajectory of `run` (one cycle). */
const RUN_CALLS_PER_TRAJECTORY = 9;

const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather of a city.",
      parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
    },
  },
];

/** One synthetic conversation of `REPLIES` replies: a tool round trip per reply but the last, then a summary. */
function conversation(index: number): string {
  const messages: Record<string, unknown>[] = [
    { role: "system", content: "You are a weather assistant. Call get_weather for every city." },
    { role: "user", content: `Trip ${index}: check seven cities and summarise.` },
  ];
  for (let t = 0; t < REPLIES - 1; t += 1) {
    const id = `call_${index}_${t}`;
    messages.push(
      {
        role: "assistant",
        content: t === 0 ? "Starting with the first city." : "",
        tool_calls: [{ id, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ location: `City ${index}-${t}` }) } }],
      },
      { role: "tool", tool_call_id: id, content: JSON.stringify({ temperature_celsius: (index + t) % 35, condition: t % 2 === 0 ? "sunny" : "cloudy" }) },
    );
  }
  messages.push({ role: "assistant", content: `Trip ${index}: all seven cities checked; the warmest is City ${index}-0.` });
  return JSON.stringify({ messages, tools: TOOLS });
}

function writeCorpus(file: string, count: number): void {
  const lines: string[] = [];
  for (let i = 0; i < count; i += 1) lines.push(conversation(i));
  writeFileSync(file, `${lines.join("\n")}\n`);
}

function party(args: string[]): PartyFigures {
  const script = path.join(__dirname, "replay-party.js");
  const result = spawnSync(process.execPath, [script, ...args], { encoding: "utf8", maxBuffer: 1 << 26 });
  if (result.status !== 0) throw new Error(`party ${args.join(" ")} failed (${result.status}):\n${result.stderr}`);
  const figures = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "") as PartyFigures;
  if (figures.exitCode !== 0) throw new Error(`party ${args.join(" ")} exited ${figures.exitCode}`);
  return figures;
}

function describe(name: string, figures: PartyFigures): string {
  return `${name}: ${figures.requests} chat calls, CPU ${(figures.cpuMs / 1000).toFixed(1)} s = ${((figures.cpuMs / figures.requests) * 1000).toFixed(0)} µs per call, wall ${(figures.wallMs / 1000).toFixed(1)} s, peak RSS ${(figures.peakRssBytes / 2 ** 20).toFixed(0)} MiB`;
}

function main(): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), "replay-bench-"));
  try {
    const base = path.join(dir, "corpus.jsonl");
    const large = path.join(dir, "corpus-10x.jsonl");
    writeCorpus(base, CONVERSATIONS);
    writeCorpus(large, CONVERSATIONS * 10);
    const batch = Math.round((CONVERSATIONS * REPLIES) / RUN_CALLS_PER_TRAJECTORY);
    console.log(
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")} on ${os.cpus().length} cores`,
    );
    console.log(
      `corpus: ${CONVERSATIONS} conversations of ${REPLIES} replies with tools; run: --batch ${batch} (${RUN_CALLS_PER_TRAJECTORY} calls per trajectory), zero latency`,
    );
    // alternated, so a change of the machine's load hits both parties alike
    const replays: PartyFigures[] = [];
    const runs: PartyFigures[] = [];
    for (let round = 0; round < 2; round += 1) {
      replays.push(party(["replay", base]));
      runs.push(party(["run", String(batch)]));
      console.log(`round ${round + 1}: ${describe("replay", replays[round])}`);
      console.log(`round ${round + 1}: ${describe("run   ", runs[round])}`);
    }
    const perCall = (figures: PartyFigures[]): number => Math.min(...figures.map((f) => f.cpuMs / f.requests));
    console.log(`CPU per chat call, replay / run (best of 2 each): ${(perCall(replays) / perCall(runs)).toFixed(2)}x (goal <= 1.3x)`);
    const largeFigures = party(["replay", large]);
    console.log(describe("replay 10x", largeFigures));
    const smallPeak = Math.min(...replays.map((f) => f.peakRssBytes));
    console.log(`peak RSS, 10x corpus / base corpus: ${(largeFigures.peakRssBytes / smallPeak).toFixed(2)}x (goal <= 1.1x)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
