// Benchmark of the v2 session server: attach search and samples op as the tree grows, and chat latency vs v1.
// Prints ratios measured side by side in one run (npm run bench server-v2); not part of npm test.
import { request } from "undici";
import {
  ASSISTANT_INPUT_FOLLOWUP_TEXT,
  ASSISTANT_INPUT_TEXTS,
  buildInitialMessages,
  FORCE_FINAL_TEXT,
  MOCK_TOOL_RESULTS,
  SYSTEM_REMINDER_TEXT,
  USER_FOLLOWUP_TEXT,
  WEATHER_TOOLS,
} from "../src/agent/texts";
import { echoScript, startMockBackend, weatherScript, type MockBackend } from "../src/backend";
import type { ProcessFunction } from "../src/backend/types";
import { strictMessageMatches } from "../src/server/message-matchers";
import { startSessionServer, type RunningSessionServer } from "../src/server/session-server";
import type { SessionRecord } from "../src/server/types";
import { MAX_TREE_NODES, TrajectoryForest, type TrajectoryNode } from "../src/server/v2";
import type { ChatMessage } from "../src/tokenizer/types";

const QUIET = { warn: () => undefined };

function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const fmt = (ms: number): string => (ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(1)} µs`);

async function post(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown>; bytes: Buffer }> {
  const res = await request(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const json = String(res.headers["content-type"] ?? "").includes("json") ? (JSON.parse(bytes.toString("utf8")) as Record<string, unknown>) : {};
  if (res.statusCode !== 200) throw new Error(`POST ${url}: ${res.statusCode} ${bytes.toString("utf8").slice(0, 300)}`);
  return { status: res.statusCode, json, bytes };
}

async function newSession(base: string): Promise<string> {
  return (await post(`${base}/sessions`, {})).json.session_id as string;
}

// ---------------------------------------------------------------------------------------------------------
// 1. Attach-point search: a 9-node weather-shaped forest vs a 1024-node forest (same message shapes).

const RECORD: SessionRecord = { timestamp: 0, request_timestamp: 0, method: "POST", path: "/v1/chat/completions", request: {}, response: {}, status_code: 200 };

function message(role: string, i: number): ChatMessage {
  return { role, content: `${role} message ${i}: ${"the weather in Beijing is sunny at 22 degrees. ".repeat(3)}` };
}

/** A forest shaped like a retrying agent: a trunk where every level also holds `retries` abandoned siblings. */
function retryForest(levels: number, retries: number): { forest: TrajectoryForest; request: ChatMessage[] } {
  const forest = new TrajectoryForest();
  let counter = 0;
  const add = (parent: TrajectoryNode | null, delta: ChatMessage[]): TrajectoryNode =>
    forest.createNode(parent, {
      deltaMessages: delta,
      tokenIds: [counter],
      completionSpan: [0, 1],
      committedAt: counter,
      responseId: `r${counter++}`,
      record: RECORD,
      finishReason: "stop",
    });
  const request: ChatMessage[] = [message("system", 0), message("user", 0)];
  let parent: TrajectoryNode | null = null;
  for (let level = 0; level < levels; level += 1) {
    const incoming = level === 0 ? request.slice() : [message("tool", level)];
    if (level > 0) request.push(...incoming);
    for (let r = 0; r < retries; r += 1) add(parent, [...incoming, message("assistant", 10_000 + counter)]);
    const assistant = message("assistant", level);
    parent = add(parent, [...incoming, assistant]);
    request.push(assistant);
  }
  request.push(message("user", 999));
  return { forest, request };
}

function timeSearch(forest: TrajectoryForest, req: ChatMessage[], minMs: number): number {
  for (let i = 0; i < 100; i += 1) forest.findAttachPoint(req, strictMessageMatches);
  const rounds: number[] = [];
  for (let round = 0; round < 15; round += 1) {
    let n = 0;
    const start = nowMs();
    while (nowMs() - start < minMs / 15) {
      for (let i = 0; i < 20; i += 1) forest.findAttachPoint(req, strictMessageMatches);
      n += 20;
    }
    rounds.push((nowMs() - start) / n);
  }
  return quantile(rounds, 0.5);
}

function benchAttachSearch(): void {
  const small = retryForest(7, 0); // a 7-deep trunk ...
  small.forest.createNode(small.forest.nodes[3], {
    deltaMessages: [message("system", 1), message("assistant", 77)],
    tokenIds: [1],
    completionSpan: [0, 1],
    committedAt: 0,
    responseId: "x",
    record: RECORD,
    finishReason: "stop",
  });
  small.forest.createNode(small.forest.nodes[3], {
    deltaMessages: [message("system", 1), message("assistant", 78)],
    tokenIds: [1],
    completionSpan: [0, 1],
    committedAt: 0,
    responseId: "y",
    record: RECORD,
    finishReason: "stop",
  });
  const big = retryForest(MAX_TREE_NODES / 8, 7); // 128 levels x (1 kept + 7 abandoned) = 1024 nodes
  if (small.forest.nodes.length !== 9 || big.forest.nodes.length !== MAX_TREE_NODES) throw new Error("forest sizes are off");
  const t9 = timeSearch(small.forest, small.request, 1500);
  const t1024 = timeSearch(big.forest, big.request, 3000);
  // The same 1024 nodes as one flat fan of roots (worst case for pruning: every root's delta is compared).
  const flat = new TrajectoryForest();
  for (let i = 0; i < MAX_TREE_NODES; i += 1)
    flat.createNode(null, {
      deltaMessages: [message("system", 0), message("user", 0), message("assistant", i)],
      tokenIds: [i],
      completionSpan: [0, 1],
      committedAt: i,
      responseId: `f${i}`,
      record: RECORD,
      finishReason: "stop",
    });
  const tFlat = timeSearch(flat, [message("system", 0), message("user", 0), message("assistant", 5000)], 3000);
  console.log(`attach search, 9-node weather-shaped tree:        ${fmt(t9)} per search`);
  console.log(`attach search, 1024 nodes (128 levels x 8 tries): ${fmt(t1024)} per search  -> ${(t1024 / t9).toFixed(1)}x the 9-node tree`);
  console.log(`attach search, 1024 sibling roots (flat fan):     ${fmt(tFlat)} per search  -> ${(tFlat / t9).toFixed(1)}x the 9-node tree`);
}

// ---------------------------------------------------------------------------------------------------------
// 2. Samples op per leaf: the 9-node weather tree vs a 1024-node tree, over HTTP against a real v2 server.

async function chatOk(base: string, id: string, messages: ChatMessage[], extra: Record<string, unknown> = {}): Promise<ChatMessage> {
  const reply = await post(`${base}/sessions/${id}/v1/chat/completions`, { messages, ...extra });
  return (reply.json.choices as Array<{ message: ChatMessage }>)[0].message;
}

/** The scripted weather run of SPEC §10 (9 calls; needs the weather script on the backend). */
async function weatherRun(base: string, id: string): Promise<void> {
  const messages = buildInitialMessages();
  const extra = { tools: WEATHER_TOOLS, temperature: 0, max_tokens: 128 };
  let tools = 0;
  const call = async (): Promise<void> => void messages.push(await chatOk(base, id, messages, extra));
  const tool = (): void => {
    const calls = (messages.at(-1) as ChatMessage).tool_calls ?? [];
    messages.push({ role: "tool", content: MOCK_TOOL_RESULTS[tools++ % 4], tool_call_id: calls[0]?.id ?? "none" });
  };
  await call();
  tool();
  await call();
  messages.push({ role: "user", content: USER_FOLLOWUP_TEXT });
  await call();
  tool();
  await call();
  messages.push({ role: "system", content: SYSTEM_REMINDER_TEXT });
  await call();
  messages.pop();
  await call();
  messages.pop();
  await call();
  messages.push({ role: "user", content: FORCE_FINAL_TEXT });
  await call();
  messages.push(
    { role: "assistant", content: ASSISTANT_INPUT_TEXTS[0] },
    { role: "assistant", content: ASSISTANT_INPUT_TEXTS[1] },
    { role: "user", content: ASSISTANT_INPUT_FOLLOWUP_TEXT },
  );
  await call();
}

/** 1024 nodes: the weather run's 9 nodes, then 1015 divergent branches hung off its nodes round-robin. */
async function bigTree(base: string, id: string): Promise<void> {
  await weatherRun(base, id);
  const view = JSON.parse(await (await request(`${base}/sessions/${id}`)).body.text()) as { records: SessionRecord[] };
  // The active path's requests give the message prefixes ending right after each generation.
  const prefixes: ChatMessage[][] = view.records.map((record) => {
    const sent = record.request.messages as ChatMessage[];
    const reply = (record.response.choices as Array<{ message: ChatMessage }>)[0].message;
    return [...sent, reply];
  });
  const jobs: Array<() => Promise<unknown>> = [];
  for (let i = 0; i < MAX_TREE_NODES - 9; i += 1) {
    const prefix = prefixes[i % prefixes.length];
    jobs.push(() => chatOk(base, id, [...prefix, { role: "user", content: `branch ${i}: and the weather in city ${i}?` }], { tools: WEATHER_TOOLS }));
  }
  for (let i = 0; i < jobs.length; i += 16) await Promise.all(jobs.slice(i, i + 16).map((job) => job()));
}

async function timeSamples(base: string, id: string, rounds: number, warmup: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < rounds + warmup; i += 1) {
    const start = nowMs();
    await post(`${base}/sessions/${id}/samples`, { max_seq_len: null, metadata: { reward: 1 } });
    if (i >= warmup) times.push(nowMs() - start);
  }
  return quantile(times, 0.5);
}

async function benchSamplesOp(backendUrl: string): Promise<void> {
  const server = await startSessionServer({ version: "v2", backendUrl, logger: QUIET });
  const keepAll = await startSessionServer({ version: "v2", backendUrl, logger: QUIET, samplePicker: (samples) => samples });
  try {
    for (const [label, srv] of [
      ["default picker (dropRetries)", server],
      ["keep-all picker", keepAll],
    ] as const) {
      const small = await newSession(srv.url);
      await weatherRun(srv.url, small);
      const big = await newSession(srv.url);
      const built = nowMs();
      await bigTree(srv.url, big);
      const buildMs = nowMs() - built;
      const leaves = async (id: string): Promise<number> =>
        (JSON.parse(await (await request(`${srv.url}/sessions/${id}`)).body.text()) as { metadata: { tree: { leaves: unknown[] } } }).metadata.tree.leaves
          .length;
      const [l9, l1024] = [await leaves(small), await leaves(big)];
      const t9 = await timeSamples(srv.url, small, 25, 10);
      const t1024 = await timeSamples(srv.url, big, 5, 1);
      const p9 = t9 / l9;
      const p1024 = t1024 / l1024;
      console.log(
        `samples op, ${label}: 9-node weather tree ${fmt(t9)} (${l9} leaves, ${fmt(p9)}/leaf); ` +
          `1024-node tree ${fmt(t1024)} (${l1024} leaves, ${fmt(p1024)}/leaf) -> per-leaf ratio ${(p1024 / p9).toFixed(2)}x` +
          (label.startsWith("default") ? `  [1015 branch turns built in ${(buildMs / 1000).toFixed(1)} s]` : ""),
      );
    }
  } finally {
    await keepAll.close();
    await server.close();
  }
}

// ---------------------------------------------------------------------------------------------------------
// 3. Chat turn added latency, v2 vs v1, interleaved in one run against a zero-latency backend.

async function benchChatLatency(backend: MockBackend, v1: RunningSessionServer, v2: RunningSessionServer, sessions: number): Promise<void> {
  const added: Record<"v1" | "v2", number[]> = { v1: [], v2: [] };
  const turns = 9;
  for (let s = 0; s < sessions; s += 1) {
    for (const [name, server] of (s % 2 === 0
      ? [
          ["v1", v1],
          ["v2", v2],
        ]
      : [
          ["v2", v2],
          ["v1", v1],
        ]) as Array<["v1" | "v2", RunningSessionServer]>) {
      const id = await newSession(server.url);
      const messages: ChatMessage[] = [
        { role: "system", content: "You are a terse assistant." },
        { role: "user", content: `session ${s} question 0` },
      ];
      for (let t = 0; t < turns; t += 1) {
        const start = nowMs();
        const reply = await post(`${server.url}/sessions/${id}/v1/chat/completions`, { messages, tools: WEATHER_TOOLS });
        const viaServer = nowMs() - start;
        const upstreamBody = backend.requestLog[backend.requestLog.length - 1];
        const directStart = nowMs();
        await post(`${backend.url}/v1/chat/completions`, upstreamBody);
        const direct = nowMs() - directStart;
        if (s >= 4) added[name].push(viaServer - direct);
        messages.push((reply.json.choices as Array<{ message: ChatMessage }>)[0].message, { role: "user", content: `session ${s} question ${t + 1}` });
      }
      if (backend.requestLog.length > 10_000) backend.reset();
    }
  }
  const p50 = { v1: quantile(added.v1, 0.5), v2: quantile(added.v2, 0.5) };
  const p99 = { v1: quantile(added.v1, 0.99), v2: quantile(added.v2, 0.99) };
  console.log(
    `chat turn added latency (1 session at a time, ${added.v1.length} turns each): ` +
      `v1 p50 ${fmt(p50.v1)} p99 ${fmt(p99.v1)}; v2 p50 ${fmt(p50.v2)} p99 ${fmt(p99.v2)} -> v2/v1 p50 ${(p50.v2 / p50.v1).toFixed(2)}x, p99 ${(p99.v2 / p99.v1).toFixed(2)}x (goal <= 1.2x)`,
  );
}

async function main(): Promise<void> {
  benchAttachSearch();
  let script: ProcessFunction = weatherScript;
  const backend = await startMockBackend({ process: (prompt, body) => script(prompt, body) });
  try {
    await benchSamplesOp(backend.url);
    script = echoScript;
    const v1 = await startSessionServer({ version: "v1", backendUrl: backend.url, logger: QUIET });
    const v2 = await startSessionServer({ version: "v2", backendUrl: backend.url, logger: QUIET });
    try {
      await benchChatLatency(backend, v1, v2, 64);
    } finally {
      await v1.close();
      await v2.close();
    }
  } finally {
    await backend.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
