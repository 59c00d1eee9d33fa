// Before the session budget refuses a request, it drops the texts stored records keep beside their parsed request and
// response (a cache for the session view and later turns): more sessions fit, and nothing they hold changes by a byte.
import { startSessionServer, type RunningSessionServer, type SessionServerVersion } from "../../src/server";
import { BytePool, SESSION_OVERHEAD_BYTES, SessionBudgetError, SessionStore } from "../../src/server/session-store";
import { call, chat, createSession, fillUntilRefused, rawChatReply, startRawBackend, type RawBackend } from "./helpers";
import { historyText } from "./support/session-budget-child";

describe("the pool asks its reclaimers before refusing", () => {
  const fill = (store: SessionStore<number>, bytes: number): void => {
    const entry = store.create();
    store.charge(entry, bytes);
  };

  test("a reservation past the budget is admitted once a reclaimer freed enough, and refused as before when none could", () => {
    const pool = new BytePool(100_000, "the test budget");
    const store = new SessionStore(() => 0, { pool, maxSessions: 100, ttlMs: null });
    fill(store, 60_000);
    const asked: number[] = [];
    let droppable = 30_000;
    const remove = store.addReclaimer((bytes) => {
      asked.push(bytes);
      const freed = droppable;
      droppable = 0;
      pool.held -= freed; // what a shell does through charge(): the pool holds less
      return freed;
    });
    // 60 000 held + 50 000 asked is 10 000 past the budget: the reclaimer is asked for that shortfall
    const release = store.reserve(50_000, "this chat turn");
    expect(asked).toEqual([10_000]);
    release();
    // nothing droppable is left: the refusal is the one the store gives without reclaimers
    const refusal = (() => {
      try {
        store.reserve(90_000, "this chat turn");
        return null;
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(SessionBudgetError);
    expect((refusal as Error).message).toMatch(/^session store is full: this chat turn needs about 0\.1 MiB, and sessions hold 0\.0 MiB of the test budget/);
    expect(asked).toEqual([10_000, 20_000]);
    remove();
    expect(() => store.reserve(90_000, "this chat turn")).toThrow(SessionBudgetError);
    expect(asked).toHaveLength(2); // unregistered: not asked again
  });

  test("under the heap guard, the reclaimer is asked for what the projected live heap is over, and its drop counts at once", () => {
    const MiB = 1024 * 1024;
    const heap = { limitBytes: 100 * MiB, liveBytes: 80 * MiB };
    const pool = new BytePool(10 ** 12, "the default session budget", { read: () => heap, collections: () => 0 });
    const store = new SessionStore(() => 0, { pool, maxSessions: 100, ttlMs: null });
    const entry = store.create();
    store.charge(entry, 6 * MiB); // projected live: 80 MiB at the last collection + 6 MiB charged since
    const asked: number[] = [];
    store.addReclaimer((bytes) => {
      asked.push(bytes);
      store.charge(entry, 2 * MiB); // as a shell re-charges a session whose texts it dropped
      return 4 * MiB;
    });
    // 86 MiB + 7 MiB is 3 MiB past the 90 MiB guard: asked for that, then admitted at 82 + 7 = 89 MiB
    const release = store.reserve(7 * MiB, "this chat turn");
    expect(asked).toEqual([3 * MiB]);
    release();
  });

  test("every store sharing the pool is asked, in turn, until the shortfall is covered", () => {
    const pool = new BytePool(100_000, "the shared budget");
    const first = new SessionStore(() => 0, { pool, maxSessions: 100, ttlMs: null });
    const second = new SessionStore(() => 0, { pool, maxSessions: 100, ttlMs: null });
    fill(first, 50_000);
    fill(second, 40_000);
    const asked: string[] = [];
    const reclaimer = (name: string, gives: number) => (bytes: number) => {
      asked.push(`${name} ${bytes}`);
      pool.held -= gives;
      return gives;
    };
    first.addReclaimer(reclaimer("first", 5_000));
    second.addReclaimer(reclaimer("second", 10_000));
    // 90 000 + 20 000 is 10 000 past: the first gives 5 000, the second is asked for the rest
    second.reserve(20_000, "this chat turn");
    expect(asked).toEqual(["first 10000", "second 5000"]);
  });
});

describe.each(["v1", "v2"] as const)("%s: a full store drops kept texts before it refuses", (version: SessionServerVersion) => {
  let raw: RawBackend;
  let server: RunningSessionServer;
  const infos: string[] = [];

  beforeAll(async () => {
    raw = await startRawBackend(() => ({ status: 200, body: rawChatReply([9707, 151645]) }));
    server = await startSessionServer({
      version,
      backendUrl: raw.url,
      maxSessionBytes: 6_000_000,
      logger: { warn: () => undefined, info: (message) => void infos.push(message) },
    });
  });

  afterAll(async () => {
    await server?.close();
    await raw?.close();
  });

  const user = (seed: number) => ({ role: "user", content: historyText(seed, 20_000) });

  test("more sessions fit than their kept texts allow; views and later turns are byte for byte what they were", async () => {
    // Two sessions with the same conversation, so their next turns send the same upstream body.
    const twins = [await createSession(server.url), await createSession(server.url)];
    const replies = [];
    for (const id of twins) replies.push(await chat(server.url, id, { messages: [user(0)] }));
    for (const reply of replies) expect(reply.status).toBe(200);
    const assistant = replies[0].json<{ choices: Array<{ message: Record<string, unknown> }> }>().choices[0].message;
    const next = { messages: [user(0), assistant, { role: "user", content: "And tomorrow?" }] };
    const viewsBefore = await Promise.all(twins.map((id) => call("GET", `${server.url}/sessions/${id}`)));
    // the second twin's next turn while its texts are kept: the upstream body copies the stored prompt
    expect((await chat(server.url, twins[1], next)).status).toBe(200);
    const keptTurnBody = raw.requests[raw.requests.length - 1].body;
    let perSessionWithTexts = 0;

    // Fill the store until it refuses a new session.
    const { refusal, ids: fillers } = await fillUntilRefused(server.url, 399, async (id, index) => {
      const before = server.sessionUsage().bytes;
      const reply = await chat(server.url, id, { messages: [user(index + 1)] });
      if (index === 0) perSessionWithTexts = server.sessionUsage().bytes - before + SESSION_OVERHEAD_BYTES; // one filler's charge, texts kept
      return reply;
    });
    expect(refusal?.status).toBe(503);
    expect(infos.some((message) => /^session budget: dropped the kept texts of stored records \(\d+\.\d MiB\) to make room$/.test(message))).toBe(true);
    // more sessions than the budget holds while each keeps its texts
    const held = server.sessionUsage().sessions;
    expect(held * perSessionWithTexts).toBeGreaterThan(1.15 * 0.95 * 6_000_000);

    // The first sessions' texts went first: their views are written again, to the same bytes.
    const viewsAfter = await Promise.all(twins.map((id) => call("GET", `${server.url}/sessions/${id}`)));
    for (let i = 0; i < twins.length; i += 1) {
      expect(viewsAfter[i].status).toBe(200);
      // the second twin has one more turn now; the first is unchanged
      if (i === 0) expect(Buffer.from(viewsAfter[i].bytes).equals(Buffer.from(viewsBefore[i].bytes))).toBe(true);
    }
    // Room for one more turn, then the first twin's next turn: its prompt is spelled whole, to the same bytes.
    for (const id of fillers.slice(0, 8)) expect((await call("DELETE", `${server.url}/sessions/${id}`)).status).toBe(204);
    expect((await chat(server.url, twins[0], next)).status).toBe(200);
    expect(raw.requests[raw.requests.length - 1].body).toBe(keptTurnBody);
    // and the twins' views agree again, byte for byte, one written from kept texts, one spelled again
    const [first, second] = await Promise.all(twins.map((id) => call("GET", `${server.url}/sessions/${id}`)));
    const recordsOf = (reply: Awaited<ReturnType<typeof call>>): string => JSON.stringify(reply.json<{ records: unknown[] }>().records.map(withoutTimes));
    expect(recordsOf(first)).toBe(recordsOf(second));
  });
});

/** A record without its timestamps (two sessions' records differ only there). */
function withoutTimes(record: unknown): unknown {
  const { timestamp: _timestamp, request_timestamp: _requestTimestamp, ...rest } = record as Record<string, unknown>;
  return rest;
}
