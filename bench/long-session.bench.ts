// One session of 300 turns reaching about 69.5k prompt tokens, through embedded v1 and v2: the live heap the session
// holds and the server's CPU per turn (turn 10 vs turn 300), side by side with the layout before shared prefixes.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { LongSessionMemory } from "./long-session-child";

const TURNS = Number(process.env.LONG_SESSION_TURNS ?? 300);
/** Turns whose CPU is averaged for "turn 10" and "turn 300" (a window: one turn alone is noise). */
const WINDOW = 10;
/**
 * The commit whose layout is the baseline (every record keeps its whole prompt ids and texts): the last one before
 * records shared their prefixes. `LONG_SESSION_BASELINE=none` skips it; another ref measures that one.
 */
const BASELINE_REF = process.env.LONG_SESSION_BASELINE ?? "0497405";

/** About 130 tokens of user text a turn: a tool result an agent would send back. */
function userText(turn: number): string {
  const lines: string[] = [];
  for (let i = 0; i < 4; i += 1) lines.push(`src/module_${turn}_${i}.ts:${10 + i}: const value${i} = compute(${turn}, ${i}); // checked`);
  return `Turn ${turn} results:\n${lines.join("\n")}`;
}

/** A child of the benchmark, answering one JSON line per command line. */
interface Party {
  readonly url: string;
  ask<T>(command: string): Promise<T>;
  stop(): Promise<void>;
}

async function startParty(script: string, args: string[]): Promise<Party> {
  const child: ChildProcess = spawn(process.execPath, ["--expose-gc", "--max-old-space-size=8192", script, ...args], { stdio: ["pipe", "pipe", "inherit"] });
  const kill = (): void => void child.kill("SIGKILL");
  process.once("exit", kill);
  const lines: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  let buffered = "";
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const next = (): Promise<string> =>
    lines.length > 0
      ? Promise.resolve(lines.shift() as string)
      : Promise.race([new Promise<string>((resolve) => waiting.push(resolve)), exited.then(() => Promise.reject(new Error(`${script} exited`)))]);
  const { url } = JSON.parse(await next()) as { url: string };
  return {
    url,
    async ask<T>(command: string): Promise<T> {
      child.stdin?.write(`${command}\n`);
      return JSON.parse(await next()) as T;
    },
    async stop() {
      child.stdin?.end();
      await exited;
      process.off("exit", kill);
    },
  };
}

async function post(url: string, body?: unknown): Promise<Record<string, unknown>> {
  const reply = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await reply.text();
  if (reply.status !== 200) throw new Error(`${url}: ${reply.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** What one layout measured for one server version. */
interface Measured {
  promptTokens: number;
  /** Live heap the session held (with it minus after its DELETE), bytes. */
  heldBytes: number;
  /** What the session budget charged it, bytes. */
  accountedBytes: number;
  /** Mean server CPU per turn over the windows ending at turn 10+WINDOW-1 and at the last turn, ms. */
  earlyCpuMs: number;
  lateCpuMs: number;
  /** Bytes of the GET view and the samples reply at the end. */
  viewBytes: number;
  samplesBytes: number;
}

async function measure(childScript: string, version: "v1" | "v2"): Promise<Measured> {
  const backend = await startParty(childScript, ["backend"]);
  const server = await startParty(childScript, ["server", version, backend.url]);
  try {
    await server.ask<LongSessionMemory>("mem"); // the tokenizer's first renders settle before the baseline
    const { session_id: id } = (await post(`${server.url}/sessions`)) as { session_id: string };
    const messages: Record<string, unknown>[] = [{ role: "system", content: "You are a coding agent. Work step by step." }];
    const cpu: number[] = [];
    let promptTokens = 0;
    for (let turn = 1; turn <= TURNS; turn += 1) {
      messages.push({ role: "user", content: userText(turn) });
      const before = (await server.ask<{ micros: number }>("cpu")).micros;
      const reply = await post(`${server.url}/sessions/${id}/v1/chat/completions`, { messages });
      cpu.push(((await server.ask<{ micros: number }>("cpu")).micros - before) / 1000);
      const choice = (reply.choices as Array<{ message: Record<string, unknown> }>)[0];
      messages.push({ role: "assistant", content: choice.message.content });
      promptTokens = (reply.usage as { prompt_tokens: number }).prompt_tokens;
    }
    const held = await server.ask<LongSessionMemory>("mem");
    const view = await fetch(`${server.url}/sessions/${id}`);
    const viewBytes = (await view.arrayBuffer()).byteLength;
    const samples = await fetch(`${server.url}/sessions/${id}/samples`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const samplesBytes = (await samples.arrayBuffer()).byteLength;
    await fetch(`${server.url}/sessions/${id}`, { method: "DELETE" });
    const freed = await server.ask<LongSessionMemory>("mem");
    const mean = (from: number): number => cpu.slice(from, from + WINDOW).reduce((a, b) => a + b, 0) / Math.min(WINDOW, cpu.length - from);
    return {
      promptTokens,
      heldBytes: held.heapUsed + held.external - (freed.heapUsed + freed.external),
      accountedBytes: held.accounted,
      earlyCpuMs: mean(9),
      lateCpuMs: mean(Math.max(0, cpu.length - WINDOW)),
      viewBytes,
      samplesBytes,
    };
  } finally {
    await server.stop();
    await backend.stop();
  }
}

/**
 * The baseline's compiled child: the baseline commit checked out in a scratch worktree, its sources compiled with
 * this checkout's compiler and packages, and this benchmark's child copied beside them. Null when git cannot.
 */
function baselineChild(ref: string): { script: string; commit: string; cleanup: () => void } | null {
  const root = path.join(__dirname, "..", "..");
  const git = (...args: string[]): { ok: boolean; out: string } => {
    const run = spawnSync("git", args, { cwd: root, encoding: "utf8" });
    return { ok: run.status === 0, out: `${run.stdout ?? ""}${run.stderr ?? ""}`.trim() };
  };
  const commit = git("rev-parse", "--verify", `${ref}^{commit}`);
  if (!commit.ok) {
    console.log(`baseline: ${ref} is not a commit of this clone (${commit.out}); only this layout is measured`);
    return null;
  }
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "long-session-baseline-"));
  const tree = path.join(scratch, "tree");
  const added = git("worktree", "add", "--detach", tree, commit.out);
  const cleanup = (): void => {
    git("worktree", "remove", "--force", tree);
    fs.rmSync(scratch, { recursive: true, force: true });
  };
  if (!added.ok) {
    console.log(`baseline: cannot check out ${ref} (${added.out}); only this layout is measured`);
    cleanup();
    return null;
  }
  fs.symlinkSync(path.join(root, "node_modules"), path.join(tree, "node_modules"), "dir");
  const build = path.join(tree, ".bench-build"); // inside the tree: its packages resolve through the tree's node_modules
  const tsc = spawnSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", path.join(tree, "tsconfig.bench.json"), "--outDir", build], {
    encoding: "utf8",
  });
  if (tsc.status !== 0) {
    console.log(`baseline: ${ref} does not compile here; only this layout is measured\n${tsc.stdout}`);
    cleanup();
    return null;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the copy step the benchmark runner uses, in plain JS
  const { copyAssets } = require(path.join(root, "scripts", "copy-assets.js")) as { copyAssets: (from: string, to: string) => void };
  copyAssets(path.join(tree, "src"), path.join(build, "src"));
  const script = path.join(build, "bench", "long-session-child.js");
  fs.copyFileSync(path.join(__dirname, "long-session-child.js"), script);
  return { script, commit: commit.out.slice(0, 10), cleanup };
}

const MiB = 1024 * 1024;
const mib = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;

async function main(): Promise<void> {
  const here = path.join(__dirname, "long-session-child.js");
  const baseline = BASELINE_REF === "none" ? null : baselineChild(BASELINE_REF);
  console.log(`One session of ${TURNS} turns (a user turn of about 130 tokens and a reply of about 100 each), one server process per row.`);
  console.log(`Held: the live heap with the session stored minus after its DELETE (full collections before each reading).`);
  console.log(`CPU: the server process's mean CPU per turn over turns 10-${9 + WINDOW} and the last ${WINDOW}.`);
  try {
    for (const version of ["v1", "v2"] as const) {
      const rows: Array<[string, Measured]> = [];
      if (baseline !== null) rows.push([`before (${baseline.commit})`, await measure(baseline.script, version)]);
      rows.push(["shared prefixes", await measure(here, version)]);
      for (const [label, m] of rows) {
        console.log(
          `${version} ${label}: ${m.promptTokens} prompt tokens at the last turn; held ${mib(m.heldBytes)} (budget charge ${mib(m.accountedBytes)}); ` +
            `CPU per turn ${m.earlyCpuMs.toFixed(2)} ms at turn 10, ${m.lateCpuMs.toFixed(2)} ms at turn ${TURNS} (x${(m.lateCpuMs / m.earlyCpuMs).toFixed(2)}); ` +
            `GET view ${mib(m.viewBytes)}, samples reply ${mib(m.samplesBytes)}`,
        );
      }
      if (rows.length === 2) {
        const [before, after] = [rows[0][1], rows[1][1]];
        console.log(
          `${version} shared prefixes vs before: held x${(after.heldBytes / before.heldBytes).toFixed(3)}, ` +
            `CPU at turn ${TURNS} x${(after.lateCpuMs / before.lateCpuMs).toFixed(2)}`,
        );
      }
    }
  } finally {
    baseline?.cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
