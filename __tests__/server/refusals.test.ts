// Every refused request leaves a session with history exactly as it was (GET before == GET after), v1 and v2.
// Real loopback HTTP against a scripted raw backend that can answer well or break each upstream rule on demand.
import { startSessionServer, type RunningSessionServer, type SessionServerVersion } from "../../src/server";
import type { ChatMessage } from "../../src/tokenizer/types";
import { assistantOf, call, chat, createSession, getSession, rawChatReply, recordingLogger, startRawBackend, type RawBackend } from "./helpers";

let mode = "ok";
let raw: RawBackend;
const servers = {} as Record<SessionServerVersion, RunningSessionServer>;

beforeAll(async () => {
  raw = await startRawBackend(() => {
    switch (mode) {
      case "500":
        return { status: 500, body: JSON.stringify({ object: "error", message: "engine exploded", code: 500 }) };
      case "no-meta":
        return { status: 200, body: rawChatReply([1, 2], { meta: null }) };
      case "null-content":
        return { status: 200, body: rawChatReply([1, 2], { content: null }) };
      case "length-mismatch":
        return { status: 200, body: rawChatReply([1, 2, 3], { completionTokens: 2 }) };
      case "not-json":
        return { status: 200, body: "<html>oops</html>" };
      default:
        return { status: 200, body: rawChatReply([9707, 151645]) };
    }
  });
  for (const version of ["v1", "v2"] as const) {
    servers[version] = await startSessionServer({ version, backendUrl: raw.url, logger: recordingLogger() });
  }
});

afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.close()));
  await raw.close();
});

const U1: ChatMessage = { role: "user", content: "first question" };
const U2: ChatMessage = { role: "user", content: "second question" };

/** A session with two generated turns; returns its id and the full history. */
async function twoTurns(base: string): Promise<{ id: string; history: ChatMessage[] }> {
  const id = await createSession(base);
  const r1 = await chat(base, id, { messages: [U1] });
  const r2 = await chat(base, id, { messages: [U1, assistantOf(r1), U2] });
  expect([r1.status, r2.status]).toEqual([200, 200]);
  return { id, history: [U1, assistantOf(r1), U2, assistantOf(r2)] };
}

describe.each(["v1", "v2"] as const)("%s", (version) => {
  test("malformed requests and bad roles are refused and change nothing", async () => {
    const base = servers[version].url;
    const { id, history } = await twoTurns(base);
    const before = await getSession(base, id);
    expect(before.records).toHaveLength(2);
    const chatUrl = `${base}/sessions/${id}/v1/chat/completions`;
    const refusals: Array<[number, () => ReturnType<typeof call>]> = [
      [400, () => call("POST", chatUrl, "{not json")],
      [400, () => call("POST", chatUrl, "[1]")],
      [400, () => chat(base, id, { messages: [...history, U2], chat_template_kwargs: ["x"] })],
      [400, () => chat(base, id, { messages: [...history, U2], chat_template_kwargs: { clear_thinking: true } })],
      [400, () => chat(base, id, {})],
      [400, () => chat(base, id, { messages: [...history, { content: "no role" }] })],
      [400, () => chat(base, id, { messages: [...history, U2], tools: "weather" })],
      [400, () => chat(base, id, { messages: [...history, { role: "developer", content: "x" }] })],
      [400, () => call("POST", `${base}/sessions/${id}/samples`, { max_seq_len: 2.5 })],
      [400, () => call("POST", `${base}/sessions/${id}/samples`, "{")],
      [405, () => call("PUT", `${base}/sessions/${id}`)],
    ];
    if (version === "v1") refusals.push([400, () => chat(base, id, { messages: [{ role: "user", content: "another opening" }] })]);
    const requestsBefore = raw.requests.length;
    for (const [status, send] of refusals) {
      const reply = await send();
      expect(reply.status).toBe(status);
      expect(reply.headers["content-type"]).toBe("application/json");
      expect(typeof reply.json<{ error: unknown }>().error).toBe("string");
      expect(await getSession(base, id)).toEqual(before);
    }
    expect(raw.requests.length).toBe(requestsBefore);
  });

  test.each([
    ["500", 500],
    ["no-meta", 502],
    ["null-content", 502],
    ["length-mismatch", 502],
    ["not-json", 502],
  ])("an upstream %s on an appended turn is %d and records nothing", async (which, status) => {
    const base = servers[version].url;
    const { id, history } = await twoTurns(base);
    const before = await getSession(base, id);
    mode = which;
    try {
      const reply = await chat(base, id, { messages: [...history, { role: "user", content: "third" }], stream: true });
      expect(reply.status).toBe(status);
      expect(reply.headers["content-type"]).toBe("application/json");
    } finally {
      mode = "ok";
    }
    expect(await getSession(base, id)).toEqual(before);
    const next = await chat(base, id, { messages: [...history, { role: "user", content: "third" }] });
    expect(next.status).toBe(200);
    expect((await getSession(base, id)).records).toHaveLength(3);
  });
});

test("v2 tree rows carry each node's record time, span and size", async () => {
  const base = servers.v2.url;
  const { id } = await twoTurns(base);
  const view = await getSession(base, id);
  const rows = view.metadata.tree.nodes as Array<{ committed_at: number; completion_span: [number, number]; num_tokens: number; response_id: string }>;
  rows.forEach((row, i) => {
    const record = view.records[i];
    expect(row.committed_at).toBe(record.timestamp);
    expect(row.completion_span).toEqual([record.request.input_ids.length, record.request.input_ids.length + 2]);
    expect(row.num_tokens).toBe(row.completion_span[1]);
    expect(row.response_id).toBe(record.response.id);
  });
  expect(rows[1].num_tokens).toBe((view.metadata.accumulated_token_ids as number[]).length);
});
