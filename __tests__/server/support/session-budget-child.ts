// A session server in its own Node process, for the budget tests: `serve` prints the server's URL and budget and runs
// until killed (the parent drives it over HTTP, under a small --max-old-space-size); `measure` compares, in-process,
// the store's byte accounting with the heap growth it stands for (needs --expose-gc) and prints one JSON line.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startSessionServer, type SessionServerVersion } from "../../../src/server";

const WORDS = (
  "the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were " +
  "her she there been one all we their has would when if so no what up out more about time can said into them only " +
  "other new some could these two may first then do any like my now over such our man me even most made after also did"
).split(" ");

/** A user message of about `bytes` characters of English words (about 4.5 characters per token; each seed differs). */
export function historyText(seed: number, bytes: number): string {
  const words: string[] = [];
  let length = 0;
  let state = (seed * 2654435761 + 1) >>> 0;
  while (length < bytes) {
    state = (state * 1103515245 + 12345) >>> 0;
    const word = WORDS[state % WORDS.length] + (state % 17 === 0 ? ". " : " ");
    words.push(word);
    length += word.length;
  }
  return words.join("");
}

/** One minimal SGLang chat reply: two completion tokens and their log-probs. */
const CHAT_REPLY = JSON.stringify({
  id: "chatcmpl-budget",
  object: "chat.completion",
  created: 1,
  model: "budget",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "ok" },
      finish_reason: "stop",
      meta_info: {
        output_token_logprobs: [
          [-0.5, 562],
          [-0.25, 151645],
        ],
        completion_tokens: 2,
        prompt_tokens: 3,
      },
    },
  ],
});

async function startBackend(): Promise<string> {
  const backend = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(CHAT_REPLY);
    });
  });
  await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
  backend.unref();
  return `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
}

async function post(url: string, body?: unknown): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new Error("run with --expose-gc");
  collect();
  collect();
}

async function measure(version: SessionServerVersion, sessions: number, turns: number, bytes: number): Promise<void> {
  const server = await startSessionServer({ version, backendUrl: await startBackend(), logger: { warn: () => undefined } });
  const ids: string[] = [];
  // Warm-up session: the first turn loads template and tokenizer caches that are not per-session memory.
  for (let s = 0; s <= sessions; s += 1) {
    const { session_id: id } = (await (await post(`${server.url}/sessions`)).json()) as { session_id: string };
    const messages: unknown[] = [];
    for (let t = 0; t < turns; t += 1) {
      messages.push({ role: "user", content: historyText(s * 31 + t, bytes) });
      const reply = await post(`${server.url}/sessions/${id}/v1/chat/completions`, { messages });
      if (reply.status !== 200) throw new Error(`chat: ${reply.status} ${await reply.text()}`);
      messages.push(((await reply.json()) as { choices: Array<{ message: unknown }> }).choices[0].message);
    }
    if (s === 0) {
      await fetch(`${server.url}/sessions/${id}`, { method: "DELETE" });
      gc();
      continue;
    }
    ids.push(id);
    if (s === 1) {
      gc();
    }
  }
  gc();
  const start = process.memoryUsage().heapUsed;
  const accountedBefore = server.sessionUsage().bytes;
  // Delete all measured sessions and read what the heap gives back, against what the accounting frees.
  for (const id of ids) await fetch(`${server.url}/sessions/${id}`, { method: "DELETE" });
  gc();
  const end = process.memoryUsage().heapUsed;
  const accountedAfter = server.sessionUsage().bytes;
  process.stdout.write(`${JSON.stringify({ sessions, turns, bytes, heapFreed: start - end, accountedFreed: accountedBefore - accountedAfter })}\n`);
  await server.close();
}

async function serve(version: SessionServerVersion, options: Record<string, unknown>): Promise<void> {
  const server = await startSessionServer({ version, backendUrl: await startBackend(), logger: { warn: () => undefined }, ...options });
  const usage = server.sessionUsage();
  process.stdout.write(`${JSON.stringify({ url: server.url, budgetBytes: usage.budgetBytes })}\n`);
}

if (require.main === module) {
  const [mode, version, ...rest] = process.argv.slice(2);
  const run =
    mode === "measure"
      ? measure(version as SessionServerVersion, Number(rest[0]), Number(rest[1]), Number(rest[2]))
      : serve(version as SessionServerVersion, JSON.parse(rest[0] ?? "{}") as Record<string, unknown>);
  run.catch((error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
