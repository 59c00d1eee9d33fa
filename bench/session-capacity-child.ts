// One session server under the bench's heap limit, filled with ~200 KB-history sessions: with the default budget
// until the first 503, or with an explicit budget too large to matter and the heap guard off until the process dies.
// Prints one JSON line per session stored, so the parent keeps the count even when the process is killed by the heap.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startSessionServer } from "../src/server";
import { measureWithoutHeapGuard } from "../src/server/session-budget";

const WORDS = "the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were her".split(" ");

function historyText(seed: number, bytes: number): string {
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

const REPLY = JSON.stringify({
  id: "chatcmpl-capacity",
  object: "chat.completion",
  created: 1,
  model: "capacity",
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

function liveHeap(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

async function main(): Promise<void> {
  const unbounded = process.argv[2] === "unbounded";
  // an explicit budget keeps the heap guard: the measure of what the heap itself holds turns it off
  if (unbounded) measureWithoutHeapGuard();
  const backend = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(REPLY);
    });
  });
  await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
  const backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
  const server = await startSessionServer({ version: "v1", backendUrl, logger: { warn: () => undefined }, ...(unbounded ? { maxSessionBytes: 2 ** 50 } : {}) });
  const baseline = liveHeap();
  const post = (path: string, body?: unknown): Promise<Response> =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  for (let i = 0; ; i += 1) {
    const created = await post("/sessions");
    if (created.status !== 200) {
      const usage = server.sessionUsage();
      process.stdout.write(
        `${JSON.stringify({ refused: created.status, sessions: usage.sessions, accounted: usage.bytes, baseline, live: liveHeap(), message: await created.text() })}\n`,
      );
      break;
    }
    const { session_id: id } = (await created.json()) as { session_id: string };
    const reply = await post(`/sessions/${id}/v1/chat/completions`, { messages: [{ role: "user", content: historyText(i, 200_000) }] });
    if (reply.status !== 200) {
      const usage = server.sessionUsage();
      process.stdout.write(
        `${JSON.stringify({ refused: reply.status, sessions: usage.sessions, accounted: usage.bytes, baseline, live: liveHeap(), message: await reply.text() })}\n`,
      );
      break;
    }
    await reply.arrayBuffer();
    process.stdout.write(`${JSON.stringify({ stored: i + 1, accounted: server.sessionUsage().bytes, baseline })}\n`);
  }
  await server.close();
  backend.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
