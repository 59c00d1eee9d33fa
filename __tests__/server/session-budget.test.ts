// The session budget over loopback HTTP (explicit small budgets) and the store's expiry with an injected clock:
// 503 with Retry-After naming the budget, nothing stored is lost or blocked, DELETE frees room at once.
import { startSessionServer, type RunningSessionServer, type SessionServerVersion } from "../../src/server";
import { BytePool, SessionBudgetError, SessionStore, SESSION_OVERHEAD_BYTES, type SessionEntry } from "../../src/server/session-store";
import { resolveSessionBudget } from "../../src/server/session-budget";
import { call, chat, createSession, fillUntilRefused, getSession, rawChatReply, recordingLogger, startRawBackend, type RawBackend } from "./helpers";
import { historyText } from "./support/session-budget-child";

let raw: RawBackend;

beforeAll(async () => {
  raw = await startRawBackend(() => ({ status: 200, body: rawChatReply([9707, 151645]) }));
});

afterAll(async () => {
  await raw.close();
});

async function withServer<T>(
  version: SessionServerVersion,
  options: { maxSessionBytes?: number; maxSessions?: number },
  body: (server: RunningSessionServer) => Promise<T>,
): Promise<T> {
  const server = await startSessionServer({ version, backendUrl: raw.url, logger: recordingLogger(), ...options });
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

const user = (seed: number, bytes: number) => ({ role: "user", content: historyText(seed, bytes) });

describe.each(["v1", "v2"] as const)("%s session budget", (version) => {
  test("a full store answers 503 naming the budget; stored sessions stay usable; DELETE frees room at once", async () => {
    await withServer(version, { maxSessionBytes: 8_000_000 }, async (server) => {
      const held: Array<{ id: string; messages: Array<Record<string, unknown>> }> = [];
      const { refusal: refused } = await fillUntilRefused(server.url, 200, async (id, i) => {
        const messages = [user(i, 20_000)];
        const reply = await chat(server.url, id, { messages });
        expect(reply.status).toBe(200);
        held.push({ id, messages: [...messages, reply.json<{ choices: Array<{ message: Record<string, unknown> }> }>().choices[0].message] });
        return reply;
      });
      expect(refused).not.toBeNull();
      expect(held.length).toBeGreaterThan(3);
      expect(refused!.status).toBe(503);
      expect(refused!.headers["retry-after"]).toBe("5");
      expect(refused!.json<{ error: string }>().error).toMatch(
        /^session store is full: a new session needs about 0\.0 MiB, and sessions hold \d+\.\d MiB of the 7\.6 MiB session budget \(maxSessionBytes \/ --max-session-bytes\), of which new sessions may take 95%/,
      );
      const usage = server.sessionUsage();
      expect(usage.sessions).toBe(held.length);
      expect(usage.budgetBytes).toBe(8_000_000);
      expect(usage.bytes).toBeGreaterThan(0.95 * 8_000_000 - 200_000);

      // Everything stored answers: GET, the samples op, and (within the room kept for them) another turn.
      const first = held[0];
      const before = await getSession(server.url, first.id);
      expect(before.records).toHaveLength(1);
      const samples = await call("POST", `${server.url}/sessions/${first.id}/samples`, { max_seq_len: null });
      expect(samples.status).toBe(200);
      const next = await chat(server.url, first.id, { messages: [...first.messages, { role: "user", content: "and one more" }] });
      expect(next.status).toBe(200);
      expect((await getSession(server.url, first.id)).records).toHaveLength(2);

      // A turn that would pass the budget itself is refused before anything changes.
      const last = held[held.length - 1];
      const lastBefore = await getSession(server.url, last.id);
      const big = await chat(server.url, last.id, { messages: [...last.messages, user(999, 600_000)] });
      expect(big.status).toBe(503);
      expect(big.headers["retry-after"]).toBe("5");
      expect(big.json<{ error: string }>().error).toMatch(/^session store is full: this chat turn needs about \d+\.\d MiB/);
      expect(await getSession(server.url, last.id)).toEqual(lastBefore);
      expect(server.sessionUsage().sessions).toBe(held.length);

      // DELETE frees its charge at once: after three, the next creation is admitted (no waiting, no collection).
      for (const gone of held.slice(1, 4)) {
        const charged = server.sessionUsage().bytes;
        expect((await call("DELETE", `${server.url}/sessions/${gone.id}`)).status).toBe(204);
        expect(server.sessionUsage().bytes).toBeLessThan(charged - 50_000); // 20 KB of text and its prompt ids twice
      }
      const fresh = await createSession(server.url);
      expect((await chat(server.url, fresh, { messages: [user(5000, 100)] })).status).toBe(200);
    });
  });

  test("maxSessions caps the count with a 503 naming it; a DELETE makes room", async () => {
    await withServer(version, { maxSessions: 2 }, async (server) => {
      const a = await createSession(server.url);
      await createSession(server.url);
      const refused = await call("POST", `${server.url}/sessions`);
      expect(refused.status).toBe(503);
      expect(refused.headers["retry-after"]).toBe("5");
      expect(refused.json<{ error: string }>().error).toBe(
        "session store is full: 2 sessions held, the session budget allows 2 (maxSessions / --max-sessions); delete sessions (DELETE /sessions/{id}) or raise the budget",
      );
      expect((await call("DELETE", `${server.url}/sessions/${a}`)).status).toBe(204);
      expect((await call("POST", `${server.url}/sessions`)).status).toBe(200);
    });
  });
});

test("a v1 rollback frees the charge of the turn it discards", async () => {
  await withServer("v1", {}, async (server) => {
    const id = await createSession(server.url);
    const u1 = user(1, 10_000);
    const r1 = await chat(server.url, id, { messages: [u1] });
    const a1 = r1.json<{ choices: Array<{ message: Record<string, unknown> }> }>().choices[0].message;
    const afterOne = server.sessionUsage().bytes;
    await chat(server.url, id, { messages: [u1, a1, user(2, 200_000)] });
    const afterTwo = server.sessionUsage().bytes;
    expect(afterTwo - afterOne).toBeGreaterThan(800_000); // 200 KB of text, its ~45k prompt ids twice (8 bytes each)
    // A retry of the second turn with a short message: the big turn is discarded and a small one stored.
    expect((await chat(server.url, id, { messages: [u1, a1, user(3, 100)] })).status).toBe(200);
    const afterRetry = server.sessionUsage().bytes;
    expect(afterRetry).toBeLessThan(afterTwo - 800_000);
    expect(afterRetry - afterOne).toBeLessThan(afterOne); // the short turn's record repeats the 10 KB history once
  });
});

test("budget options are checked when the server starts, naming the option and its flag", async () => {
  await expect(startSessionServer({ version: "v1", backendUrl: raw.url, maxSessionBytes: 0 })).rejects.toThrow(
    "maxSessionBytes (--max-session-bytes) must be a positive integer, got 0",
  );
  await expect(startSessionServer({ version: "v2", backendUrl: raw.url, maxSessions: 1.5 })).rejects.toThrow(
    "maxSessions (--max-sessions) must be a positive integer, got 1.5",
  );
  await expect(startSessionServer({ version: "v2", backendUrl: raw.url, sessionTtlMs: -1 })).rejects.toThrow(
    "sessionTtlMs (--session-ttl) must be a positive integer, got -1",
  );
});

test("an explicit budget keeps the heap guard (the tighter decides); one above the heap limit is reported at start", async () => {
  const { getHeapStatistics } = await import("node:v8");
  const warnings: string[] = [];
  const huge = resolveSessionBudget({ maxSessionBytes: 2 * getHeapStatistics().heap_size_limit }, (message) => warnings.push(message));
  expect(huge.pool.heap).not.toBeNull();
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatch(
    /^session budget: maxSessionBytes \/ --max-session-bytes is \d+\.\d MiB, above this process's heap limit of \d+\.\d MiB \(old generation\): the heap guard refuses growth first \(503 once the live heap would pass 90% of the limit\)/,
  );
  const small = resolveSessionBudget({ maxSessionBytes: 8_000_000 }, (message) => warnings.push(message));
  expect(small.pool.heap).not.toBeNull();
  expect(warnings).toHaveLength(1);
  // Through the server: the warning reaches its logger.
  const logger = recordingLogger();
  const server = await startSessionServer({ version: "v1", backendUrl: raw.url, logger, maxSessionBytes: 2 ** 50 });
  await server.close();
  expect(logger.warnings.filter((line) => line.startsWith("session budget: maxSessionBytes"))).toHaveLength(1);
});

test("the default budget is shared by the process's servers and sized from the heap limit", async () => {
  const { getHeapStatistics } = await import("node:v8");
  await withServer("v1", {}, async (one) => {
    await withServer("v2", {}, async (two) => {
      const limit = getHeapStatistics().heap_size_limit;
      expect(one.sessionUsage().budgetBytes).toBe(two.sessionUsage().budgetBytes);
      expect(one.sessionUsage().budgetBytes).toBeLessThan(0.8 * limit);
      expect(one.sessionUsage().budgetBytes).toBeGreaterThan(0.2 * limit);
      const held = one.sessionUsage().budgetHeldBytes;
      await createSession(two.url);
      expect(one.sessionUsage().budgetHeldBytes).toBe(held + SESSION_OVERHEAD_BYTES);
      expect(one.sessionUsage().bytes).toBe(0);
    });
  });
});

describe("idle expiry (SessionStore with an injected clock)", () => {
  function store(ttlMs: number | null, expired: Array<[string, number]> = []) {
    let now = 1_000;
    const table = new SessionStore<object>(
      () => ({}),
      { pool: new BytePool(10 * SESSION_OVERHEAD_BYTES, "a test budget"), maxSessions: 100, ttlMs },
      () => now,
      (entry: SessionEntry<object>, idle) => expired.push([entry.id, idle]),
    );
    return { table, advance: (ms: number) => (now += ms) };
  }

  test("only sessions untouched for the TTL are evicted, oldest first; a touch or a request in flight keeps one", () => {
    const expired: Array<[string, number]> = [];
    const { table, advance } = store(60_000, expired);
    const a = table.create();
    advance(10_000);
    const b = table.create();
    const c = table.create();
    advance(50_000);
    expect(table.get(a.id)).toBeUndefined(); // idle for the whole TTL: evicted by the lookup itself
    expect(expired).toEqual([[a.id, 60_000]]);
    advance(9_999);
    table.expireIdle();
    expect(table.size).toBe(2);
    advance(1);
    c.busy = 1;
    table.expireIdle();
    expect(expired).toEqual([
      [a.id, 60_000],
      [b.id, 60_000],
    ]);
    expect(table.get(b.id)).toBeUndefined();
    expect(table.get(c.id)).toBe(c);
    expect(table.poolHeldBytes).toBe(SESSION_OVERHEAD_BYTES);
  });

  test("without a TTL nothing expires; a full store's Retry-After counts down to the oldest session's expiry", () => {
    const { table: forever, advance: wait } = store(null);
    const kept = forever.create();
    wait(10 ** 9);
    expect(forever.get(kept.id)).toBe(kept);

    const { table, advance } = store(30_000);
    for (let i = 0; i < 9; i += 1) table.create();
    advance(12_000);
    let error: unknown;
    try {
      table.create();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SessionBudgetError);
    expect((error as SessionBudgetError).retryAfterSeconds).toBe(18);
    advance(18_000);
    expect(() => table.create()).not.toThrow();
    expect(table.size).toBe(1);
  });
});

describe("heap guard (SessionStore with a fake heap)", () => {
  const MiB = 1024 * 1024;

  test("growth is refused once the live heap after the last collection plus later charges would pass 90% of the limit", () => {
    const heap = { limitBytes: 100 * MiB, liveBytes: 80 * MiB };
    let collections = 0;
    const guard = { read: () => heap, collections: () => collections };
    const table = new SessionStore<object>(() => ({}), {
      pool: new BytePool(10 ** 12, "the default session budget", guard),
      maxSessions: 10 ** 6,
      ttlMs: null,
    });
    const a = table.create();
    const release = table.reserve(4 * MiB, "this chat turn");
    table.charge(a, 4 * MiB);
    release();
    // 80 MiB live + 4 MiB charged since = 84; a turn of 6 MiB would reach 90 (allowed), one of 7 MiB would not.
    expect(() => table.reserve(6 * MiB, "this chat turn")()).not.toThrow();
    let error: unknown;
    try {
      table.reserve(7 * MiB, "this chat turn");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SessionBudgetError);
    expect((error as Error).message).toMatch(
      /^session store is full: this chat turn needs about 7\.0 MiB, and the heap would hold about 91\.0 MiB live, past the heap guard of the default session budget \(90\.0 MiB, 90% of the 100\.0 MiB heap limit;/,
    );
    // New sessions stop earlier, at 95% of the guard (85.5 MiB): at 84 MiB projected one more fits, at 86 it does not.
    expect(() => table.create()).not.toThrow();
    heap.liveBytes = 82 * MiB;
    expect(() => table.create()).toThrow(SessionBudgetError);
    // A DELETE counts as freed at once, before any collection sees it.
    table.remove(a.id);
    expect(() => table.create()).not.toThrow();
    // A new collection resets the baseline: what it measured replaces the charges made before it.
    collections += 1;
    heap.liveBytes = 50 * MiB;
    expect(() => table.reserve(30 * MiB, "this chat turn")()).not.toThrow();
  });
  test("bytes deleted while a collection was marking count as freed at once, whenever that collection is first read", () => {
    const heap: { limitBytes: number; liveBytes: number; markedAt: number } = { limitBytes: 100 * MiB, liveBytes: 40 * MiB, markedAt: 0 };
    let collections = 0;
    let clock = 1_000;
    const guard = { read: () => heap, collections: () => collections, now: () => clock };
    const table = new SessionStore<object>(() => ({}), {
      pool: new BytePool(10 ** 12, "the default session budget", guard),
      maxSessions: 10 ** 6,
      ttlMs: null,
    });
    const big = Array.from({ length: 4 }, () => table.create());
    for (const entry of big) table.charge(entry, 10 * MiB);
    table.reserve(0, "a read")(); // the guard reads the heap: 40 MiB live + 40 MiB charged since
    expect(() => table.create()).not.toThrow();
    // A collection begins marking at t=2000 (all four sessions reachable), two are deleted at t=2500, and the
    // collection's figure (what it marked: 80 MiB) is read only afterwards: their 20 MiB still count as freed.
    clock = 2_500;
    table.remove(big[0].id);
    table.remove(big[1].id);
    collections += 1;
    heap.liveBytes = 80 * MiB;
    heap.markedAt = 2_000;
    clock = 3_000;
    // 80 - 20 = 60 MiB projected: a turn of 25 MiB fits under the guard's 90 MiB, one of 31 MiB does not
    expect(() => table.reserve(25 * MiB, "this chat turn")()).not.toThrow();
    expect(() => table.reserve(31 * MiB, "this chat turn")).toThrow(SessionBudgetError);
    // The next collection marked after the deletes: its figure has them freed already, and nothing is subtracted twice.
    collections += 1;
    heap.liveBytes = 60 * MiB;
    heap.markedAt = 2_800;
    expect(() => table.reserve(29 * MiB, "this chat turn")()).not.toThrow();
    expect(() => table.reserve(31 * MiB, "this chat turn")).toThrow(SessionBudgetError);
  });
});
