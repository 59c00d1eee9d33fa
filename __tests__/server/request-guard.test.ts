// The browser-facing checks and the redaction helpers, as pure functions: which Host values a loopback server
// answers, which POST bodies count as JSON, and what printed URLs and error texts keep.
import { allowedHostsFor, guardRequest, isJsonContentType, isLoopbackHost } from "../../src/server/request-guard";
import { redactAbsolutePaths, redactUrlCredentials } from "../../src/server/redaction";

test("loopback addresses and the Host values a loopback-bound server answers", () => {
  expect(["127.0.0.1", "127.3.4.5", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"].every(isLoopbackHost)).toBe(true);
  expect(["0.0.0.0", "10.0.0.1", "::", "example.com"].some(isLoopbackHost)).toBe(false);
  expect([...allowedHostsFor("127.0.0.1", 8001)!]).toEqual(["127.0.0.1:8001", "localhost:8001", "[::1]:8001"]);
  expect(allowedHostsFor("0.0.0.0", 8001)).toBeNull();
});

test("guardRequest refuses foreign hosts (403) and non-JSON POST bodies (415), and lets the rest through", () => {
  const allowed = allowedHostsFor("127.0.0.1", 8001);
  expect(guardRequest("GET", { host: "127.0.0.1:8001" }, allowed)).toBeNull();
  expect(guardRequest("GET", { host: "LOCALHOST:8001" }, allowed)).toBeNull();
  expect(guardRequest("GET", {}, allowed)).toBeNull();
  expect(guardRequest("GET", { host: "rebind.example:8001" }, allowed)?.status).toBe(403);
  expect(guardRequest("GET", { host: "rebind.example:8001" }, null)).toBeNull();
  expect(guardRequest("POST", { host: "127.0.0.1:8001" }, allowed)).toBeNull();
  expect(guardRequest("POST", { host: "127.0.0.1:8001", "content-length": "0" }, allowed)).toBeNull();
  expect(guardRequest("POST", { host: "127.0.0.1:8001", "content-length": "2", "content-type": "application/json; charset=utf-8" }, allowed)).toBeNull();
  expect(guardRequest("POST", { host: "127.0.0.1:8001", "transfer-encoding": "chunked" }, allowed)).toEqual({
    status: 415,
    message: "POST bodies must be sent with content-type application/json, got null",
  });
  expect(guardRequest("POST", { "content-length": "2", "content-type": "application/x-www-form-urlencoded" }, allowed)?.status).toBe(415);
  expect(isJsonContentType("application/vnd.api+json")).toBe(true);
  expect(isJsonContentType("text/plain")).toBe(false);
});

test("printed URLs lose their credentials; error texts lose absolute paths but keep URLs and route paths' hosts", () => {
  expect(redactUrlCredentials("http://user:secret@10.0.0.2:30000/v1")).toBe("http://***@10.0.0.2:30000/v1");
  expect(redactUrlCredentials("http://10.0.0.2:30000/a@b")).toBe("http://10.0.0.2:30000/a@b");
  expect(redactAbsolutePaths("rendering chat template /opt/app/node_modules/pkg/dist/qwen3.jinja failed")).toBe("rendering chat template qwen3.jinja failed");
  expect(redactAbsolutePaths("at f (/srv/x/y.js:1:2)")).toBe("at f (y.js:1:2)");
  expect(redactAbsolutePaths("connect to http://127.0.0.1:1/v1/chat failed")).toBe("connect to http://127.0.0.1:1/v1/chat failed");
  // The server's own routes are not filesystem paths: every error body is redacted, so they must survive it.
  expect(redactAbsolutePaths("delete sessions (DELETE /sessions/{id}) or raise the budget")).toBe(
    "delete sessions (DELETE /sessions/{id}) or raise the budget",
  );
  expect(redactAbsolutePaths("not found: /v1/chat/completions")).toBe("not found: /v1/chat/completions");
  expect(redactAbsolutePaths(`cannot read ${__filename}`)).toBe("cannot read request-guard.test.ts");
  expect(redactAbsolutePaths("C:\\Users\\me\\proj\\hooks.ts failed")).toBe("hooks.ts failed");
});
