// The session budget against the real heap, each server in a child process (slow tier: about a minute):
// the store's byte accounting matches measured heap growth, and under a 160 MB heap each version answers 503 before it
// dies, keeps serving what it holds and accepts new sessions after deletes.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import type { SessionServerVersion } from "../../src/server";
import { call, chat } from "./helpers";
import { historyText } from "./support/session-budget-child";

jest.setTimeout(300_000);

const ROOT = path.join(__dirname, "..", "..");
const CHILD = path.join(__dirname, "support", "session-budget-child.ts");

function nodeArgs(flags: string[], args: string[]): string[] {
  return [...flags, "-r", "ts-node/register/transpile-only", CHILD, ...args];
}

/** Runs the child to completion and returns its last stdout line as JSON. */
function runChild(flags: string[], args: string[]): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs(flags, args), { cwd: ROOT, env: { ...process.env, TS_NODE_TRANSPILE_ONLY: "1" } });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`child exited ${code}: ${err}`));
      else resolve(JSON.parse(out.trim().split("\n").at(-1)!) as Record<string, number>);
    });
  });
}

describe("byte accounting against heap growth (--expose-gc child)", () => {
  // What DELETE gives back to the heap after a full collection, against what the accounting frees.
  test.each([
    ["v1", 8, 1, 100_000],
    ["v2", 6, 2, 40_000],
    ["v1", 1000, 1, 100],
    ["v2", 1000, 1, 100],
  ] as const)("%s: %i sessions of %i turns of %i bytes", async (version, sessions, turns, bytes) => {
    const result = await runChild(["--expose-gc"], ["measure", version, String(sessions), String(turns), String(bytes)]);
    const ratio = result.accountedFreed / result.heapFreed;
    expect(ratio).toBeGreaterThan(0.8);
    expect(ratio).toBeLessThan(1.25);
  });
});

interface ServedChild {
  url: string;
  budgetBytes: number;
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr: () => string;
}

function serveChild(version: SessionServerVersion, heapMiB: number): Promise<ServedChild> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs([`--max-old-space-size=${heapMiB}`], ["serve", version]), {
      cwd: ROOT,
      env: { ...process.env, TS_NODE_TRANSPILE_ONLY: "1" },
    });
    let out = "";
    let err = "";
    const exited = new Promise<number | null>((done) => child.on("exit", (code, signal) => done(code ?? (signal === null ? null : -1))));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) {
        const info = JSON.parse(out.split("\n")[0]) as { url: string; budgetBytes: number };
        resolve({ ...info, child, exited, stderr: () => err });
      }
    });
    void exited.then((code) => reject(new Error(`child exited ${code} before listening: ${err}`)));
  });
}

describe.each(["v1", "v2"] as const)("%s under a 160 MB heap (child process)", (version) => {
  test("answers 503 before it dies, keeps serving what it holds, accepts new sessions after deletes", async () => {
    const served = await serveChild(version, 160);
    let alive = true;
    void served.exited.then(() => (alive = false));
    try {
      const held: Array<{ id: string; messages: Array<Record<string, unknown>> }> = [];
      let refusal: { status: number; retryAfter: string | undefined; error: string } | null = null;
      for (let i = 0; i < 400 && refusal === null; i += 1) {
        const created = await call("POST", `${served.url}/sessions`);
        if (created.status !== 200) {
          refusal = { status: created.status, retryAfter: created.headers["retry-after"], error: created.text };
          break;
        }
        const id = created.json<{ session_id: string }>().session_id;
        const messages: Array<Record<string, unknown>> = [{ role: "user", content: historyText(i, 200_000) }];
        const reply = await chat(served.url, id, { messages });
        if (reply.status !== 200) {
          refusal = { status: reply.status, retryAfter: reply.headers["retry-after"], error: reply.text };
          await call("DELETE", `${served.url}/sessions/${id}`);
          break;
        }
        held.push({ id, messages: [...messages, reply.json<{ choices: Array<{ message: Record<string, unknown> }> }>().choices[0].message] });
      }
      expect(alive).toBe(true);
      expect(refusal).not.toBeNull();
      expect(refusal!.status).toBe(503);
      expect(refusal!.retryAfter).toBe("5");
      expect(refusal!.error).toMatch(/^\{"error":"session store is full: .*the default session budget/);
      expect(held.length).toBeGreaterThan(5);

      // Everything it holds still answers, with its stored turn intact.
      for (const { id } of held) {
        const view = await call("GET", `${served.url}/sessions/${id}`);
        expect(view.status).toBe(200);
        expect(view.json<{ records: unknown[] }>().records).toHaveLength(1);
      }
      const samples = await call("POST", `${served.url}/sessions/${held[0].id}/samples`, { max_seq_len: null });
      expect(samples.status).toBe(200);
      const next = { messages: [...held[0].messages, { role: "user", content: "one more" }] };
      let more = await chat(served.url, held[0].id, next);
      if (more.status !== 200) {
        // The room kept for stored sessions' turns (5% of the byte budget) can already be taken by the first turns of
        // the last sessions admitted, whose turn is only counted once it arrives: then the turn is refused like any
        // growth, naming the budget, with the session intact, and one DELETE makes room for it.
        expect(more.status).toBe(503);
        expect(more.text).toMatch(/^\{"error":"session store is full: this chat turn needs about/);
        expect((await call("GET", `${served.url}/sessions/${held[0].id}`)).json<{ records: unknown[] }>().records).toHaveLength(1);
        const { id } = held.splice(1, 1)[0];
        expect((await call("DELETE", `${served.url}/sessions/${id}`)).status).toBe(204);
        more = await chat(served.url, held[0].id, next);
      }
      expect(more.status).toBe(200);

      // Deleting frees room at once: after at most half of them, new sessions are accepted and can take a full turn.
      let created = await call("POST", `${served.url}/sessions`);
      let deleted = 0;
      while (created.status === 503 && deleted < held.length / 2) {
        const { id } = held.splice(1, 1)[0];
        expect((await call("DELETE", `${served.url}/sessions/${id}`)).status).toBe(204);
        deleted += 1;
        created = await call("POST", `${served.url}/sessions`);
      }
      expect(created.status).toBe(200);
      const id = created.json<{ session_id: string }>().session_id;
      expect((await chat(served.url, id, { messages: [{ role: "user", content: historyText(9999, 200_000) }] })).status).toBe(200);
      expect((await call("GET", `${served.url}/sessions/${held[0].id}`)).json<{ records: unknown[] }>().records).toHaveLength(2);
      expect(alive).toBe(true);
    } finally {
      served.child.kill("SIGTERM");
      await served.exited;
    }
    if (!alive && served.stderr().includes("heap out of memory")) throw new Error(`the server ran out of heap: ${served.stderr().slice(-500)}`);
  });
});
