// One party of the long-session benchmark in its own process: the mock backend, or one session server (v1 or v2)
// whose CPU time and live heap the parent reads over stdin/stdout, so the figures are the server's alone.
import { startMockBackend } from "../src/backend";
import { startSessionServer } from "../src/server";

/** The reply to `mem`: the live heap after full collections, and what the session budget charges. */
export interface LongSessionMemory {
  heapUsed: number;
  external: number;
  rss: number;
  /** Bytes the server's session store charges (its budget accounting). */
  accounted: number;
}

/** About 100 tokens of prose a turn, varied by the prompt so no two replies are the same text. */
const REPLY_WORDS = "the model reads the file and then writes a patch that keeps every test green while the plan moves on".split(" ");

function replyText(promptLength: number): string {
  const words: string[] = [];
  let state = (promptLength * 2654435761 + 1) >>> 0;
  for (let i = 0; i < 90; i += 1) {
    state = (state * 1103515245 + 12345) >>> 0;
    words.push(REPLY_WORDS[state % REPLY_WORDS.length]);
  }
  return `Step ${promptLength % 1000}: ${words.join(" ")}.`;
}

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with --expose-gc");
  gc();
  gc();
}

async function main(): Promise<void> {
  const [role, version, backendUrl] = process.argv.slice(2);
  let usage: () => number = () => 0;
  let close: () => Promise<void>;
  if (role === "backend") {
    const backend = await startMockBackend({ process: (prompt) => ({ text: replyText(prompt.length) }), maxLogEntries: 1 });
    close = () => backend.close();
    process.stdout.write(`${JSON.stringify({ url: backend.url })}\n`);
  } else {
    if (version !== "v1" && version !== "v2") throw new Error(`long-session-child: unknown version ${String(version)}`);
    const server = await startSessionServer({ version, backendUrl, logger: { warn: () => undefined } });
    usage = () => server.sessionUsage().bytes;
    close = () => server.close();
    process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  }
  let buffered = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf("\n")) !== -1) {
      const command = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (command === "cpu") {
        const cpu = process.cpuUsage();
        process.stdout.write(`${JSON.stringify({ micros: cpu.user + cpu.system })}\n`);
      } else if (command === "mem") {
        collect();
        const memory = process.memoryUsage();
        const reply: LongSessionMemory = { heapUsed: memory.heapUsed, external: memory.external, rss: memory.rss, accounted: usage() };
        process.stdout.write(`${JSON.stringify(reply)}\n`);
      }
    }
  });
  process.stdin.once("end", () => {
    void close().then(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
