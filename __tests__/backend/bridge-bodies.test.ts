// The loopback bridge carries bodies byte for byte both ways: binary and UTF-8 request bodies, with and without a
// content type, and Responses built from a known text (written directly) alike with ones read through their stream.
import { http, HttpResponse } from "msw";
import { Pool } from "undici";
import { serveHandlers, type HandlerBridge } from "../../src/backend/http-bridge";
import { jsonResponse } from "../../src/backend/errors";
import { knownBodyText, textResponse } from "../../src/backend/response-bodies";

let bridge: HandlerBridge;
let pool: Pool;

beforeAll(async () => {
  bridge = await serveHandlers([
    // Echoes the request: its content type (or "none") in a header, its bytes as the body.
    http.post("*/echo", async ({ request }) => {
      const bytes = new Uint8Array(await request.arrayBuffer());
      return new HttpResponse(bytes, { status: 200, headers: { "x-seen-content-type": request.headers.get("content-type") ?? "none" } });
    }),
    http.get("*/json", () => jsonResponse(200, { text: "Zürich ☀ 東京", n: -0.5 })),
    http.get("*/text", () => textResponse("data: 雪\n\n", { status: 201, headers: { "content-type": "text/event-stream" } })),
    http.get("*/stream", () => new HttpResponse("data: 雪\n\n", { status: 201, headers: { "content-type": "text/event-stream" } })),
  ]);
  pool = new Pool(bridge.url);
});

afterAll(async () => {
  await pool.close();
  await bridge.close();
});

async function post(body: Buffer, headers: Record<string, string>): Promise<{ bytes: Buffer; seen: string }> {
  const reply = await pool.request({ path: "/echo", method: "POST", body, headers });
  const bytes = Buffer.from(await reply.body.arrayBuffer());
  return { bytes, seen: String(reply.headers["x-seen-content-type"]) };
}

async function get(path: string): Promise<{ status: number; headers: Record<string, unknown>; bytes: Buffer }> {
  const reply = await pool.request({ path, method: "GET" });
  return { status: reply.statusCode, headers: reply.headers, bytes: Buffer.from(await reply.body.arrayBuffer()) };
}

test("request bodies reach the handler byte for byte, UTF-8 or not, and no content type is invented", async () => {
  const utf8 = Buffer.from(JSON.stringify({ city: "Zürich", emoji: "☀", bom: "\uFEFF" }), "utf8");
  const binary = Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x7b]); // not UTF-8
  expect(await post(utf8, { "content-type": "application/json" })).toEqual({ bytes: utf8, seen: "application/json" });
  expect(await post(binary, { "content-type": "application/json" })).toEqual({ bytes: binary, seen: "application/json" });
  expect(await post(utf8, {})).toEqual({ bytes: utf8, seen: "none" });
  expect(await post(binary, {})).toEqual({ bytes: binary, seen: "none" });
});

test("a Response built from a known text goes out with the same bytes and length as one read through its stream", async () => {
  const direct = await get("/text");
  const streamed = await get("/stream");
  expect(direct.bytes).toEqual(Buffer.from("data: 雪\n\n", "utf8"));
  expect(direct.bytes).toEqual(streamed.bytes);
  expect(direct.status).toBe(201);
  expect(direct.headers["content-type"]).toBe("text/event-stream");
  expect(direct.headers["content-length"]).toBe(String(direct.bytes.length));

  const json = await get("/json");
  expect(json.bytes.toString("utf8")).toBe('{"text":"Zürich ☀ 東京","n":-0.5}');
  expect(json.headers["content-length"]).toBe(String(json.bytes.length));
  expect(json.headers["content-type"]).toBe("application/json");
});

test("knownBodyText knows only Responses made by textResponse (jsonResponse included), and they stay readable", async () => {
  const made = jsonResponse(200, { a: 1 });
  expect(knownBodyText(made)).toBe('{"a":1}');
  expect(await made.text()).toBe('{"a":1}');
  expect(knownBodyText(new Response('{"a":1}'))).toBeUndefined();
});
