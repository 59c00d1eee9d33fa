// Concurrency contracts of the shell: the lock is not held across the upstream call, DELETE during a chat,
// stale concurrent updates skipped, and a 256-session x 9-turn load that must keep every session separate.
import { echoScript, startMockBackend, type MockBackend } from "../../src/backend";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import type { ChatMessage } from "../../src/tokenizer/types";
import { assistantOf, call, chat, createSession, getSession, recordingLogger } from "./helpers";

/** The seed fixture's server kwargs: servers alone default to {} (miles' --apply-chat-template-kwargs). */
const SEED_KWARGS = { enable_thinking: false };

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !condition(); i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error("condition not reached");
}

/**
 * A backend whose generations wait at a gate the test opens: overlap and ordering are decided by the test,
 * never by timing, so the assertions hold on a loaded machine.
 */
class Gate {
  private waiting: Array<() => void> = [];
  arrived = 0;
  /** Resolves when the test opens the gate (or it is already open). */
  pass(): Promise<void> {
    this.arrived += 1;
    if (this.open) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  open = false;
  release(): void {
    this.open = true;
    for (const resolve of this.waiting.splice(0)) resolve();
  }
  close(): void {
    this.open = false;
    this.arrived = 0;
  }
}

describe("with a gated backend", () => {
  let backend: MockBackend;
  let server: RunningSessionServer;
  const logger = recordingLogger();
  const gate = new Gate();

  beforeAll(async () => {
    gate.release();
    backend = await startMockBackend({
      process: async (prompt, body) => {
        await gate.pass();
        return echoScript(prompt, body);
      },
    });
    server = await startSessionServer({ chatTemplateKwargs: SEED_KWARGS, version: "v1", backendUrl: backend.url, logger });
  });
  afterAll(async () => {
    gate.release();
    await server.close();
    await backend.close();
  });

  test("DELETE proceeds while a chat is upstream; the chat still answers and skips its state update", async () => {
    const id = await createSession(server.url);
    backend.reset();
    gate.close();
    const inflight = chat(server.url, id, { messages: [{ role: "user", content: "slow turn" }] });
    await waitFor(() => gate.arrived >= 1);
    const getDuring = await getSession(server.url, id);
    expect(getDuring.records).toHaveLength(0);
    const del = await call("DELETE", `${server.url}/sessions/${id}`);
    expect(del.status).toBe(204); // answered while the generation is still held at the gate
    expect(backend.currentConcurrent).toBe(1);
    const late = await chat(server.url, id, { messages: [{ role: "user", content: "after delete" }] });
    expect(late.status).toBe(404);
    gate.release();
    const reply = await inflight;
    expect(reply.status).toBe(200);
    expect(assistantOf(reply).content).toBe("echo: slow turn");
    expect(logger.warnings.some((w) => w.includes(`session ${id} closed during the upstream call`))).toBe(true);
    expect((await call("GET", `${server.url}/sessions/${id}`)).status).toBe(404);
    expect(backend.requestLog).toHaveLength(1);
  });

  test("concurrent requests from the same state all reach the backend; one commits, the others are skipped", async () => {
    const id = await createSession(server.url);
    const warm = await chat(server.url, id, { messages: [{ role: "user", content: "warmup" }] });
    const retry = { messages: [{ role: "user", content: "warmup" }, assistantOf(warm), { role: "system", content: "again" }] };
    const before = logger.warnings.length;
    backend.reset();
    gate.close();
    const pending = [0, 1, 2, 3].map(() => chat(server.url, id, retry));
    await waitFor(() => gate.arrived === 4); // all four prepared from the same one-turn state
    gate.release();
    const replies = await Promise.all(pending);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(backend.requestLog).toHaveLength(4);
    const view = await getSession(server.url, id);
    expect(view.records).toHaveLength(2);
    const winner = view.records[1];
    expect(replies.filter((r) => r.json<{ id: string }>().id === winner.response.id)).toHaveLength(1);
    expect(logger.warnings.slice(before).filter((w) => w.includes("state changed during the upstream call"))).toHaveLength(3);
  });

  test("close() ends in-flight requests and frees the port", async () => {
    const extra = await startSessionServer({ chatTemplateKwargs: SEED_KWARGS, version: "v1", backendUrl: backend.url, logger: recordingLogger() });
    const id = await createSession(extra.url);
    gate.close();
    const inflight = chat(extra.url, id, { messages: [{ role: "user", content: "never finishes" }] }).then(
      (r) => r.status,
      () => "socket closed",
    );
    await waitFor(() => gate.arrived >= 1);
    await extra.close();
    expect(["socket closed", 502]).toContain(await inflight);
    await expect(call("GET", `${extra.url}/health`)).rejects.toThrow();
    gate.release();
  });
});

describe("load: 256 concurrent sessions x 9 turns", () => {
  let backend: MockBackend;
  let server: RunningSessionServer;

  beforeAll(async () => {
    backend = await startMockBackend({ process: echoScript });
    server = await startSessionServer({ chatTemplateKwargs: SEED_KWARGS, version: "v1", backendUrl: backend.url, logger: recordingLogger() });
  });
  afterAll(async () => {
    await server.close();
    await backend.close();
  });

  /** 9 calls: 4 appends, a pure retry of the 4th, then 4 more appends. Returns the final history. */
  async function drive(index: number): Promise<{ id: string; history: ChatMessage[] }> {
    const id = await createSession(server.url);
    const history: ChatMessage[] = [{ role: "system", content: `You serve session ${index}.` }];
    for (let turn = 1; turn <= 9; turn += 1) {
      if (turn === 5)
        history.pop(); // retry: drop the last assistant reply and ask again
      else history.push({ role: turn % 3 === 0 ? "system" : "user", content: `s${index}-t${turn}` });
      if (turn % 3 === 0) history.push({ role: "user", content: `s${index}-u${turn}` });
      const reply = await chat(server.url, id, { messages: history, stream: turn % 2 === 0 });
      if (reply.status !== 200) throw new Error(`session ${index} turn ${turn}: ${reply.status} ${reply.text}`);
      const content = turn % 2 === 0 ? JSON.parse(reply.text.split("\n\n")[0].slice(6)).choices[0].delta.content : assistantOf(reply).content;
      history.push({ role: "assistant", content });
    }
    return { id, history };
  }

  test("every session ends with exactly its own records and token ids, without errors", async () => {
    backend.reset();
    const runs = await Promise.all(Array.from({ length: 256 }, (_, i) => drive(i)));
    expect(backend.requestLog).toHaveLength(256 * 9);
    expect(new Set(runs.map((r) => r.id)).size).toBe(256);
    for (const [index, run] of runs.entries()) {
      const view = await getSession(server.url, run.id);
      expect(view.records).toHaveLength(8);
      const own = new RegExp(`\\bs${index}-`);
      const foreign = new RegExp(`\\bs(?!${index}-)\\d+-`);
      let previous: number[] = [];
      for (const record of view.records) {
        const text = JSON.stringify(record.request.messages) + JSON.stringify(record.response.choices[0].message);
        expect(text).toMatch(own);
        expect(text).not.toMatch(foreign);
        const ids: number[] = [...record.request.input_ids, ...record.response.choices[0].meta_info.output_token_logprobs.map((p: number[]) => p[1])];
        expect(ids.slice(0, previous.length)).toEqual(previous);
        previous = ids;
      }
      expect(view.metadata.accumulated_token_ids).toEqual(previous);
      expect(view.metadata.tito_session_mismatch).toEqual([]);
      expect(view.records[7].response.choices[0].message.content).toBe(`echo: s${index}-u9`);
      expect(run.history.filter((m) => m.role === "assistant")).toHaveLength(8);
    }
  }, 180_000);
});
