// The mock backend's bounds: a request log that keeps the newest entries and counts the dropped ones, and a
// request body limit answered with 413 before any handler (or the log) sees the body.
import { request } from "undici";
import { BackendStatsRecorder, startMockBackend, type MockBackend } from "../../src/backend";
import { loadTokenizer } from "../../src/tokenizer/load";

test("the stats recorder keeps the newest maxLogEntries requests and counts the dropped ones until reset", () => {
  const stats = new BackendStatsRecorder({ maxLogEntries: 3 });
  for (let i = 0; i < 5; i += 1) stats.record("POST", "/generate", JSON.stringify({ i }));
  expect(stats.requestLog).toEqual([{ i: 2 }, { i: 3 }, { i: 4 }]);
  expect(stats.requests.map((entry) => entry.body)).toEqual([{ i: 2 }, { i: 3 }, { i: 4 }]);
  // each body is parsed once, on first read, and is the same object in both views from then on
  expect(stats.requests[0].body).toBe(stats.requestLog[0]);
  stats.record("POST", "/generate", "[1]");
  stats.record("POST", "/generate", "{not json");
  expect(stats.requestLog.slice(-2)).toEqual([{ invalid_body: "[1]" }, { invalid_body: "{not json" }]);
  expect(stats.droppedRequests).toBe(4);
  stats.reset();
  expect([stats.requestLog.length, stats.droppedRequests]).toEqual([0, 0]);
  expect(() => new BackendStatsRecorder({ maxLogEntries: -1 })).toThrow("maxLogEntries must be a non-negative integer, got -1");
  expect(new BackendStatsRecorder().droppedRequests).toBe(0);
});

describe("a loopback mock with small bounds", () => {
  let backend: MockBackend;

  beforeAll(async () => {
    backend = await startMockBackend({
      tokenizer: await loadTokenizer(),
      maxBodyBytes: 4096,
      maxLogEntries: 2,
      process: () => ({ text: "ok", outputIds: [9707], finishReason: "stop" }) as never,
    });
  });
  afterAll(async () => {
    await backend?.close();
  });

  test("a body over the limit is answered 413 and never logged", async () => {
    const reply = await request(`${backend.url}/generate`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "x".repeat(5000) }),
    });
    expect(reply.statusCode).toBe(413);
    // The mock answers in SGLang's error shape, like its other refusals.
    expect(await reply.body.json()).toMatchObject({ object: "error", code: 413, message: "request body of 5011 bytes exceeds the 4096-byte limit" });
    expect(backend.requestLog).toEqual([]);
    expect(backend.droppedRequests).toBe(0);
  });
});
