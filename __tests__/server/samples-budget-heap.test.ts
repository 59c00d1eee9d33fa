// The crashes of issue 44 against a real small heap, each server in a child process (slow tier): the v2 samples op
// amplifying its metadata into every leaf, and an explicit budget above the heap. Each is refused (413 or 503) with the
// server alive, and every stored session's GET and samples reply byte for byte what it was before.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { call, chat } from "./helpers";
import { historyText } from "./support/session-budget-child";

jest.setTimeout(900_000);

const ROOT = path.join(__dirname, "..", "..");
const CHILD = path.join(__dirname, "support", "session-budget-child.ts");

interface ServedChild {
  url: string;
  child: ChildProcess;
  alive: () => boolean;
  exited: Promise<number | null>;
  stderr: () => string;
}

/** A session server in a child process under `--max-old-space-size=heapMiB`, with `options` for startSessionServer. */
function serveChild(heapMiB: number, options: Record<string, unknown> = {}): Promise<ServedChild> {
  return new Promise((resolve, reject) => {
    const args = [`--max-old-space-size=${heapMiB}`, "-r", "ts-node/register/transpile-only", CHILD, "serve", "v2", JSON.stringify(options)];
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, TS_NODE_TRANSPILE_ONLY: "1" } });
    let out = "";
    let err = "";
    let alive = true;
    const exited = new Promise<number | null>((done) =>
      child.on("exit", (code, signal) => {
        alive = false;
        done(code ?? (signal === null ? null : -1));
      }),
    );
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) resolve({ url: (JSON.parse(out.split("\n")[0]) as { url: string }).url, child, alive: () => alive, exited, stderr: () => err });
    });
    void exited.then((code) => reject(new Error(`child exited ${code} before listening: ${err}`)));
  });
}

async function stop(served: ServedChild): Promise<void> {
  served.child.kill("SIGTERM");
  await served.exited;
}

/** A v2 session whose tree has `leaves` roots of about `bytes` characters of history each. */
async function sessionWithLeaves(url: string, leaves: number, bytes: number, seed: number): Promise<string> {
  const created = await call("POST", `${url}/sessions`);
  expect(created.status).toBe(200);
  const id = created.json<{ session_id: string }>().session_id;
  for (let i = 0; i < leaves; i += 1)
    expect((await chat(url, id, { messages: [{ role: "user", content: historyText(seed * 1000 + i, bytes) }] })).status).toBe(200);
  return id;
}

/** Every session's GET and samples reply as bytes. */
async function snapshot(url: string, ids: readonly string[]): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (const id of ids) {
    const view = await call("GET", `${url}/sessions/${id}`);
    const samples = await call("POST", `${url}/sessions/${id}/samples`, { max_seq_len: null });
    expect([view.status, samples.status]).toEqual([200, 200]);
    out.push(Buffer.from(view.bytes), Buffer.from(samples.bytes));
  }
  return out;
}

/** A samples body whose metadata is one string of `bytes` characters. */
const samplesBody = (bytes: number) => JSON.stringify({ max_seq_len: null, metadata: { blob: "m".repeat(bytes) } });

const TOO_LARGE =
  /^\{"error":"request too large: this samples reply \(\d+ samples x \d+\.\d MiB of request metadata \+ \d+\.\d MiB of samples\) needs about \d+\.\d MiB for what its request adds, more than 25% of the default session budget of \d+\.\d MiB/;
const FULL = /^\{"error":"session store is full: this samples reply \(\d+ samples x \d+\.\d MiB of request metadata/;

test("160 MB heap, --max-session-bytes 1 GiB: the heap guard still answers 503 before the heap runs out, a 12 x 5 MB samples reply too; nothing stored changes", async () => {
  const served = await serveChild(160, { maxSessionBytes: 1024 * 1024 * 1024 });
  try {
    const tree = await sessionWithLeaves(served.url, 12, 2_000, 1);
    const ids = [tree];
    let refusal: { status: number; text: string } | null = null;
    // sessions of ~200 KB history until the server refuses one (the budget is far above the heap: the guard decides)
    for (let i = 0; i < 400 && refusal === null; i += 1) {
      const created = await call("POST", `${served.url}/sessions`);
      if (created.status !== 200) {
        refusal = created;
        break;
      }
      const id = created.json<{ session_id: string }>().session_id;
      const reply = await chat(served.url, id, { messages: [{ role: "user", content: historyText(100 + i, 200_000) }] });
      if (reply.status !== 200) {
        refusal = reply;
        await call("DELETE", `${served.url}/sessions/${id}`);
        break;
      }
      ids.push(id);
    }
    expect(served.alive()).toBe(true);
    expect(refusal).not.toBeNull();
    expect(refusal!.status).toBe(503);
    expect(refusal!.text).toMatch(
      /^\{"error":"session store is full: .* past the heap guard of the 1024\.0 MiB session budget \(\d+\.\d MiB, \d+% of the \d+\.\d MiB heap limit/,
    );
    expect(ids.length).toBeGreaterThan(5);
    const before = await snapshot(served.url, ids);

    // too large for what the heap guard leaves any one request (413), or for what the loaded heap has left (503)
    const full = await call("POST", `${served.url}/sessions/${tree}/samples`, samplesBody(5_000_000));
    expect([413, 503]).toContain(full.status);
    if (full.status === 503) {
      expect(full.headers["retry-after"]).toBe("5");
      expect(full.text).toMatch(FULL);
    } else
      expect(full.text).toMatch(
        /^\{"error":"request too large: this samples reply \(12 samples x 4\.8 MiB of request metadata .* more than the heap guard leaves any one request/,
      );
    // eight at once: answered or refused as the heap allows, never a crash
    const burst = await Promise.all(Array.from({ length: 8 }, () => call("POST", `${served.url}/sessions/${tree}/samples`, samplesBody(900_000))));
    for (const reply of burst) expect([200, 503]).toContain(reply.status);

    expect(served.alive()).toBe(true);
    expect(await snapshot(served.url, ids)).toEqual(before);
  } finally {
    await stop(served);
  }
  if (served.stderr().includes("heap out of memory")) throw new Error(`the server ran out of heap: ${served.stderr().slice(-500)}`);
});

test("256 MB heap: 40 leaves x 3 MB of metadata is a 413; the server lives, stored sessions unchanged", async () => {
  const served = await serveChild(256);
  try {
    const tree = await sessionWithLeaves(served.url, 40, 1_000, 2);
    const other = await sessionWithLeaves(served.url, 2, 50_000, 3);
    const before = await snapshot(served.url, [tree, other]);
    const reply = await call("POST", `${served.url}/sessions/${tree}/samples`, samplesBody(3_000_000));
    expect(reply.status).toBe(413);
    expect(reply.text).toMatch(TOO_LARGE);
    // 5 MB of metadata on the two-leaf session (3 x 5 MB) is within what one request may take: answered
    const other12 = await call("POST", `${served.url}/sessions/${other}/samples`, samplesBody(5_000_000));
    expect(other12.status).toBe(200);
    expect(served.alive()).toBe(true);
    expect(await snapshot(served.url, [tree, other])).toEqual(before);
  } finally {
    await stop(served);
  }
});
