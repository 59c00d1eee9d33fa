// The v2 samples op charged like a chat turn, over loopback HTTP with explicit small budgets: a reply the budget could
// never hold is a 413, one a full store cannot hold now a 503 with Retry-After, metadata nested deeper than the reply
// can carry a 400; each names its figure and limit, and every stored session reads back byte for byte the same after.
import { createPolicy, startSessionServer, type AnyTrajectoryPolicy, type RunningSessionServer } from "../../src/server";
import { MAX_SAMPLES_METADATA_DEPTH } from "../../src/server/samples-admission";
import { decodeSamplesReply, Sample, WIRE_FIELDS_V2 } from "../../src/wire";
import { call, chat, createSession, rawChatReply, recordingLogger, startRawBackend, type RawBackend } from "./helpers";
import { historyText } from "./support/session-budget-child";

let raw: RawBackend;

beforeAll(async () => {
  raw = await startRawBackend(() => ({ status: 200, body: rawChatReply([9707, 151645]) }));
});

afterAll(async () => {
  await raw.close();
});

async function withServer<T>(maxSessionBytes: number, body: (server: RunningSessionServer) => Promise<T>, policy?: AnyTrajectoryPolicy): Promise<T> {
  const server = await startSessionServer({ version: "v2", backendUrl: raw.url, logger: recordingLogger(), maxSessionBytes, policy });
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

/** A v2 session with `leaves` roots (each first message differs), each of about `bytes` characters of history. */
async function sessionWithLeaves(url: string, leaves: number, bytes: number, seed: number): Promise<string> {
  const id = await createSession(url);
  for (let i = 0; i < leaves; i += 1) {
    const reply = await chat(url, id, { messages: [{ role: "user", content: historyText(seed * 100 + i, bytes) }] });
    expect(reply.status).toBe(200);
  }
  return id;
}

/** Every stored session's GET and samples reply (no metadata), as bytes. */
async function snapshot(url: string, ids: readonly string[]): Promise<Array<[Uint8Array, Uint8Array]>> {
  const out: Array<[Uint8Array, Uint8Array]> = [];
  for (const id of ids) {
    const view = await call("GET", `${url}/sessions/${id}`);
    const samples = await call("POST", `${url}/sessions/${id}/samples`, { max_seq_len: null });
    expect([view.status, samples.status]).toEqual([200, 200]);
    out.push([view.bytes, samples.bytes]);
  }
  return out;
}

const metadataOf = (bytes: number) => ({ blob: "m".repeat(bytes) });

test("a samples request adding more than a quarter of the budget is a 413 naming its size and the limit; nothing stored changes", async () => {
  await withServer(12_000_000, async (server) => {
    const id = await sessionWithLeaves(server.url, 6, 500, 1);
    const other = await sessionWithLeaves(server.url, 1, 500, 2);
    const before = await snapshot(server.url, [id, other]);
    const usage = server.sessionUsage().bytes;

    const refused = await call("POST", `${server.url}/sessions/${id}/samples`, { max_seq_len: null, metadata: metadataOf(1_000_000) });
    expect(refused.status).toBe(413);
    expect(refused.json<{ error: string }>().error).toMatch(
      /^request too large: this samples reply \(6 samples x 1\.0 MiB of request metadata \+ 0\.\d MiB of samples\) needs about 6\.7 MiB for what its request adds, more than 25% of the 11\.4 MiB session budget \(maxSessionBytes \/ --max-session-bytes\) \(2\.9 MiB\), what one request may take/,
    );
    expect(server.sessionUsage().bytes).toBe(usage);
    expect(await snapshot(server.url, [id, other])).toEqual(before);
    // The same metadata on a one-leaf session fits: 2 x 1 MB, under the 2.9 MiB one request may take.
    const small = await call("POST", `${server.url}/sessions/${other}/samples`, { max_seq_len: null, metadata: metadataOf(1_000_000) });
    expect(small.status).toBe(200);
    const decoded = decodeSamplesReply(small.bytes, new Sample(), { fields: WIRE_FIELDS_V2 });
    expect((decoded.samples[0].metadata.blob as string).length).toBe(1_000_000);
  });
});

/**
 * The v2 policy without `storedRecords`: its records keep no texts the store could drop before refusing, so what the
 * store holds is what the test filled in (the built-in policy would make room by dropping them first).
 */
function policyWithoutReclaim(): AnyTrajectoryPolicy {
  const policy: AnyTrajectoryPolicy = { ...createPolicy("v2", { logger: recordingLogger() }) };
  delete policy.storedRecords;
  return policy;
}

test("a samples reply a full store cannot hold now is a 503 with Retry-After naming the budget; a DELETE makes room", async () => {
  await withServer(
    1_500_000,
    async (server) => {
      const id = await sessionWithLeaves(server.url, 4, 2_000, 3);
      const fillers: string[] = [];
      // fill the store to within 0.2 MB of its budget with sessions of ~30 KB history
      while (server.sessionUsage().bytes < 1_300_000) fillers.push(await sessionWithLeaves(server.url, 1, 30_000, 10 + fillers.length));
      const before = await snapshot(server.url, [id, ...fillers]);
      const usage = server.sessionUsage().bytes;

      const body = { max_seq_len: null, metadata: metadataOf(50_000) };
      const refused = await call("POST", `${server.url}/sessions/${id}/samples`, body);
      expect(refused.status).toBe(503);
      expect(refused.headers["retry-after"]).toBe("5");
      expect(refused.json<{ error: string }>().error).toMatch(
        /^session store is full: this samples reply \(4 samples x 0\.0 MiB of request metadata \+ 0\.\d MiB of samples\) needs about 0\.2 MiB, and sessions hold 1\.\d MiB of the 1\.4 MiB session budget/,
      );
      expect(server.sessionUsage().bytes).toBe(usage);
      expect(await snapshot(server.url, [id, ...fillers])).toEqual(before);

      // Deleting fillers frees room at once; the reply's reservation is given back once it is sent.
      for (const gone of fillers.splice(0)) expect((await call("DELETE", `${server.url}/sessions/${gone}`)).status).toBe(204);
      const held = server.sessionUsage().bytes;
      const admitted = await call("POST", `${server.url}/sessions/${id}/samples`, body);
      expect(admitted.status).toBe(200);
      expect(decodeSamplesReply(admitted.bytes, new Sample(), { fields: WIRE_FIELDS_V2 }).samples).toHaveLength(4);
      expect(server.sessionUsage().bytes).toBe(held);
    },
    policyWithoutReclaim(),
  );
});

/** `{"a":{"a":...{}}}`, `depth` levels of objects. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < depth; level += 1) value = { a: value };
  return value;
}

test(`metadata nested deeper than ${MAX_SAMPLES_METADATA_DEPTH} levels is a 400 up front; at the limit the reply decodes`, async () => {
  await withServer(50_000_000, async (server) => {
    const id = await sessionWithLeaves(server.url, 2, 500, 4);
    const before = await snapshot(server.url, [id]);
    for (const depth of [MAX_SAMPLES_METADATA_DEPTH + 1, MAX_SAMPLES_METADATA_DEPTH + 2]) {
      const refused = await call("POST", `${server.url}/sessions/${id}/samples`, { max_seq_len: null, metadata: nested(depth) });
      expect(refused.status).toBe(400);
      expect(refused.json<{ error: string }>().error).toBe(
        "metadata nests more than 125 levels deep: the samples reply carries it 3 levels down in _samples_meta, whose JSON may nest at most 128 levels " +
          "(the samples decoder's limit); send metadata of at most 125 levels",
      );
    }
    expect(await snapshot(server.url, [id])).toEqual(before);
    const deepest = await call("POST", `${server.url}/sessions/${id}/samples`, { max_seq_len: null, metadata: nested(MAX_SAMPLES_METADATA_DEPTH) });
    expect(deepest.status).toBe(200);
    const decoded = decodeSamplesReply(deepest.bytes, new Sample(), { fields: WIRE_FIELDS_V2 });
    expect(decoded.samples).toHaveLength(2);
    expect(decoded.samples[0].metadata.a).toEqual(nested(MAX_SAMPLES_METADATA_DEPTH).a);
  });
});

describe("--session-ttl: idle from the end of the last request", () => {
  test("a chat slower than the TTL keeps its session and its turn; the session expires a TTL after the chat ended", async () => {
    let release: () => void = () => undefined;
    let arrived: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const slow = await startRawBackend(async () => {
      arrived();
      await held; // the reply waits until the test has moved the clock past the TTL
      return { status: 200, body: rawChatReply([9707, 151645]) };
    });
    let now = 1_000_000;
    const logger = { ...recordingLogger(), infos: [] as string[] };
    logger.info = (message: string) => void logger.infos.push(message);
    const server = await startSessionServer({ version: "v2", backendUrl: slow.url, logger, sessionTtlMs: 60_000, clock: () => now });
    try {
      const id = await createSession(server.url);
      const pending = chat(server.url, id, { messages: [{ role: "user", content: "hello" }] });
      await reached;
      now += 120_000; // the chat has now taken twice the TTL
      // another request sweeps idle sessions while the chat is in flight: its session stays
      expect((await call("POST", `${server.url}/sessions`)).status).toBe(200);
      release();
      expect((await pending).status).toBe(200);
      // the next request right after the 200 sweeps again: the session was idle for 0 ms, not 120 s
      expect((await call("POST", `${server.url}/sessions`)).status).toBe(200);
      const view = await call("GET", `${server.url}/sessions/${id}`);
      expect(view.status).toBe(200);
      expect(view.json<{ records: unknown[] }>().records).toHaveLength(1);
      expect((await call("POST", `${server.url}/sessions/${id}/samples`, { max_seq_len: null })).status).toBe(200);
      // idle from the end of that last request (the samples op): gone one TTL later, logged
      now += 59_999;
      expect((await call("GET", `${server.url}/sessions/${id}`)).status).toBe(200);
      now += 60_000;
      expect((await call("GET", `${server.url}/sessions/${id}`)).status).toBe(404);
      expect(logger.infos.some((line) => line.startsWith(`session ${id} expired after 60.0 s idle (session TTL)`))).toBe(true);
    } finally {
      release();
      await server.close();
      await slow.close();
    }
  });
});
