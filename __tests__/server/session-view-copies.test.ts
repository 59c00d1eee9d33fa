// GET /sessions/{id} copies each record's request and response text instead of spelling them again: over real HTTP,
// the real tokenizer and a recording proxy in front of the mock (its replies as written, or re-spelled with spaces and
// ensure_ascii), the view's bytes must be the reference writer's spelling of what was sent and received.
// mirrors miles/rollout/session/core.py::_render_json (the GET view) and core.py::chat_completions (the record).
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { echoScript, startMockBackend, type MockBackend } from "../../src/backend";
import { startSessionServer, type RunningSessionServer } from "../../src/server/session-server";
import { MAX_JSON_DEPTH } from "../../src/wire/json-depth";
import { dumpsPy, dumpsPyWriter, parsePyJson, parsePyJsonBytes, PY_DEFAULT_JSON, PY_RESPONSE_JSON } from "../../src/wire/py-json";
import { compactFromDefaultSpelling } from "../../src/wire/py-json-compact";
import { startForwardingProxy } from "./support/forwarding-proxy";
import { call, createSession } from "./v2/support/harness";

/** One upstream exchange as the proxy saw it: the body the session server sent, the bytes it got back. */
interface Exchange {
  requestText: string;
  replyBytes: Buffer;
}

/** A loopback proxy to the backend that records every chat exchange and, when `respell` is on, re-spells replies. */
interface RecordingProxy {
  url: string;
  exchanges: Exchange[];
  respell: boolean;
  close(): Promise<void>;
}

async function startRecordingProxy(backendUrl: string): Promise<RecordingProxy> {
  const proxy: RecordingProxy = { url: "", exchanges: [], respell: false, close: async () => undefined };
  const forwarding = await startForwardingProxy(backendUrl, (body, status, replyBytes) => {
    if (status !== 200) return undefined;
    // the same reply in Python's default spelling: same values, not the compact text
    const bytes = proxy.respell ? Buffer.from(dumpsPy(parsePyJson(replyBytes.toString("utf8")), PY_DEFAULT_JSON)) : replyBytes;
    proxy.exchanges.push({ requestText: body.toString("utf8"), replyBytes: bytes });
    return bytes;
  });
  proxy.url = forwarding.url;
  proxy.close = forwarding.close;
  return proxy;
}

let backend: MockBackend;
let proxy: RecordingProxy;
const servers: Partial<Record<"v1" | "v2", RunningSessionServer>> = {};

beforeAll(async () => {
  backend = await startMockBackend({ process: echoScript });
  proxy = await startRecordingProxy(backend.url);
  for (const version of ["v1", "v2"] as const) {
    servers[version] = await startSessionServer({
      version,
      backendUrl: proxy.url,
      chatTemplateKwargs: { enable_thinking: false },
      logger: { warn: () => undefined },
    });
  }
});
afterAll(async () => {
  for (const server of Object.values(servers)) await server?.close();
  await proxy.close();
  await backend.close();
});

/** The reference: the view with each record's request and response spelled from what the proxy saw, by the reference writer. */
function referenceView(viewText: string, exchanges: Exchange[]): string {
  const view = parsePyJson(viewText) as { records: Array<Record<string, unknown>> };
  expect(view.records).toHaveLength(exchanges.length);
  const records = view.records.map((record, i) => ({
    ...record,
    request: parsePyJson(exchanges[i].requestText),
    response: parsePyJson(exchanges[i].replyBytes.toString("utf8")),
  }));
  return dumpsPyWriter({ ...view, records }, PY_RESPONSE_JSON);
}

const USER_TURNS = ["What's the weather in Paris?", "And in Zürich — °C please", "Thanks, that's all: bye"];

describe.each([
  ["v1", false, false],
  ["v1", true, false],
  ["v1", false, true],
  ["v1", true, true],
  ["v2", false, false],
  ["v2", true, false],
  ["v2", false, true],
  ["v2", true, true],
] as const)("%s, streamed %s, replies re-spelled %s", (version, stream, respell) => {
  test("the session view and each reply are the reference's bytes", async () => {
    const base = servers[version]?.url as string;
    proxy.respell = respell;
    proxy.exchanges = [];
    const id = await createSession(base);
    const messages: Array<Record<string, unknown>> = [{ role: "system", content: 'You are terse, and answer with facts: {"json": true}.' }];
    for (const userTurn of USER_TURNS) {
      messages.push({ role: "user", content: userTurn });
      const reply = await call("POST", `${base}/sessions/${id}/v1/chat/completions`, { messages, stream, temperature: 1.0 });
      expect([reply.status, reply.status === 200 ? "" : reply.text]).toEqual([200, ""]);
      const sent = proxy.exchanges[proxy.exchanges.length - 1];
      if (stream) {
        expect(reply.contentType).toContain("text/event-stream");
      } else {
        // the reply to the client: the backend's text itself when it was compact already, else spelled anew
        expect(reply.text).toBe(dumpsPyWriter(parsePyJson(sent.replyBytes.toString("utf8")), PY_RESPONSE_JSON));
      }
      const assistant = (parsePyJson(sent.replyBytes.toString("utf8")) as { choices: Array<{ message: Record<string, unknown> }> }).choices[0].message;
      messages.push({ role: "assistant", content: assistant.content });
    }
    const first = await call("GET", `${base}/sessions/${id}`);
    expect(first.status).toBe(200);
    expect(first.text).toBe(referenceView(first.text, proxy.exchanges));
    // written again from the texts kept by then: the same bytes
    expect((await call("GET", `${base}/sessions/${id}`)).text).toBe(first.text);

    // Both ways were taken: the mock's replies are kept as they are (re-spelled ones are not), and the request
    // bodies' compact text is derived except where a non-ASCII character was escaped for the backend.
    const keptReplies = proxy.exchanges.map((e) => parsePyJsonBytes(e.replyBytes, MAX_JSON_DEPTH, { keepSpelling: true }).spelled !== undefined);
    expect(keptReplies).toEqual(proxy.exchanges.map(() => !respell));
    const derived = proxy.exchanges.map((e) => compactFromDefaultSpelling(e.requestText) !== undefined);
    expect(derived).toEqual([true, false, false]);
  });
});
