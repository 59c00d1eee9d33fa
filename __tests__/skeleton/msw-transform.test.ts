// Proves the Jest transform settings load msw and its ESM-only dependencies under CommonJS.
import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";

test("msw intercepts fetch inside Jest with the shipped transform settings", async () => {
  const server = setupServer(http.get("http://example.test/ping", () => HttpResponse.json({ pong: true })));
  server.listen({ onUnhandledRequest: "error" });
  try {
    const reply = await fetch("http://example.test/ping");
    expect(await reply.json()).toEqual({ pong: true });
  } finally {
    server.close();
  }
});
